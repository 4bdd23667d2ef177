"""The fault catalogue behind ``scripts/bench_faults``: hostile bots, bad files, killed processes, full disks,
server floods; each fault is run and its outcome checked, one table row per fault.

A fault is a :class:`Fault`: a name, whether it is in the fast subset CI runs, and a function that provokes
the fault in a scratch folder and returns a :class:`FaultOutcome`.  Faults live in one module per area
(``lines``, ``batch``, ``secrets``, ``serve``), each exposing ``FAULTS``; :mod:`.run` runs them (each in a
process of its own, so one fault's memory or leftovers cannot colour the next) and prints the table.

What a row says, and why: CallSim's promise under faults is that every call ends within a bound with a
recorded reason, nothing is lost (``calls_lost``: calls neither kept nor left for a resume to make), memory
stays bounded (``peak_mb`` of the CallSim process that held the call, not of the hostile bot), and no
process is left behind (``orphans``).
"""

from __future__ import annotations

from voice.app.benchmarks.faults.fault import Fault, FaultOutcome, Measured, run_measured

__all__ = ["Fault", "FaultOutcome", "Measured", "run_measured"]
