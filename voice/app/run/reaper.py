"""A watchdog for processes a run starts but cannot tie to its own life: a local Ray's (``--ray auto``).

Ray's own processes outlive a driver killed with SIGKILL (its agents are left running under PID 1), and a
killed process runs no cleanup.  So the driver starts this small process beside it
(:func:`voice.app.run.launch.reaper`): it notes, twice a second, every process descended from the driver; once
the driver is gone, it kills the ones it last saw (its own excepted) and exits.  A driver that ends
normally has shut Ray down already, so the reaper then finds nothing left to kill.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

POLL_S = 0.5


def children_of(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from ``/proc``)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the name, in parentheses, may hold spaces
        parents.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def watch(driver: int, poll_s: float = POLL_S) -> list[int]:
    """Until ``driver`` is gone, note its descendants; then kill those last seen; returns the killed."""
    me, seen, pause = os.getpid(), set[int](), threading.Event()
    while alive(driver):
        seen = children_of(driver) - {me}
        pause.wait(poll_s)
    killed = []
    for pid in sorted(seen):
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
    return killed


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m voice.app.run.reaper")
    ap.add_argument("driver", type=int, help="the process whose descendants to kill once it is gone")
    args = ap.parse_args(argv)
    killed = watch(args.driver)
    if killed:
        gone = f"reaper: the run's process {args.driver} is gone; killed {len(killed)} it left behind"
        print(gone, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
