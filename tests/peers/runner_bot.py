"""Start the pipecat runner bot (:mod:`tests.peers.pipecat_runner_bot`) as its own process, on loopback."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from voice.app.run.launch import free_port, wait_listening

ROOT = Path(__file__).resolve().parents[2]
BOT = Path(__file__).with_name("pipecat_runner_bot.py")
LOOPBACK_ICE = Path(__file__).with_name("loopback_ice")
READY_TIMEOUT_S = 120.0  # pipecat, aiortc and Silero import in ~8 s here; a loaded CI machine is slower


@contextlib.contextmanager
def pipecat_runner_bot() -> Iterator[tuple[str, Path]]:
    """``python pipecat_runner_bot.py --host 127.0.0.1 --port P``; yields its offer URL and its log file."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(LOOPBACK_ICE), str(ROOT)])}
    with tempfile.TemporaryDirectory(prefix="runner-bot-") as tmp:
        log_path = Path(tmp) / "bot.log"
        with log_path.open("wb") as log:
            cmd = [sys.executable, str(BOT), "--host", "127.0.0.1", "--port", str(port)]
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp)
            try:
                wait_listening(proc, port, "the pipecat runner bot", READY_TIMEOUT_S)
                yield f"http://127.0.0.1:{port}/api/offer", log_path
            finally:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
