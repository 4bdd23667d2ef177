"""The one launcher of the assistants CallSim runs in child processes: the echo and the reference here (the
built-in assistant needs its speech models: tests/app/run/test_e2e.py and
tests/server/test_twilio_builtin.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from websockets.asyncio.client import connect

from server.assistants.behaviour import ReferenceBehaviour
from voice.app.run.launch import echo_assistant, reference_assistant
from voice.core.call import AssistantAudio, LineInput
from voice.errors import EngineUnavailable
from voice.lines.line import CallStart
from voice.lines.sip import SipLine


async def _echoed(url: str) -> list[int]:
    async with connect(url, ping_interval=None) as ws:
        await ws.send(json.dumps({"event": "start", "call_id": "c"}))
        for k in range(1, 5):
            await ws.send(np.full(320, k, dtype="<i2").tobytes())
        return [int(np.frombuffer(await asyncio.wait_for(ws.recv(), 5), "<i2")[0]) for _ in range(2)]


def test_the_echo_runs_in_a_process_of_its_own_until_the_block_ends() -> None:
    with echo_assistant(40) as (url, pid):
        assert Path(f"/proc/{pid}").exists()
        assert asyncio.run(_echoed(url)) == [1, 2]  # two frames (40 ms) late
    assert not Path(f"/proc/{pid}").exists()  # terminated and reaped


def test_a_child_that_exits_at_start_up_is_reported_at_once() -> None:
    with (
        pytest.raises(EngineUnavailable, match="exited at start-up"),
        echo_assistant(40, ["--delay-ms", "x"]),
    ):
        pass


async def test_the_reference_listens_until_the_block_ends() -> None:
    async with reference_assistant() as url, connect(url, ping_interval=None) as ws:
        await ws.send(json.dumps({"event": "start", "call_id": "c", "dialogue": {"id": "d"}}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 5))  # no behaviour given: it says so
        assert error["event"] == "error" and "no behaviour" in error["message"]
    with pytest.raises(OSError):
        async with connect(url, open_timeout=2):
            pass


async def _heard_over_sip(uri: str, frames: int, level: int) -> int:
    """Frames of sound a SIP caller hears while it sends ``frames`` frames of ``level`` in real time."""
    line = SipLine(uri)
    await line.open(CallStart("c", {}))
    heard: list[LineInput] = []

    async def listen() -> None:
        while True:
            heard.append(await line.recv())

    listener = asyncio.create_task(listen())
    try:
        for _ in range(frames):
            await line.send(np.full(320, level, dtype=np.int16))
            await asyncio.sleep(0.02)
    finally:
        listener.cancel()
        await line.close()
    return sum(1 for i in heard if isinstance(i, AssistantAudio) and int(np.abs(i.pcm).max()) > 500)


def test_the_echo_answers_sip_calls_with_sip() -> None:
    with echo_assistant(40, transport="sip") as (uri, _):
        assert uri.startswith("sip:assistant@127.0.0.1:")
        assert asyncio.run(_heard_over_sip(uri, 50, 3000)) >= 20


async def test_the_reference_answers_sip_calls_with_sip() -> None:
    behaviour = ReferenceBehaviour(300, None, True, False, greeting_ms=200.0, reply_len_ms=1000.0)
    async with reference_assistant(behaviour.to_json(), transport="sip") as uri:
        assert await _heard_over_sip(uri, 75, 0) >= 20  # its greeting, to a caller who says nothing


PARENT = """
import asyncio, os, sys
from voice.app.run.launch import reference_assistant

async def main():
    async with reference_assistant():
        print("listening", flush=True)
        await asyncio.sleep(60)

asyncio.run(main())
"""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_launched_assistant_dies_with_its_parent_even_on_sigkill() -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "listening"
        [child] = _children(parent.pid)
        os.kill(parent.pid, signal.SIGKILL)  # no finally, no cleanup: as `kill -9` of a run
        parent.wait(10)
        for _ in range(100):
            if (
                not Path(f"/proc/{child}").exists()
                or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
            ):
                break
            time.sleep(0.05)
        else:
            os.kill(child, signal.SIGKILL)
            raise AssertionError("the assistant outlived its parent")
    finally:
        parent.kill()
