"""Holding a reply while the caller may be cutting in (``server/hold.py``): the decision over VAD windows,
and the paced output that obeys it.  The whole behaviour on a real call is in ``test_assistant.py``."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import ClassVar

import pytest
from pipecat.frames.frames import Frame, InterruptionFrame, OutputAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.transports.websocket.fastapi import FastAPIWebsocketOutputTransport, FastAPIWebsocketParams

from server.hold import PacedWebsocketOutputTransport, PacedWebsocketTransport, ReplyHold, reply_hold
from server.pcm_serializer import PlayoutTracker
from voice.contract.tuning import TurnSettings

WINDOW = 512  # samples in one Silero window at 16 kHz (32 ms)


def hold(
    audible: bool = True,
    *,
    after_windows: int = 5,
    release_windows: int = 2,
    min_gap_windows: int = 0,
    again_windows: int = 0,
    queued_windows: int = 0,
) -> ReplyHold:
    return ReplyHold(
        hold_after_samples=after_windows * WINDOW,
        release_after_samples=release_windows * WINDOW,
        min_gap_samples=min_gap_windows * WINDOW,
        rehold_within_samples=again_windows * WINDOW,
        audible=lambda: audible,
        queued=lambda: queued_windows * WINDOW,
    )


def feed(h: ReplyHold, pattern: str) -> list[bool]:
    """``#`` a voiced window, ``.`` a silent one; returns whether the reply is held after each."""
    held = []
    for c in pattern:
        h.observe(c == "#", WINDOW)
        held.append(h.held)
    return held


def test_speech_shorter_than_the_hold_point_holds_nothing() -> None:
    h = hold()
    assert not any(feed(h, "####...." * 3))
    assert h.holds == 0


def test_speech_that_goes_on_holds_the_reply_until_the_caller_is_silent_again() -> None:
    h = hold()
    held = feed(h, "######..." + "....")
    assert held[:4] == [False] * 4 and held[4] and held[5] and held[6]  # held from the 5th voiced window on
    assert not held[7]  # released after 2 silent windows
    assert (h.holds, h.releases) == (1, 1)


def test_one_silent_window_inside_speech_neither_releases_nor_restarts_the_count() -> None:
    h = hold()
    held = feed(h, "###.##")  # 5 windows of speech since the burst began, with a dip inside
    assert held[-1]
    assert not feed(hold(), "###..##")[-1]  # two silent windows end the burst: the count starts again


def test_a_held_reply_waits_out_the_least_gap_the_caller_hears_so_a_first_word_and_comma_stay_held() -> None:
    # held at the 5th voiced window; 2 windows still on the line, then at least 4 heard: 6 windows of hold
    slow = hold(min_gap_windows=4, queued_windows=2)
    held = feed(slow, "#####" + "......")
    assert held[4:10] == [True] * 6 and not held[10]
    first_word_then_more = hold(min_gap_windows=4, queued_windows=2)
    assert all(feed(first_word_then_more, "#####" + "...." + "###")[4:])  # never let go in the comma
    assert first_word_then_more.releases == 0


def test_speech_soon_after_a_release_holds_again_at_once() -> None:
    h = hold(again_windows=3)
    feed(h, "#####..")
    assert not h.held and h.releases == 1
    assert feed(h, "..#") == [False, False, True]  # within 3 windows of the release: held on one window
    late = hold(again_windows=3)
    feed(late, "#####.." + "....")
    assert feed(late, "#") == [False]  # later: a new burst must last again
    cancelled = hold(again_windows=3)
    feed(cancelled, "#####..")
    cancelled.release()  # the reply was cancelled: the next one starts afresh
    assert feed(cancelled, "#") == [False]


def test_nothing_is_held_while_the_assistant_is_not_heard() -> None:
    h = hold(audible=False)
    assert not any(feed(h, "#" * 20))


def test_holding_is_off_at_zero() -> None:
    h = ReplyHold(hold_after_samples=0, release_after_samples=WINDOW)
    assert not h.enabled
    assert not any(feed(h, "#" * 20))


async def test_a_held_reply_waits_until_release() -> None:
    h = hold()
    feed(h, "######")
    waiter = asyncio.create_task(h.wait_open())
    await asyncio.sleep(0.05)
    assert not waiter.done()
    h.release()
    await asyncio.wait_for(waiter, 1.0)
    assert not h.held


class FakeWebsocket:
    """Just enough of a Starlette websocket for the transport to be built; the tests never connect it."""

    client_state = application_state = None
    headers: ClassVar[dict[str, str]] = {}


def paced(h: ReplyHold | None, playout: PlayoutTracker, lead: float = 0.1) -> PacedWebsocketOutputTransport:
    params = FastAPIWebsocketParams(audio_out_enabled=True, audio_out_sample_rate=16000)
    transport = PacedWebsocketTransport(FakeWebsocket(), params, playout=playout, hold=h, lead_secs=lead)
    output = transport.output()
    assert isinstance(output, PacedWebsocketOutputTransport)
    return output


async def test_the_output_keeps_only_the_lead_ahead_of_the_caller() -> None:
    now = [0.0]
    playout = PlayoutTracker(clock=lambda: now[0])
    output = paced(None, playout, lead=0.1)
    playout.on_audio_sent(0.08)
    await asyncio.wait_for(output._write_audio_sleep(), 0.05)  # within the lead: no wait
    playout.on_audio_sent(0.2)  # 0.28 s ahead: waits until it is 0.1
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(asyncio, "sleep", fake_sleep)
        await output._write_audio_sleep()
    assert sleeps == [pytest.approx(0.18)]
    assert playout.remaining() == pytest.approx(0.1)


async def test_a_held_output_sends_nothing_until_release_and_an_interruption_releases() -> None:
    h = hold()
    feed(h, "######")
    output = paced(h, PlayoutTracker())
    sent: list[Frame] = []

    async def fake_write(frame: Frame) -> bool:
        sent.append(frame)
        return True

    output._client = SimpleNamespace(is_closing=False, is_connected=True)  # type: ignore[assignment]
    output._write_frame = fake_write  # type: ignore[method-assign]
    writing = asyncio.create_task(output.write_audio_frame(OutputAudioRawFrame(b"\0" * 640, 16000, 1)))
    await asyncio.sleep(0.05)
    assert not sent and not writing.done()
    passed_on = []

    async def parent_process_frame(self: object, frame: object, direction: FrameDirection) -> None:
        passed_on.append(frame)  # pipecat's own handling needs a running pipeline

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FastAPIWebsocketOutputTransport, "process_frame", parent_process_frame)
        await output.process_frame(InterruptionFrame(), FrameDirection.DOWNSTREAM)
    assert await asyncio.wait_for(writing, 1.0)
    assert [type(f) for f in passed_on] == [InterruptionFrame]
    assert len(sent) == 1 and not h.held


def test_the_calls_hold_comes_from_its_settings_in_samples_and_is_absent_when_off() -> None:
    playout = PlayoutTracker(clock=lambda: 0.0)
    playout.on_audio_sent(0.05)  # the caller hears 50 ms more of the reply
    h = reply_hold(TurnSettings(), playout, 8000)
    assert h is not None
    held = []
    for voiced in [True] * 4 + [False] * 10:  # 32 ms windows at 8 kHz
        h.observe(voiced, 256)
        held.append(h.held)
    # 0.1 s = 800 samples: held at the 4th window; released once 0.064 s silent and 0.05 + 0.22 s heard
    # after the hold (1024 + 400 + 1760 = 3184 samples): let go at the 13th window (3328)
    assert held == [False, False, False] + [True] * 9 + [False, False]
    off = TurnSettings(hold_after_secs=0)
    assert reply_hold(off, playout, 8000) is None
