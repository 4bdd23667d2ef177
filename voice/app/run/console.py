"""What ``callsim bench`` and ``run`` print at the end, besides the tables: the banner of the calls CallSim
itself failed on and the assistant's failed calls with what to do about each kind (first, so they cannot be
missed), and a ``--ray`` run's figures per node.

All are read back from the run's ``results.json`` files: what is printed is what was written.
"""

from __future__ import annotations

from pathlib import Path

from voice.errors import RecordingError
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.failed_calls import failed_lines
from voice.metrics.model.jsonio import Fields, read_json
from voice.metrics.model.run_results import NodeSummary, load_results, load_target, target_folders
from voice.metrics.simulator import results_banner


def target_calls(folder: Path) -> list[tuple[str, list[CallMetrics]]]:
    """Each target of a run folder (or a target folder) with its calls as written; [] if unreadable."""
    try:
        return [(name, [c.metrics for c in load_target(sub).calls]) for name, sub in target_folders(folder)]
    except RecordingError:
        return []


def print_banner(results_json: Path, *, stopped: bool = False) -> None:
    """The banner of the calls CallSim failed on, then the assistant's failed calls, each kind with what to
    do (:mod:`voice.metrics.failed_calls`), on stdout above the tables, if the run has any.

    Read back from the run's ``results.json``, so a run that stopped early shows it too (``stopped``: only
    from a partial file, never an earlier run's)."""
    if not results_json.exists():
        return  # a stopped run that could not write it: its error says so
    try:
        results = load_results(results_json.parent)
    except RecordingError:
        return
    if stopped and results.partial is None:
        return
    if lines := [*results_banner(results), *failed_lines(target_calls(results_json.parent))]:
        print("\n".join(lines))


def print_nodes(results_json: Path) -> None:
    """A ``--ray`` run's per-node throughput and pacing, from its ``results.json``."""
    nodes = [
        NodeSummary.from_json(Fields(n, "nodes[]")) for n in Fields(read_json(results_json)).values("nodes")
    ]
    print("\nRay nodes:")
    for n in nodes:
        rate = f"{n.calls_per_min:.1f} calls/min" if n.calls_per_min else "-"
        worst = n.pacing_p99_ms_worst
        pacing = (
            "-"
            if worst is None
            else f"{worst:.2f} ms" + (" (FLAGGED: over 5 ms)" if n.pacing_flagged else "")
        )
        print(f"  {n.node}: {n.calls} calls, {rate}, worst frame-pacing p99 {pacing}")
