"""The batch's faults with killed processes: ``bench`` killed (SIGKILL, SIGTERM) while the built-in assistant
runs, and the built-in assistant killed mid-run.  They need the built-in's model weights (not in CI's fast
subset); :mod:`voice.app.benchmarks.faults.batch` lists them with the others.

Processes are found by a tag in their environment (:data:`TAG`), which the assistant inherits from the
``bench`` it was started by: an orphan is a tagged process still alive after its ``bench`` is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from voice.app.benchmarks.faults.calls import dialogue, done_calls, dumps, traceback_in, write_lines
from voice.app.benchmarks.faults.fault import FaultOutcome, callsim_command, run_measured
from voice.core.clock import MonotonicClock

TAG = "CALLSIM_FAULT_TAG"  # set in the environment of a bench, inherited by the assistant it starts


def tagged_processes(tag: str) -> list[int]:
    """Processes (other than this one) whose environment carries ``TAG=tag``."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            with contextlib.suppress(OSError):
                if needle in (proc / "environ").read_bytes().split(b"\0"):
                    found.append(int(proc.name))
    return found


def _wait_gone(tag: str, seconds: float) -> list[int]:
    clock = MonotonicClock()
    end = clock.now_ns() + int(seconds * 1e9)
    while (left := tagged_processes(tag)) and clock.now_ns() < end:
        threading.Event().wait(0.2)
    return left


def _when_calling(out: Path, then: Callable[[], None], stop: threading.Event) -> threading.Thread:
    """Run ``then`` once the built-in assistant answers and the first call is under way (its target folder
    is opened after the assistant listens; two seconds later a call is in flight)."""

    def watch() -> None:
        while not stop.wait(0.2):
            if (out / "builtin" / "run.json").exists():
                if not stop.wait(2.0):
                    then()
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _signal_tagged(tag: str, sig: int, module: bytes) -> None:
    """Send ``sig`` to the tagged processes running ``python -m <module>``."""
    for pid in tagged_processes(tag):
        with contextlib.suppress(OSError):
            if b"\0-m\0" + module + b"\0" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, sig)


BUILTIN_ARGS = ("--all", "--concurrency", "1", "--tts", "espeak", "--no-transcribe", "--no-report")


def killed_bench(sig: int) -> Callable[[Path], FaultOutcome]:
    """``bench`` against the built-in assistant killed by ``sig`` during a call: no process of it may be left
    running (PR_SET_PDEATHSIG), and the call in flight is left for a resume (not lost)."""

    def run(scratch: Path) -> FaultOutcome:
        path = write_lines(scratch / "d.jsonl", [dumps(dialogue(f"call-{i}")) for i in range(1, 4)])
        out, tag, stop = scratch / "out", f"kill-{sig}-{os.getpid()}", threading.Event()
        watcher = _when_calling(out, lambda: _signal_tagged(tag, sig, b"voice.app.cli"), stop)
        cmd = callsim_command("bench", "--dialogues", str(path), "--out", str(out), *BUILTIN_ARGS)
        ran = run_measured(cmd, timeout=400, env={TAG: tag})
        stop.set()
        watcher.join()
        left = _wait_gone(tag, 20)
        for pid in left:  # ours to clean up
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        name = signal.Signals(sig).name
        ok = ran.returncode != 0 and not left
        outcome = f"{name} of bench (exit {ran.returncode}): {len(left)} process(es) left after 20 s"
        return FaultOutcome(outcome, ok, ran.seconds, ran.peak_mb, 0, f"{len(done_calls(out))}/3", len(left))

    return run


def builtin_killed(scratch: Path) -> FaultOutcome:
    """The built-in assistant killed during a call: that call is recorded as assistant_crashed, the run
    stops (exit 2) with one line, and a rerun makes it again, logging to assistant.2.log."""
    path = write_lines(scratch / "d.jsonl", [dumps(dialogue(f"call-{i}")) for i in range(1, 3)])
    out, tag, stop = scratch / "out", f"crash-{os.getpid()}", threading.Event()
    cmd = callsim_command("bench", "--dialogues", str(path), "--out", str(out), *BUILTIN_ARGS)
    killer = _when_calling(out, lambda: _signal_tagged(tag, signal.SIGKILL, b"server"), stop)
    crashed = run_measured(cmd, timeout=400, env={TAG: tag})
    stop.set()
    killer.join()
    recorded = [c for c, d in done_calls(out).items() if d.get("outcome") == "assistant_crashed"]
    again = run_measured(cmd, timeout=400)
    made = [c for c, d in done_calls(out).items() if d.get("outcome") != "assistant_crashed"]
    ok = (
        crashed.returncode == 2 and bool(recorded) and not traceback_in(crashed)
        and again.returncode in (0, 3) and (out / "assistant.2.log").exists()
    )  # fmt: skip
    outcome = f"exit {crashed.returncode}, {len(recorded)} assistant_crashed; rerun exit {again.returncode}"
    # wait4's peak counts the built-in assistant bench reaped (~0.5 GB): not the caller's own, not shown
    return FaultOutcome(outcome, ok, crashed.seconds, None, 2 - len(made), f"{len(made)}/2 after rerun")
