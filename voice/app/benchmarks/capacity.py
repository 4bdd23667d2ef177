"""How many simultaneous real-time calls CallSim sustains, against a trivial echo assistant.

For each N of a ramp, N calls run at once, each on the real caller path (``CallCore`` + ``run_call`` +
``PcmWebsocketLine``, a caller plan of bundled dialogues, ~25 s long) against ``server.assistants.echo``
running in a process of its own (``voice.app.run.launch.echo_assistant``).  The calls are split over
``--procs``
caller processes (each one event loop; all calls of a process share one
:class:`~voice.core.clock.FrameTicker`), and start at random moments in the first few seconds, as calls do.
Per N it prints the lateness of every frame's wake-up against its deadline over all frames of all calls
(p50/p99/max), CPU use, and whether it holds: p99 <= 5 ms with no failed call.

By default the echo sends back only frames with sound (``--echo-silence skip``), as a pipecat bot without a
mixer sends audio only while it speaks; ``--echo-silence send`` has it stream silence too, the heavier case
for the caller (one more message to read per frame).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import multiprocessing
import os
import random
import resource
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from voice.app.benchmarks.sysstats import (
    MachineCpu,
    machine_busy_fraction,
    process_cpu_s,
    runqueue_wait_s,
)
from voice.app.run.driver import run_call
from voice.core.call import CallCore
from voice.core.caller import CallerPlan
from voice.core.clock import Clock, FrameTicker, MonotonicClock
from voice.core.gcpause import short_gc_pauses
from voice.errors import LineError
from voice.lines.line import CallStart, Line
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.webrtc import WebrtcLine

_CLOCK = MonotonicClock()


def _seconds() -> float:
    """Elapsed-time readings go through voice.core.clock like everything else in voice/."""
    return _CLOCK.now_ns() / 1e9


DEFAULT_RAMP = (25, 50, 100, 150, 200, 250, 300)
WEBRTC_RAMP = (2, 4, 6, 8, 10, 12, 16, 20)  # each WebRTC call encodes and decodes Opus, both sides here
LINES: dict[str, type[PcmWebsocketLine] | type[WebrtcLine]] = {"pcm": PcmWebsocketLine, "webrtc": WebrtcLine}
MAX_P99_MS = 5.0


# --- one caller process ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerJob:
    url: str
    plans: list[CallerPlan]
    calls: int
    first: int  # global index of this process's first call
    pacing: str  # "shared": one FrameTicker per process; "own": a spinning MonotonicClock per call
    gc_mode: str  # "freeze": voice.core.gcpause.short_gc_pauses; "default": Python's own GC
    loop: str  # "asyncio" (the standard selector loop) or "uvloop" (if installed)
    stagger_s: float
    seed: int
    transport: str = "pcm"  # the line to the echo (LINES)


@dataclass
class WorkerResult:
    late_ns: npt.NDArray[np.int64]
    cpu_s: float
    wall_s: float
    outcomes: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    call_secs: list[float] = field(default_factory=list)
    wakeups: int = 0
    runq_wait_s: float | None = None  # time spent runnable but not running (CPU taken by others)
    connect_s: list[float] = field(default_factory=list)  # each call's set-up: from dialling to media


class _TimedOpen:
    """A line whose set-up is timed (a WebRTC call's offer, answer and ICE; a websocket's handshake)."""

    def __init__(self, line: Line) -> None:
        self.line, self.connect_s = line, 0.0

    async def open(self, start: CallStart) -> None:
        t0 = _seconds()
        await self.line.open(start)
        self.connect_s = _seconds() - t0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.line, name)


async def _one_call(
    job: WorkerJob, i: int, clock: Clock, delay_s: float
) -> tuple[str, bool, float, Any, float]:
    await asyncio.sleep(delay_s)
    plan = job.plans[i % len(job.plans)]
    line = _TimedOpen(LINES[job.transport](job.url))
    start = CallStart(f"cap-{job.first + i:04d}", {"id": plan.dialogue_id})
    try:
        trace = await run_call(CallCore(plan), line, clock, start)
    except LineError:
        return "connect_failed", True, 0.0, np.zeros(0, np.int64), 0.0
    secs = len(trace.caller) / plan.sample_rate
    return trace.outcome.reason, trace.outcome.failed, secs, trace.pacing_late_ns, line.connect_s


async def _run_calls(job: WorkerJob) -> WorkerResult:
    rng = random.Random(job.seed * 100_003 + job.first)
    ticker = FrameTicker(MonotonicClock(spin_ns=0)) if job.pacing == "shared" else None
    clocks: list[Clock] = [ticker or MonotonicClock() for _ in range(job.calls)]
    cpu0, wait0 = _own_cpu_s(), runqueue_wait_s()
    t0 = _seconds()
    calls = (_one_call(job, i, clocks[i], rng.uniform(0, job.stagger_s)) for i in range(job.calls))
    if job.gc_mode == "freeze":
        async with short_gc_pauses():
            results = await asyncio.gather(*calls)
    else:
        results = await asyncio.gather(*calls)
    out = WorkerResult(
        late_ns=np.concatenate([r[3] for r in results]) if results else np.zeros(0, np.int64),
        cpu_s=_own_cpu_s() - cpu0,
        runq_wait_s=_delta(wait0, runqueue_wait_s()),
        wall_s=_seconds() - t0,
        wakeups=ticker.wakeups if ticker is not None else 0,
    )
    for reason, failed, secs, _, connect_s in results:
        out.outcomes[reason] = out.outcomes.get(reason, 0) + 1
        out.failed += int(failed)
        out.call_secs.append(secs)
        if connect_s:
            out.connect_s.append(connect_s)
    return out


def _delta(before: float | None, after: float | None) -> float | None:
    return after - before if before is not None and after is not None else None


def _own_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def run_worker(job: WorkerJob) -> WorkerResult:
    """Entry point of a caller process: run its calls in one fresh event loop."""
    factory = None
    if job.loop == "uvloop":
        import uvloop  # optional, not a CallSim dependency: only for comparing loops

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_run_calls(job))


# --- one level of the ramp ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    calls: int
    procs: int
    completed: int
    failed: int
    outcomes: dict[str, int]
    frames: int
    late_p50_ms: float | None
    late_p99_ms: float | None
    late_max_ms: float | None
    mean_call_s: float
    wall_s: float
    caller_cpu_pct: float  # of one core, all caller processes together
    echo_cpu_pct: float | None
    machine_busy_pct: float | None  # of all cores
    other_pct: float | None  # of all cores: busy time not used by the callers or the echo (other work)
    runq_wait_pct: float | None  # caller processes: time runnable but waiting for a CPU, % of wall
    wakeups_per_s: float
    holds: bool
    transport: str = "pcm"
    connect_p50_ms: float | None = None  # a call's set-up (dialling to media), over the level's calls
    connect_max_ms: float | None = None
    cpu_per_call_pct: float | None = None  # caller and echo CPU per simultaneous call, % of one core


def split(n: int, procs: int) -> list[int]:
    """``n`` calls over ``procs`` processes, as evenly as possible (no empty process)."""
    procs = max(1, min(procs, n))
    return [n // procs + (1 if i < n % procs else 0) for i in range(procs)]


def run_level(
    n: int, procs: int, url: str, echo_pid: int, plans: list[CallerPlan], args: argparse.Namespace
) -> Level:
    shares = split(n, procs)
    jobs, first = [], 0
    for share in shares:
        jobs.append(
            WorkerJob(
                url,
                plans,
                share,
                first,
                args.pacing,
                args.gc,
                args.loop,
                args.stagger_s,
                args.seed,
                args.transport,
            )
        )
        first += share
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(len(jobs), mp_context=ctx) as pool:
        # Start the processes (imports, plans unpickled) before the clock starts.
        list(pool.map(_warm, range(len(jobs))))
        echo0, mach0, t0 = process_cpu_s(echo_pid), MachineCpu.read(), _seconds()
        results = list(pool.map(run_worker, jobs))
        wall = _seconds() - t0
        echo1, mach1 = process_cpu_s(echo_pid), MachineCpu.read()
    late = np.concatenate([r.late_ns for r in results]) / 1e6
    outcomes: dict[str, int] = {}
    for r in results:
        for k, v in r.outcomes.items():
            outcomes[k] = outcomes.get(k, 0) + v
    failed = sum(r.failed for r in results)
    secs = [s for r in results for s in r.call_secs]
    p50, p99, mx = (
        (float(np.percentile(late, 50)), float(np.percentile(late, 99)), float(late.max()))
        if late.size
        else (None, None, None)
    )
    busy = machine_busy_fraction(mach0, mach1)
    run_wall = max(r.wall_s for r in results)
    connects = [1000 * c for r in results for c in r.connect_s]
    caller_pct = 100 * sum(r.cpu_s for r in results) / run_wall
    echo_pct = 100 * (echo1 - echo0) / wall if echo0 is not None and echo1 is not None else None
    return Level(
        calls=n,
        procs=len(jobs),
        completed=outcomes.get("completed", 0),
        failed=failed,
        outcomes=outcomes,
        frames=int(late.size),
        late_p50_ms=p50,
        late_p99_ms=p99,
        late_max_ms=mx,
        mean_call_s=float(np.mean(secs)) if secs else 0.0,
        wall_s=run_wall,
        caller_cpu_pct=caller_pct,
        echo_cpu_pct=echo_pct,
        machine_busy_pct=100 * busy if busy is not None else None,
        runq_wait_pct=_runq_pct(results, run_wall),
        other_pct=_other(busy, sum(r.cpu_s for r in results), echo0, echo1, wall),
        wakeups_per_s=sum(r.wakeups for r in results) / run_wall,
        holds=p99 is not None and p99 <= args.max_p99_ms and failed == 0,
        transport=args.transport,
        connect_p50_ms=float(np.percentile(connects, 50)) if connects else None,
        connect_max_ms=max(connects, default=None),
        cpu_per_call_pct=(caller_pct + (echo_pct or 0.0)) / n if n else None,
    )


def _runq_pct(results: list[WorkerResult], wall: float) -> float | None:
    waits = [r.runq_wait_s for r in results]
    if any(w is None for w in waits) or not waits:
        return None
    return 100 * sum(w or 0.0 for w in waits) / (wall * len(waits))


def _other(
    busy: float | None, caller_cpu_s: float, echo0: float | None, echo1: float | None, wall: float
) -> float | None:
    if busy is None or echo0 is None or echo1 is None:
        return None
    ours = (caller_cpu_s + echo1 - echo0) / (wall * (os.cpu_count() or 1))
    return max(0.0, 100 * (busy - ours))


def _warm(_: int) -> int:
    return os.getpid()
