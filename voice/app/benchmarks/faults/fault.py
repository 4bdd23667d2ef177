"""What a fault is and what it reports, and the one way faults run a CallSim command and measure it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from voice.core.clock import monotonic_s

_pause = threading.Event()  # never set: its wait() is a sleep


def sleep_s(seconds: float) -> None:
    """Block this thread for ``seconds`` (faults drive blocking code; no clock read)."""
    _pause.wait(seconds)


#: a row passes only under these bounds (the issue's goals)
MAX_PEAK_MB = 300.0


@dataclass(frozen=True)
class FaultOutcome:
    """What CallSim did about one fault.

    ``outcome`` is what a user would see (the recorded reason, the error message, the close code), in a few
    words; ``ok`` whether that is the behaviour asked for; ``seconds`` the wall time until the outcome (a
    bound: nothing hangs); ``peak_mb`` the peak resident memory of the CallSim process under test (None
    when not measured); ``calls_lost`` calls neither kept nor left for a resume to make; ``kept`` what
    survived, e.g. ``"3/3 recordings"``; ``orphans`` processes left running afterwards.
    """

    outcome: str
    ok: bool
    seconds: float
    peak_mb: float | None = None
    calls_lost: int = 0
    kept: str = ""
    orphans: int = 0

    @property
    def passed(self) -> bool:
        """The row meets every goal: expected behaviour, nothing lost, bounded memory, no orphan."""
        memory_ok = self.peak_mb is None or self.peak_mb <= MAX_PEAK_MB
        return self.ok and self.calls_lost == 0 and self.orphans == 0 and memory_ok


@dataclass(frozen=True)
class Fault:
    """One entry of the catalogue: ``run(scratch)`` provokes it in an empty scratch folder."""

    name: str
    area: str  # lines, batch, secrets, serve
    fast: bool  # part of the subset CI runs (seconds, no model weights)
    run: Callable[[Path], FaultOutcome]
    description: str = ""


@dataclass(frozen=True)
class Measured:
    """A finished command: exit code, wall seconds, peak memory (MB) of it and its waited-for children."""

    returncode: int
    seconds: float
    peak_mb: float
    stdout: str
    stderr: str
    timed_out: bool = False


REPO = Path(__file__).resolve().parents[4]


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    """The environment, with this checkout first on the path: a command run in a scratch folder must import
    the CallSim under test, not whichever one is installed."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **(extra or {})}


def callsim_command(*args: str) -> list[str]:
    """``callsim ARGS`` with this interpreter (no reliance on PATH)."""
    return [sys.executable, "-m", "voice.app.cli", *args]


def run_measured(
    cmd: Sequence[str],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    kill_after: float | None = None,
    kill_signal: int = signal.SIGKILL,
) -> Measured:
    """Run ``cmd`` to its end (or ``timeout``, then SIGKILL) and measure its peak memory.

    ``kill_after``: send ``kill_signal`` that many seconds in (a killed-process fault), then let it end
    within ``timeout``.  The peak memory is the kernel's high-water mark of the command's own resident set
    (``VmHWM``, read every 20 ms: a peak in the last 20 ms of its life can be missed), not that of a hostile
    bot running beside.  Not ``wait4``'s ``ru_maxrss``: that counts the image of the process that forked
    the command (a 260 MB test runner) before the command's ``exec``.
    """
    start = monotonic_s()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=_env(env), stdout=out, stderr=err, text=True)
        signalled = timed_out = False
        peak_kb: int | None = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            peak_kb = _high_water_kb(proc.pid) or peak_kb  # monotonic after exec: the last read is the peak
            now = monotonic_s() - start
            if kill_after is not None and not signalled and now >= kill_after:
                proc.send_signal(kill_signal)
                signalled = True
            if now >= timeout and not timed_out:
                proc.kill()
                timed_out = True
            sleep_s(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = monotonic_s() - start
        out.seek(0)
        err.seek(0)
        peak = (peak_kb if peak_kb is not None else usage.ru_maxrss) / 1024
        return Measured(proc.returncode, seconds, peak, out.read(), err.read(), timed_out)


def _high_water_kb(pid: int) -> int | None:
    """``VmHWM`` of a live process, in kB (None once it is gone or before it has an address space)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
