"""Asyncio glue: one clock, one line, one call core.  The only place where a call meets real time.

Frames are paced on an absolute schedule (frame ``k`` is sent at ``t0 + (k+1) * 20 ms``), so pacing never
drifts and is never faster than real time; how late each wake-up was is kept as a pacing statistic. Everything
the line delivers is stamped with the clock on arrival and handed to the core.

Many calls in one event loop should share a :class:`voice.core.clock.FrameTicker` as their clock (one timer
for all of them instead of one spinning waiter per call) and run inside
:func:`voice.core.gcpause.short_gc_pauses` (see ``scripts/bench_capacity``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NotRequired, Protocol, TypedDict

import numpy as np
import numpy.typing as npt

from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm, ns_to_samples, samples_to_ns
from voice.core.call import CallCore, CallOutcome, LineClosed
from voice.core.caller import CallerPlan
from voice.core.clock import Clock
from voice.core.eventlog import EventSink
from voice.core.events import CallEvent
from voice.core.front import CallMachine
from voice.errors import LineError
from voice.lines.line import CallStart, Line
from voice.lines.line_meta import LineStats, line_stats
from voice.metrics.model.call_record import Labels
from voice.metrics.model.jsonio import as_json_object
from voice.metrics.reduce import percentiles
from voice.recording import Recording

FRAME_NS = samples_to_ns(FRAME_SAMPLES)
TRACK_START_SAMPLES = 60 * SAMPLE_RATE  # first allocation of a recorded channel (grows by doubling)

# What a line with ``describe()`` did during the call: an effect line, a SIP line or a WebRTC line.


class PacingMeta(TypedDict):
    """How late the frame wake-ups were (ms): what ``measure`` reads back as ``pacing_late_ms``."""

    p50: float
    p99: float
    max: float


class RunMeta(TypedDict):
    """What the driver adds to a call's labels in its recording's ``meta``: how the call ran."""

    pacing_late_ms: PacingMeta
    line_stats: NotRequired[LineStats]  # a line with ``describe()`` only


@dataclass(frozen=True)
class CallTrace:
    """Everything a finished call produced, before it is written to disk."""

    caller: Pcm
    heard: Pcm
    events: list[CallEvent]
    outcome: CallOutcome
    pacing_late_ms: tuple[float, float, float]  # p50, p99, max lateness of frame wake-ups
    # Every frame's lateness (ns), so percentiles can be taken over many calls at once (benchmarks).
    pacing_late_ns: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    line_stats: LineStats | None = None  # what a line with effects did (losses, delays, levels)

    def recording(self, call_id: str, labels: Labels) -> Recording:
        """The call as a recording (not yet saved): its events, plus ``labels`` and how it ran as meta
        (each as the JSON it is written as)."""
        p50, p99, late_max = self.pacing_late_ms
        ran: RunMeta = {"pacing_late_ms": {"p50": p50, "p99": p99, "max": late_max}}
        if self.line_stats is not None:
            ran["line_stats"] = self.line_stats
        meta = {**as_json_object(labels), **as_json_object(ran)}
        return Recording(call_id, self.caller, self.heard, self.events, meta)


class CallCompanion(Protocol):
    """Something that rides along a call's frames: the reactive caller (:mod:`voice.react.session`).

    ``after_tick`` runs after every frame and may hand the core what it asked for; ``heard`` gives the
    heard channel so far.  ``stop`` always runs when the frames stop, and drops whatever is still in the
    making; ``finish`` runs once the call has ended normally and the line is closed, before the call's
    events are taken.
    """

    async def after_tick(self, heard: Callable[[], Pcm]) -> None: ...

    async def finish(self, heard: Pcm) -> None: ...

    def stop(self) -> None: ...


class _Track:
    """One recorded channel, written frame by frame into a preallocated buffer (grown by doubling).

    Keeping one small array per frame and concatenating them at hang-up cost ~3 ms (up to 12 ms) per
    call: a stall of every other call sharing the loop.  Writing in place spreads that work over the
    call, and the result is a view of the written part, not a copy.  Untouched capacity is never paged in.
    """

    def __init__(self, capacity: int = TRACK_START_SAMPLES) -> None:
        self._buf = np.empty(max(1, capacity), dtype=np.int16)
        self._n = 0

    def append(self, pcm: Pcm) -> None:
        end = self._n + len(pcm)
        if end > len(self._buf):
            grown = np.empty(max(end, 2 * len(self._buf)), dtype=np.int16)
            grown[: self._n] = self._buf[: self._n]
            self._buf = grown
        self._buf[self._n : end] = pcm
        self._n = end

    def pcm(self) -> Pcm:
        return self._buf[: self._n]


async def record_call(
    plan: CallerPlan,
    line: Line,
    clock: Clock,
    start: CallStart,
    labels: Labels,
    *,
    core: CallMachine | None = None,
    companion: CallCompanion | None = None,
    events: EventSink | None = None,
) -> tuple[Recording, CallTrace]:
    """Play ``plan`` as one call on ``line``: the one path from a caller plan to a recording (not saved).

    ``core`` replaces the scripted core built from ``plan`` (a reactive one, with its ``companion``).
    ``events``: stream the call's records there as they happen (:class:`~voice.recording.EventStream`);
    the recording's ``events`` then lack the ``rx`` records, which are on disk only.
    """
    trace = await run_call(core or CallCore(plan), line, clock, start, companion=companion, events=events)
    return trace.recording(start.call_id, labels), trace


async def run_call(
    core: CallMachine,
    line: Line,
    clock: Clock,
    start: CallStart,
    *,
    connect_timeout_s: float = 15.0,
    companion: CallCompanion | None = None,
    events: EventSink | None = None,
) -> CallTrace:
    """Play one call to the end.  A line that cannot be opened raises :class:`LineError`.

    ``events``: where the core streams its records as they happen (see :func:`record_call`).
    """
    if events is not None:
        core.log.stream_to(events)
    try:
        await asyncio.wait_for(line.open(start), connect_timeout_s)
    except TimeoutError as exc:
        raise LineError(f"the assistant did not answer within {connect_timeout_s:.0f} s") from exc
    t0 = clock.now_ns()
    reader = asyncio.create_task(_read(core, line, clock, t0))
    caller, heard = _Track(), _Track()
    late: list[int] = []
    try:
        k = 0
        while True:
            deadline = t0 + (k + 1) * FRAME_NS
            await clock.sleep_until(deadline)
            late.append(clock.now_ns() - deadline)
            tick = core.tick()
            caller.append(tick.caller)
            heard.append(tick.heard)
            if tick.marks:  # answered before the frame that follows their audio, as Twilio does
                await line.played(tick.marks)
            await line.send(tick.caller)
            if tick.hangup is not None:
                await line.hangup(tick.hangup)
            if tick.done:
                break
            if companion is not None:
                await companion.after_tick(heard.pcm)
            k += 1
    finally:
        if companion is not None:
            companion.stop()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        await line.close()
    assert core.outcome is not None
    if companion is not None:  # after the line is closed: the caller's verdict may take a model's time
        await companion.finish(heard.pcm())
    late_ns = np.asarray(late, dtype=np.int64)
    pacing: tuple[float, float, float] = (0.0, 0.0, 0.0)
    if len(late_ns):
        p50, p99, late_max = (v / 1e6 for v in percentiles(late_ns, (50, 99, 100)) if v is not None)
        pacing = (p50, p99, late_max)
    return CallTrace(
        caller=caller.pcm(),
        heard=heard.pcm(),
        events=list(core.events),
        outcome=core.outcome,
        pacing_late_ms=pacing,
        pacing_late_ns=late_ns,
        line_stats=line_stats(line),
    )


async def _read(core: CallMachine, line: Line, clock: Clock, t0: int) -> None:
    while not core.done:
        item = await line.recv()
        core.receive(item, ns_to_samples(clock.now_ns() - t0))
        if isinstance(item, LineClosed):
            return
