"""The reaper kills what a SIGKILLed process left behind, and nothing while that process lives."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

from voice.app.run.reaper import alive, children_of

DRIVER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
print(child.pid, flush=True)
time.sleep(60)
"""


def wait_until(predicate, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_descendants_are_found_through_proc() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in children_of(os.getpid()) and alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not alive(child.pid)


def test_a_killed_drivers_leftovers_are_killed_and_the_reaper_leaves() -> None:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True)
    assert driver.stdout is not None
    left_behind = int(driver.stdout.readline())  # its own session, as Ray's agents: a group kill misses it
    reaper = subprocess.Popen(
        [sys.executable, "-m", "voice.app.run.reaper", str(driver.pid)], stderr=subprocess.PIPE
    )
    try:
        subprocess.run(["sleep", "1.2"], check=True)  # the reaper has seen the driver's child
        assert alive(left_behind) and reaper.poll() is None  # nothing killed while the driver lives
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        assert wait_until(lambda: not alive(left_behind)), "the driver's child outlived it"
        _, err = reaper.communicate(timeout=10)
        assert reaper.returncode == 0 and b"killed 1 it left behind" in err
    finally:
        for p in (driver, reaper):
            p.kill()
        with contextlib.suppress(ProcessLookupError):
            os.kill(left_behind, signal.SIGKILL)
