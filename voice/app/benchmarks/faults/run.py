"""Run the fault catalogue and print one row per fault (``scripts/bench_faults``).

Each fault runs in a process of its own (``--one NAME``), in a scratch folder of its own, under a time
bound: a fault that hangs, leaks or crashes the runner shows as a failed row instead of taking the other
rows with it.  ``--fast`` is the subset CI runs (seconds each, no model weights); ``--check`` exits 1 when
a row fails its goals (:attr:`FaultOutcome.passed`: the expected behaviour, 0 calls lost, peak memory
within :data:`~voice.app.benchmarks.faults.fault.MAX_PEAK_MB`, no orphan).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from voice.app.benchmarks.faults.fault import MAX_PEAK_MB, Fault, FaultOutcome
from voice.app.run.provenance import bench_provenance
from voice.core.clock import MonotonicClock

_CLOCK = MonotonicClock()


def _now_s() -> float:
    """Wall seconds on CallSim's one clock (for bounds and throughput, not for audio)."""
    return _CLOCK.now_ns() / 1e9


AREAS = ("lines", "batch", "secrets", "serve")
FAULT_TIMEOUT_S = 600.0


def catalogue() -> list[Fault]:
    """Every fault, area by area (an area whose module does not exist yet has none)."""
    faults: list[Fault] = []
    for area in AREAS:
        try:
            module = importlib.import_module(f"voice.app.benchmarks.faults.{area}")
        except ModuleNotFoundError as exc:
            if exc.name != f"voice.app.benchmarks.faults.{area}":
                raise
            continue
        faults.extend(module.FAULTS)
    return faults


def select(faults: Sequence[Fault], *, fast: bool, only: Sequence[str]) -> list[Fault]:
    """The faults asked for: the fast subset and/or the named ones (by name or area)."""
    chosen = [f for f in faults if (not fast or f.fast) and (not only or f.name in only or f.area in only)]
    unknown = set(only) - {f.name for f in faults} - {f.area for f in faults}
    if unknown:
        raise SystemExit(f"bench_faults: no such fault or area: {', '.join(sorted(unknown))}")
    return chosen


def run_isolated(fault: Fault, timeout: float = FAULT_TIMEOUT_S) -> FaultOutcome:
    """Run one fault in a child process and scratch folder; a child that fails is a failed row."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", fault.name)[:40]  # names are prose: "bad file: id with /"
    with tempfile.TemporaryDirectory(prefix=f"fault-{safe}-") as scratch:
        out = Path(scratch) / "outcome.json"
        cmd = [
            sys.executable,
            "-m",
            "voice.app.benchmarks.faults.run",
            "--one",
            fault.name,
            "--into",
            str(out),
        ]
        start = _now_s()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=Path.cwd())
        except subprocess.TimeoutExpired:
            return FaultOutcome(f"the fault run did not end within {timeout:.0f} s", False, timeout)
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:160]
            return FaultOutcome(f"the fault run failed: {tail}", False, _now_s() - start)
        return FaultOutcome(**json.loads(out.read_text(encoding="utf-8")))


def _run_one(name: str, into: Path) -> None:
    fault = next((f for f in catalogue() if f.name == name), None)
    if fault is None:
        raise SystemExit(f"no such fault: {name}")
    scratch = into.parent / "scratch"
    scratch.mkdir()
    outcome = fault.run(scratch)
    into.write_text(json.dumps(dataclasses.asdict(outcome), ensure_ascii=False), encoding="utf-8")


def table(rows: Sequence[tuple[Fault, FaultOutcome]]) -> str:
    """The rows as a Markdown table (what the closing note quotes)."""
    lines = [
        "| fault | area | outcome | s | peak MB | calls lost | kept | orphans | pass |",
        "|---|---|---|---:|---:|---:|---|---:|---|",
    ]
    for f, o in rows:
        peak = "–" if o.peak_mb is None else f"{o.peak_mb:.0f}"
        mark = "yes" if o.passed else "**NO**"
        outcome = o.outcome.replace("|", "/")
        lines.append(
            f"| {f.name} | {f.area} | {outcome} | {o.seconds:.1f} | {peak} | {o.calls_lost} "
            f"| {o.kept or '–'} | {o.orphans} | {mark} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench_faults", description=__doc__.split("\n\n")[0])
    ap.add_argument("--fast", action="store_true", help="only the fast subset (what CI runs)")
    ap.add_argument("--only", action="append", default=[], help="a fault or an area (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the catalogue and exit")
    ap.add_argument("--check", action="store_true", help="exit 1 if any row fails its goals")
    ap.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--into", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        _run_one(args.one, args.into)
        return 0
    faults = select(catalogue(), fast=args.fast, only=args.only)
    if args.list:
        for f in faults:
            print(f"{f.name:32} {f.area:8} {'fast' if f.fast else 'slow':5} {f.description}")
        return 0
    provenance = bench_provenance("scripts/bench_faults", argv, json_out=False)
    rows: list[tuple[Fault, FaultOutcome]] = []
    for f in faults:
        print(f"bench_faults: {f.name} ...", file=sys.stderr, flush=True)
        rows.append((f, run_isolated(f)))
    print(table(rows))
    failed = [f.name for f, o in rows if not o.passed]
    print(
        f"\n{len(rows) - len(failed)}/{len(rows)} rows pass (goals: expected outcome, 0 calls lost, "
        f"peak ≤ {MAX_PEAK_MB:.0f} MB, no orphan)" + (f"; failing: {', '.join(failed)}" if failed else "")
    )
    if args.json:
        payload = {
            "provenance": provenance,
            "rows": [
                {"fault": f.name, "area": f.area, **dataclasses.asdict(o), "passed": o.passed}
                for f, o in rows
            ],
        }
        args.json.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
