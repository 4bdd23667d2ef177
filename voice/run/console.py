"""What ``callsim bench`` and ``run`` print at the end, besides the tables: the banner of the calls CallSim
itself failed on (first, so it cannot be missed), and a ``--ray`` run's figures per node.

Both are read back from the run's ``results.json``: what is printed is what was written.
"""

from __future__ import annotations

import json
from pathlib import Path

from voice.metrics.simulator import results_banner


def print_banner(results_json: Path, *, stopped: bool = False) -> None:
    """The banner of the calls CallSim failed on (on stdout, above the tables), if the run has any.

    Read back from the run's ``results.json``, so a run that stopped early shows it too (``stopped``: only
    from a partial file, never an earlier run's)."""
    try:
        doc = json.loads(results_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # a stopped run that could not write it: its error says so
    if not isinstance(doc, dict) or (stopped and "partial" not in doc):
        return
    if lines := results_banner(doc):
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
