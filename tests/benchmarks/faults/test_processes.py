"""How the killed-process faults find the processes of a run: by the tag in their environment."""

import os
import subprocess
import sys

from voice.benchmarks.faults.processes import TAG, tagged_processes

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
# a parent that starts a child (which inherits its environment), says so, and waits
PARENT = (
    f"import subprocess, time; c = subprocess.Popen({SLEEPER!r}); print(c.pid, flush=True); time.sleep(60)"
)


def test_a_tagged_process_and_its_children_are_found_and_others_are_not():
    tag = f"test-{os.getpid()}"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], env={**os.environ, TAG: tag}, stdout=subprocess.PIPE, text=True
    )
    other = subprocess.Popen(SLEEPER)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert sorted(tagged_processes(tag)) == sorted([parent.pid, child])
    finally:
        for pid in tagged_processes(tag):
            os.kill(pid, 9)
        other.kill()
        parent.wait()
        other.wait()
