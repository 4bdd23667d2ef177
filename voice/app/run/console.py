"""What ``callsim bench`` and ``run`` print at the end, besides the tables: the banner of the calls CallSim
itself failed on and the assistant's failed calls with what to do about each kind (first, so they cannot be
missed), and a ``--ray`` run's figures per node.

All are read back from the run's ``results.json`` files: what is printed is what was written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from voice.errors import RecordingError
from voice.metrics.failed_calls import failed_lines
from voice.metrics.results import read_results, target_folders
from voice.metrics.simulator import results_banner


def target_calls(folder: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each target of a run folder (or a target folder) with its calls as written; [] if unreadable."""
    try:
        return [(name, list(read_results(sub).get("calls", []))) for name, sub in target_folders(folder)]
    except RecordingError:
        return []


def print_banner(results_json: Path, *, stopped: bool = False) -> None:
    """The banner of the calls CallSim failed on, then the assistant's failed calls, each kind with what to
    do (:mod:`voice.metrics.failed_calls`), on stdout above the tables, if the run has any.

    Read back from the run's ``results.json``, so a run that stopped early shows it too (``stopped``: only
    from a partial file, never an earlier run's)."""
    try:
        doc = json.loads(results_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # a stopped run that could not write it: its error says so
    if not isinstance(doc, dict) or (stopped and "partial" not in doc):
        return
    if lines := [*results_banner(doc), *failed_lines(target_calls(results_json.parent))]:
        print("\n".join(lines))


def print_nodes(results_json: Path) -> None:
    """A ``--ray`` run's per-node throughput and pacing, from its ``results.json``."""
    nodes = json.loads(results_json.read_text(encoding="utf-8")).get("nodes", [])
    print("\nRay nodes:")
    for n in nodes:
        rate = f"{n['calls_per_min']:.1f} calls/min" if n.get("calls_per_min") else "-"
        worst = n.get("pacing_p99_ms_worst")
        pacing = (
            "-"
            if worst is None
            else f"{worst:.2f} ms" + (" (FLAGGED: over 5 ms)" if n["pacing_flagged"] else "")
        )
        print(f"  {n['node']}: {n['calls']} calls, {rate}, worst frame-pacing p99 {pacing}")
