"""run_measured measures a real command: its own peak memory, its exit, a kill on schedule, a time bound."""

from __future__ import annotations

import signal
import sys

from voice.app.benchmarks.faults.fault import MAX_PEAK_MB, FaultOutcome, run_measured


def test_the_peak_memory_is_the_commands_own() -> None:
    touch_150_mb = "import time; x = bytearray(150 << 20); x[::4096] = b'1' * (150 << 8); time.sleep(0.2)"
    big = run_measured([sys.executable, "-c", touch_150_mb], timeout=30)
    small = run_measured([sys.executable, "-c", "print('hi')"], timeout=30)
    assert big.returncode == 0 and small.returncode == 0 and small.stdout == "hi\n"
    assert big.peak_mb > 150 > small.peak_mb


def test_a_command_can_be_killed_on_schedule_and_is_bounded_in_time() -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    killed = run_measured(sleeper, timeout=10, kill_after=0.3, kill_signal=signal.SIGTERM)
    assert killed.returncode == -signal.SIGTERM and not killed.timed_out and killed.seconds < 10
    hung = run_measured(sleeper, timeout=0.3)
    assert hung.timed_out and hung.returncode == -signal.SIGKILL


def test_a_row_passes_only_when_every_goal_is_met() -> None:
    good = FaultOutcome("recorded: bot_flood", True, 1.0, peak_mb=80, kept="1/1")
    assert good.passed
    assert not FaultOutcome("traceback", False, 1.0).passed
    assert not FaultOutcome("ok", True, 1.0, calls_lost=1).passed
    assert not FaultOutcome("ok", True, 1.0, orphans=1).passed
    assert not FaultOutcome("ok", True, 1.0, peak_mb=MAX_PEAK_MB + 1).passed
