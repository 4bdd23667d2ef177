"""``scripts/bench_scale``: calls per minute for 1, 2, 4 worker processes on this machine, the Ray runner
against the local one, the driver's own cost per call, and what a CallBench-sized run would take.

Each row is a real ``run_bench`` against the echo assistant (``python -m server.assistants.echo``, in a
process of its own at a lower priority, so the figures are the caller side's): ``workers × calls-per-worker``
short calls (a greeting and two caller turns in the ``memory`` voice, a few seconds each).  The local
runner makes ``workers`` calls at once in one process; the Ray runner starts ``workers`` worker processes
(``--ray-workers``) on a local Ray, one call at a time each.  Wall time runs from the first call handed
out to the last one written, so it includes starting the Ray workers: what a user waits for.

* calls/min: calls over wall time;
* driver CPU ms per call: the CPU time of this process per call (for the local runner that is all the
  calling work; for Ray, what the driver itself adds: dispatch, receiving and writing the files);
* bytes per call: the run folder's size over its calls (the audio and the event log dominate), with each
  runner's default audio: WAV for the local runner, lossless FLAC for Ray (``--recordings``);
* pacing p99 (worst call): how late the callers' 20 ms frame wake-ups were, the timing-honesty bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from voice.app.run.dataset import BenchConfig, run_bench
from voice.app.run.launch import echo_assistant
from voice.app.run.provenance import bench_provenance
from voice.core.clock import MonotonicClock
from voice.dialogues import Dialogue, parse_dialogue
from voice.speech.tts.memory import MemoryTTS

CALLBENCH_DIALOGUES = 50_000
_CLOCK = MonotonicClock()


def short_call(i: int) -> Dialogue:
    """A short, realistic call: a greeting and two caller turns."""
    return parse_dialogue(
        {
            "id": f"scale-{i:04d}",
            "scenario": "delivery",
            "preset": {"type": "regular", "text": "快递放驿站。"},
            "owner_goal": "收快递",
            "caller_goal": "送快递",
            "relation": "alignment",
            "turns": [
                {"role": "assistant", "text": "您好，请问有什么事？"},
                {"role": "caller", "text": "你好，快递到了，家里有人吗？"},
                {"role": "assistant", "text": "麻烦放驿站。"},
                {"role": "caller", "text": "好的，那我放驿站了。"},
                {"role": "assistant", "text": "谢谢。"},
            ],
        },
        "scale",
        i,
    )


@dataclass(frozen=True)
class Row:
    """One runner at one parallelism."""

    runner: str  # local or ray
    workers: int
    calls: int
    failed: int
    wall_s: float
    driver_cpu_ms_per_call: float
    bytes_per_call: float
    mean_call_s: float
    pacing_p99_worst_ms: float | None
    audio: str = "wav"  # how the calls' audio was stored

    @property
    def calls_per_min(self) -> float:
        return 60 * self.calls / self.wall_s if self.wall_s > 0 else 0.0


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _pacing_worst(folder: Path) -> float | None:
    worst: float | None = None
    for log in folder.rglob("*.events.jsonl"):
        meta = json.loads(log.read_text(encoding="utf-8").rstrip("\n").rsplit("\n", 1)[-1])
        p99 = (meta.get("pacing_late_ms") or {}).get("p99")
        if isinstance(p99, (int, float)):
            worst = p99 if worst is None else max(worst, p99)
    return worst


async def measure(runner: str, workers: int, calls: int, target: str, out: Path, audio: str = "wav") -> Row:
    """One row: ``calls`` calls of ``target`` with ``workers`` at once (local) or worker processes (ray)."""
    config = BenchConfig(
        out=out,
        targets=(target,),
        tts="memory",
        transcribe=False,
        concurrency=workers,
        ray="auto" if runner == "ray" else None,
        ray_workers=workers,
        recordings=audio,
    )
    dialogues = [short_call(i) for i in range(calls)]
    cpu, start = _cpu_s(), _CLOCK.now_ns()
    [result] = await run_bench(dialogues, config, MemoryTTS(), None)
    wall_s = (_CLOCK.now_ns() - start) / 1e9
    cpu_ms = 1000 * (_cpu_s() - cpu) / calls
    durations = [c.duration_ms / 1000 for c in result.calls if c.duration_ms]
    return Row(
        runner,
        workers,
        calls,
        sum(c.failed for c in result.calls),
        wall_s,
        cpu_ms,
        _folder_bytes(out / result.slug) / calls,
        sum(durations) / len(durations) if durations else 0.0,
        _pacing_worst(out),
        audio,
    )


def run_rows(workers: Sequence[int], calls_per_worker: int, root: Path, runners: Sequence[str]) -> list[Row]:
    """Every runner at every parallelism against one echo assistant; a local Ray started once for all."""
    rows: list[Row] = []
    with echo_assistant(300, ["--skip-silence"], nice=10) as (url, _):
        leave = None
        if "ray" in runners:
            from voice.app.run.ray_runner import connect

            leave = connect("auto")
        try:
            for w in workers:
                for runner in runners:
                    out = root / f"{runner}-{w}"
                    audio = "flac" if runner == "ray" else "wav"  # each runner's default
                    rows.append(
                        asyncio.run(measure(runner, w, w * calls_per_worker, f"pcm+{url}", out, audio))
                    )
                    print(
                        f"bench_scale: {runner} × {w}: {rows[-1].calls_per_min:.1f} calls/min",
                        file=sys.stderr,
                    )
        finally:
            if leave is not None:
                leave()
    return rows


def table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table."""
    out = [
        "| runner | workers | calls | failed | wall s | calls/min | driver CPU ms/call | bytes/call (audio)"
        " | pacing p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        pacing = "–" if r.pacing_p99_worst_ms is None else f"{r.pacing_p99_worst_ms:.2f}"
        out.append(
            f"| {r.runner} | {r.workers} | {r.calls} | {r.failed} | {r.wall_s:.1f} | {r.calls_per_min:.1f} "
            f"| {r.driver_cpu_ms_per_call:.0f} | {r.bytes_per_call / 1e6:.2f} MB ({r.audio}) | {pacing} |"
        )
    return "\n".join(out)


def projection(rows: Sequence[Row], call_s: float, machines: Sequence[int] = (1, 10, 50)) -> str:
    """What a CallBench-sized run would take: the calls one machine held at once in the best row, each
    lasting ``call_s`` (a CallBench call's length, not this bench's short one)."""
    best = max(rows, key=lambda r: r.calls_per_min)
    at_once = best.calls_per_min * best.mean_call_s / 60 if best.mean_call_s else best.workers
    lines = [
        f"{CALLBENCH_DIALOGUES:,} dialogues of ~{call_s:.0f} s, {at_once:.1f} calls at once per machine"
        f" (the best row: {best.runner} × {best.workers}):"
    ]
    for n in machines:
        hours = CALLBENCH_DIALOGUES * call_s / (at_once * n) / 3600
        lines.append(f"  {n:>3} machine(s): {hours:,.1f} h")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="1,2,4", help="parallelism levels (comma list; default 1,2,4)")
    ap.add_argument("--calls-per-worker", type=int, default=4, help="calls per worker per row (default 4)")
    ap.add_argument("--runners", default="local,ray", help="local, ray or both (default)")
    ap.add_argument("--call-s", type=float, default=30.0, help="a CallBench call's length for the projection")
    ap.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    provenance = bench_provenance("scripts/bench_scale", argv)
    workers = [int(w) for w in args.workers.split(",") if w.strip()]
    runners = [r.strip() for r in args.runners.split(",") if r.strip()]
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as root:
        rows = run_rows(workers, args.calls_per_worker, Path(root), runners)
    print(table(rows))
    print()
    print(projection(rows, args.call_s))
    if args.json:
        payload = {
            "provenance": provenance,
            "rows": [{**r.__dict__, "calls_per_min": r.calls_per_min} for r in rows],
        }
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
