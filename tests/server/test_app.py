"""Serving the built-in assistant (``server/app.py``): several calls at once, a shutdown that hangs up every
call, ``serve`` reporting its URL, and a busy port.  The calls themselves are in ``test_assistant.py``;
both drive the server with ``assistant_client.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from pathlib import Path

import pytest
import websockets

from server.app import AssistantServer, serve
from server.config import AssistantSettings, PolicySettings, ServingSettings, SpeechEngines
from tests.server.assistant_client import DIALOGUE, FakeCallSim, call, running, start_message
from voice.errors import ConfigError
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_two_calls_at_once_and_shutdown_hangs_up_both(engines: SpeechEngines) -> None:
    other = dict(DIALOGUE, id="work-02", scenario="work", preset={"type": "none", "text": ""})
    async with running(engines) as server, call(server) as a, call(server) as b:
        await asyncio.gather(a.ws.send(start_message()), b.ws.send(start_message(other)))
        await asyncio.gather(a.first_audio_after(0.0, 5), b.first_audio_after(0.0, 5))
        assert server.app is not None and len(server.app.state.calls) == 2
        await server.stop()
        for sim in (a, b):
            assert await sim.wait_closed(5.0)
            assert sim.events("hangup") == [{"event": "hangup", "reason": "assistant shutting down"}]


async def test_serve_reports_its_url_and_stops_when_cancelled() -> None:
    memory = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    settings = AssistantSettings(
        serving=ServingSettings(port=0),
        policy=PolicySettings(start_timeout_secs=0.2),
        configure_logging=False,
        prewarm=False,
    )
    task = asyncio.create_task(serve(settings, ready, engines=memory))
    try:
        url = await asyncio.wait_for(ready, 30)
        async with websockets.connect(url, open_timeout=5) as ws:
            sim = FakeCallSim(ws)
            sim.start()
            await sim.first_audio_after(0.0, timeout=5)  # greeted from the default view
            await sim.close()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 15)
        memory.close()
    assert task.done()


async def test_a_busy_port_is_a_config_error(tmp_path: Path) -> None:
    memory = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    first = AssistantServer(
        AssistantSettings(serving=ServingSettings(port=0), configure_logging=False, prewarm=False),
        engines=memory,
    )
    await first.start(timeout=30)
    try:
        second = AssistantServer(
            AssistantSettings(
                serving=ServingSettings(port=first.port), configure_logging=False, prewarm=False
            ),
            engines=memory,
        )
        with pytest.raises(ConfigError, match="cannot listen"):
            await second.start(timeout=30)
    finally:
        await first.stop()
        memory.close()


async def test_a_finished_calls_pipeline_is_freed_not_kept_until_some_later_collection() -> None:
    memory = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    async with running(memory, prewarm=False, start_timeout_secs=0.2) as server, call(server) as sim:
        await sim.ws.send(start_message())
        await sim.first_audio_after(0.0, 5)
        assert server.app is not None
        (in_progress,) = server.app.state.calls
        worker = weakref.ref(in_progress.worker)
        del in_progress
        await sim.ws.send(json.dumps({"event": "stop", "reason": "done"}))
        assert await sim.wait_closed(5.0)
        for _ in range(50):  # the server's side of the call winds down after the socket closes
            if not server.app.state.calls:
                break
            await asyncio.sleep(0.1)
        assert server.app.state.memory.collections >= 1
        assert worker() is None  # the pipeline's reference cycles (and its VAD model) are gone
    memory.close()
