"""Helpers shared by the benchmarks: CPU time of processes and of the machine, and tables.

CPU figures come from ``/proc`` (Linux) so a benchmark can account for processes it did not start in
Python (the echo assistant) and for the whole machine; elsewhere they are reported as unavailable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_s(pid: int, *, children: bool = False) -> float | None:
    """User + system CPU seconds used so far by process ``pid`` (``children``: and by its children that
    have ended and been waited for); None if ``/proc`` cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime (fields 16, 17)
    return ticks / _TICKS


def runqueue_wait_s(pid: int | str = "self") -> float | None:
    """Seconds process ``pid`` has spent runnable but waiting for a CPU (``/proc/<pid>/schedstat``).

    Lateness while this grows is the scheduler's doing (other busy programs), not the event loop's.
    """
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True)
class MachineCpu:
    """A snapshot of ``/proc/stat``: busy and total jiffies over all cores."""

    busy: int
    total: int

    @staticmethod
    def read() -> MachineCpu | None:
        try:
            with open("/proc/stat", encoding="ascii") as f:
                parts = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        idle = parts[3] + (parts[4] if len(parts) > 4 else 0)  # idle + iowait
        return MachineCpu(sum(parts) - idle, sum(parts))


def machine_busy_fraction(before: MachineCpu | None, after: MachineCpu | None) -> float | None:
    """Share of all cores' time that was busy between two snapshots (0..1)."""
    if before is None or after is None or after.total <= before.total:
        return None
    return (after.busy - before.busy) / (after.total - before.total)


def fmt(value: float | None, spec: str = ".1f") -> str:
    """A figure for a table; ``-`` when it is missing."""
    return "-" if value is None else format(value, spec)


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Right-aligned plain-text table (the first column left-aligned)."""
    body = [list(header), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in body) for i in range(len(header))]
    lines = []
    for r in body:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
