"""Asyncio glue: one clock, one line, one call core.  The only place where a call meets real time.

Frames are paced on an absolute schedule (frame ``k`` is sent at ``t0 + (k+1) * 20 ms``), so pacing never
drifts and is never faster than real time; how late each wake-up was is kept as a pacing statistic.
Everything the line delivers is stamped with the clock on arrival and handed to the core.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import numpy as np

from voice.audio import FRAME_SAMPLES, Pcm, ns_to_samples, samples_to_ns
from voice.call import CallCore, CallEvent, CallOutcome, LineClosed
from voice.clock import Clock
from voice.errors import LineError
from voice.lines.base import CallStart, Line

FRAME_NS = samples_to_ns(FRAME_SAMPLES)


@dataclass(frozen=True)
class CallTrace:
    """Everything a finished call produced, before it is written to disk."""

    caller: Pcm
    heard: Pcm
    events: list[CallEvent]
    outcome: CallOutcome
    pacing_late_ms: tuple[float, float, float]  # p50, p99, max lateness of frame wake-ups


async def run_call(
    core: CallCore, line: Line, clock: Clock, start: CallStart, *, connect_timeout_s: float = 15.0
) -> CallTrace:
    """Play one call to the end.  A line that cannot be opened raises :class:`LineError`."""
    try:
        await asyncio.wait_for(line.open(start), connect_timeout_s)
    except TimeoutError as exc:
        raise LineError(f"the assistant did not answer within {connect_timeout_s:.0f} s") from exc
    t0 = clock.now_ns()
    reader = asyncio.create_task(_read(core, line, clock, t0))
    caller: list[Pcm] = []
    heard: list[Pcm] = []
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
            await line.send(tick.caller)
            if tick.hangup is not None:
                await line.hangup(tick.hangup)
            if tick.done:
                break
            k += 1
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        await line.close()
    assert core.outcome is not None
    lat = np.asarray(late, dtype=np.float64) / 1e6
    pacing = (
        (float(np.percentile(lat, 50)), float(np.percentile(lat, 99)), float(lat.max()))
        if len(lat)
        else (0, 0, 0)
    )
    return CallTrace(
        caller=np.concatenate(caller) if caller else np.zeros(0, np.int16),
        heard=np.concatenate(heard) if heard else np.zeros(0, np.int16),
        events=list(core.events),
        outcome=core.outcome,
        pacing_late_ms=pacing,
    )


async def _read(core: CallCore, line: Line, clock: Clock, t0: int) -> None:
    while not core.done:
        item = await line.recv()
        core.receive(item, ns_to_samples(clock.now_ns() - t0))
        if isinstance(item, LineClosed):
            return
