"""How the killed-process faults find the processes of a run: by the tag in their environment."""

import os
import subprocess
import sys
import threading

from voice.app.benchmarks.faults.processes import TAG, tagged_processes
from voice.core.clock import monotonic_s

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
# a parent that starts a child (which inherits its environment), says so, and waits
PARENT = (
    f"import subprocess, time; c = subprocess.Popen({SLEEPER!r}); print(c.pid, flush=True); time.sleep(60)"
)


def _found_within(tag: str, expected: list[int], seconds: float = 10.0) -> list[int]:
    """The tagged processes once they are the expected ones, or as they are after ``seconds``.

    A process that has just been started can read as having an empty environment for a moment: ``Popen``
    returns when the close-on-exec pipe closes, and the kernel sets the new program's environment a little
    after that.
    """
    end = monotonic_s() + seconds
    while sorted(found := tagged_processes(tag)) != sorted(expected) and monotonic_s() < end:
        threading.Event().wait(0.05)
    return found


def test_a_tagged_process_and_its_children_are_found_and_others_are_not():
    tag = f"test-{os.getpid()}"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], env={**os.environ, TAG: tag}, stdout=subprocess.PIPE, text=True
    )
    other = subprocess.Popen(SLEEPER)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        found = _found_within(tag, [parent.pid, child])
        assert sorted(found) == sorted([parent.pid, child])
        assert other.pid not in found
    finally:
        for pid in tagged_processes(tag):
            os.kill(pid, 9)
        other.kill()
        parent.wait()
        other.wait()
