"""The asyncio driver: one clock, one line, one core — on virtual time with an in-memory line."""

import asyncio

import numpy as np
import pytest

from tests.fakes import plan, reference, tone, turn
from voice.app.run.driver import _Track, run_call
from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES
from voice.core.call import AssistantAudio, CallCore, LineInput, PlayoutMark
from voice.core.clock import FrameTicker, VirtualClock
from voice.errors import LineError
from voice.lines.line import CallStart
from voice.lines.memory import MemoryLine


async def test_a_call_runs_on_virtual_time_and_sends_one_frame_per_tick():
    core = CallCore(plan(turn(0), turn(1)))
    line = MemoryLine(reference())
    clock = VirtualClock()
    trace = await run_call(core, line, clock, CallStart("c", {"id": "d"}))
    assert trace.outcome.reason == "completed"
    n_frames = len(line.sent)
    assert len(trace.caller) == len(trace.heard) == n_frames * FRAME_SAMPLES
    assert clock.now_ns() == n_frames * 20_000_000  # exactly real time, never faster
    assert line.hangup_reason == "completed"
    assert trace.pacing_late_ms[2] == 0.0


class _NeverAnswers:
    async def open(self, start: CallStart) -> None:
        await asyncio.sleep(3600)

    async def send(self, pcm) -> None: ...
    async def recv(self) -> LineInput: ...  # type: ignore[empty-body]
    async def played(self, marks: tuple[str, ...]) -> None: ...
    async def hangup(self, reason: str) -> None: ...
    async def close(self) -> None: ...


async def test_an_assistant_that_never_answers_the_connect_is_a_line_error():
    with pytest.raises(LineError, match="did not answer"):
        await run_call(
            CallCore(plan(turn(0))), _NeverAnswers(), VirtualClock(), CallStart("c"), connect_timeout_s=0.05
        )


async def test_every_frames_pacing_lateness_is_kept_for_aggregation():
    core = CallCore(plan(turn(0)))
    line = MemoryLine(reference())
    trace = await run_call(core, line, VirtualClock(), CallStart("c", {"id": "d"}))
    assert len(trace.pacing_late_ns) == len(line.sent)
    assert trace.pacing_late_ns.dtype == np.int64 and not trace.pacing_late_ns.any()


async def test_calls_sharing_a_frame_ticker_each_run_in_real_time_on_their_own_schedule():
    base = VirtualClock()
    ticker = FrameTicker(base)

    async def one(delay_ns: int, turns: int):
        await base.sleep_until(delay_ns)
        line = MemoryLine(reference())
        start = ticker.now_ns()
        trace = await run_call(CallCore(plan(*(turn(i) for i in range(turns)))), line, ticker, CallStart("c"))
        return trace, line, start

    results = await asyncio.gather(one(0, 2), one(7_000_000, 1), one(13_000_000, 3))
    for trace, line, start in results:
        assert trace.outcome.reason == "completed"
        assert len(trace.caller) == len(trace.heard) == len(line.sent) * FRAME_SAMPLES
        assert (trace.pacing_late_ns >= 0).all()  # no frame before its deadline
        assert base.now_ns() >= start + len(line.sent) * 20_000_000  # never faster than real time


async def test_recorded_channels_grow_past_their_first_allocation():
    track = _Track(capacity=500)
    for k in range(4):
        track.append(np.full(320, k, dtype=np.int16))
    pcm = track.pcm()
    assert len(pcm) == 1280 and list(pcm[::320]) == [0, 1, 2, 3]


class _GreetsWithAMark:
    def on_start(self, start: CallStart) -> list[LineInput]:
        return [AssistantAudio(tone(1000)), PlayoutMark("greeted")]

    def on_frame(self, pcm) -> list[LineInput]:
        return []


class _MarkLine(MemoryLine):
    """Notes how many caller frames had been sent when each mark was reported played."""

    def __init__(self) -> None:
        super().__init__(_GreetsWithAMark())
        self.played_after: list[tuple[int, tuple[str, ...]]] = []

    async def played(self, marks: tuple[str, ...]) -> None:
        self.played_after.append((len(self.sent), marks))


async def test_played_marks_are_handed_to_the_line_before_the_frame_that_follows_their_audio():
    line = _MarkLine()
    core = CallCore(plan(turn(0), response_timeout_ms=500, max_missed_replies=1))
    trace = await run_call(core, line, VirtualClock(), CallStart("c"))
    rx = next(e for e in trace.events if isinstance(e, ev.AudioReceived))
    assert rx.start == 320  # taken at the first wake-up: it plays during frames 1..50
    assert line.played_after == [(50, ("greeted",))]  # answered before frame 50 goes out
    played = [e for e in trace.events if isinstance(e, ev.MarkPlayed)]
    assert played == [ev.MarkPlayed(16320, "greeted", at=16320)]


async def test_a_streamed_call_keeps_rx_on_disk_only_and_measures_the_same_as_its_saved_recording(tmp_path):
    from voice.app.run.driver import record_call
    from voice.metrics.measure import measure
    from voice.recording import EventStream, load_recording, save_recording

    p = plan(turn(0), turn(1))
    stream = EventStream(tmp_path, "c")
    rec, trace = await record_call(
        p, MemoryLine(reference()), VirtualClock(), CallStart("c", {"id": "d"}), {}, events=stream.write
    )
    assert trace.outcome.reason == "completed"
    assert not any(isinstance(e, ev.AudioReceived) for e in rec.events)
    save_recording(tmp_path, rec, stream)
    saved = load_recording(tmp_path / "c")
    assert sum(isinstance(e, ev.AudioReceived) for e in saved.events) > 0
    assert [e for e in saved.events if not isinstance(e, ev.AudioReceived)] == rec.events
    assert measure(saved) == measure(rec)


async def test_the_recording_meta_is_the_labels_then_how_the_call_ran_as_the_json_written(tmp_path):
    """The labels (any mapping) and the driver's pacing and line figures become the meta line's JSON: a
    tuple as a list, a value JSON cannot hold as its ``str``, exactly as the log has always written them."""
    from voice.app.run.driver import record_call
    from voice.recording import load_recording, save_recording

    labels = {"dialogue_id": "d", "seed": np.int64(7), "behaviour": {"pauses": (1, 2)}}
    rec, trace = await record_call(
        plan(turn(0)), MemoryLine(reference()), VirtualClock(), CallStart("c", {"id": "d"}), labels
    )
    p50, p99, late_max = trace.pacing_late_ms
    written = {"dialogue_id": "d", "seed": "7", "behaviour": {"pauses": [1, 2]}}
    assert rec.meta == {**written, "pacing_late_ms": {"p50": p50, "p99": p99, "max": late_max}}
    assert list(rec.meta) == [*labels, "pacing_late_ms"]  # the labels' order, then the driver's
    save_recording(tmp_path, rec)
    assert load_recording(tmp_path / "c").meta == {"call_id": "c", "sample_rate": 16000, **rec.meta}
