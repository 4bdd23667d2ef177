"""The built-in assistant's ``/twilio`` route: pipecat's Twilio serializer behind CallSim's Twilio line
(in-memory speech engines, so it is fast; the real-engine call is in ``test_twilio_builtin.py``)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import websockets
from pipecat.frames.frames import (
    CancelWorkerFrame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
)

from server.app import AssistantServer
from server.config import AssistantSettings, ServingSettings, SpeechEngines
from server.policy.rules import PolicyReply
from server.twilio_route import TwilioCallSerializer, start_message
from voice.core.call import AssistantAudio, AssistantControl, LineClosed
from voice.errors import ConfigError
from voice.lines.line import CallStart
from voice.lines.twilio import TwilioLine
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

VIEW = {
    "id": "d7",
    "scenario": "work",
    "preset": {"type": "regular", "text": "在开会"},
    "owner_goal": "别打扰",
}


async def test_the_serializer_is_pipecats_on_the_wire_and_tracks_playout() -> None:
    s = TwilioCallSerializer("MZ1", "CA1", call_id="c1")
    await s.setup(SimpleNamespace(audio_in_sample_rate=8000))  # type: ignore[arg-type]
    out = await s.serialize(OutputAudioRawFrame(bytes(320), sample_rate=8000, num_channels=1))
    assert isinstance(out, str)
    message = json.loads(out)
    assert message["event"] == "media" and message["streamSid"] == "MZ1"
    assert len(base64.b64decode(message["media"]["payload"])) == 160
    assert s.playout.playing() and s.bytes_out == 640
    assert json.loads(await s.serialize(InterruptionFrame()) or "") == {"event": "clear", "streamSid": "MZ1"}
    assert not s.playout.playing()
    media = {"event": "media", "media": {"payload": base64.b64encode(bytes([0xFF] * 160)).decode()}}
    frame = await s.deserialize(json.dumps(media))
    assert isinstance(frame, InputAudioRawFrame) and len(frame.audio) == 320 and s.bytes_in == 640
    deep_stop = '{"event": "stop", "x": ' + "[" * 100_000  # "stop" in it, nested past the parser's depth
    for garbage in ("[1]", '{"event": "media", "media": {"payload": "%%"}}', "nope", b"\xff\xfe", deep_stop):
        assert await s.deserialize(garbage) is None
    assert s.malformed >= 1  # pipecat itself would have raised on the JSON array
    stop = await s.deserialize(json.dumps({"event": "stop", "stop": {}}))
    assert isinstance(stop, CancelWorkerFrame) and s.stopped
    assert await s.serialize(OutputAudioRawFrame(bytes(320), sample_rate=8000, num_channels=1)) is None


def test_the_start_message_comes_from_custom_parameters() -> None:
    assert start_message("CA1", {"call_id": "c1", "dialogue": json.dumps(VIEW)}) == {
        "event": "start",
        "call_id": "c1",
        "dialogue": VIEW,
    }
    assert start_message("CA1", {"dialogue": "{not json"}) == {
        "event": "start",
        "call_id": "CA1",
        "dialogue": None,
    }
    assert start_message("CA1", {"dialogue": "[1]"})["dialogue"] is None
    assert start_message("CA1", {"dialogue": VIEW})["dialogue"] == VIEW
    assert start_message(None, {})["dialogue"] is None


def test_the_routes_must_differ() -> None:
    with pytest.raises(ConfigError, match="twilio_path"):
        ServingSettings(twilio_path="/pcm")
    with pytest.raises(ConfigError, match="twilio_path"):
        ServingSettings(twilio_path="twilio")


@dataclass
class Recording:
    """A policy that remembers the view it was built from."""

    view: Mapping[str, Any]
    seen: list[Mapping[str, Any]]

    def greeting(self) -> str:
        self.seen.append(self.view)
        return "您好。"

    def respond(self, caller_text: str) -> PolicyReply:
        return PolicyReply("好的。")


async def test_a_twilio_call_is_configured_from_custom_parameters_and_greets() -> None:
    seen: list[Mapping[str, Any]] = []
    engines = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    server = AssistantServer(
        AssistantSettings(serving=ServingSettings(port=0), configure_logging=False, prewarm=False),
        engines=engines,
        policy_factory=lambda view: Recording(view, seen),
    )
    await server.start(timeout=30)
    try:
        assert server.twilio_url.endswith("/twilio")
        line = TwilioLine(server.twilio_url)
        await line.open(CallStart("call-9", VIEW))
        audio = 0
        log_kinds: list[object] = []
        for _ in range(40):
            await line.send(np.zeros(320, np.int16))
            while not line._inbox.empty():
                item = await line.recv()
                if isinstance(item, AssistantAudio):
                    audio += len(item.pcm)
                elif isinstance(item, AssistantControl) and item.event == "log":
                    log_kinds.append(item.payload.get("kind"))
            await asyncio.sleep(0.02)
        assert seen == [VIEW]  # the policy got the dialogue's view from customParameters
        assert audio > 16000 * 0.3  # the greeting, as 8 kHz mu-law turned back into 16 kHz
        assert "greeting" in log_kinds  # pipecat forwards the log messages
        assert server.app is not None and len(server.app.state.calls) == 1
        await line.hangup("completed")
        for _ in range(50):
            if not server.app.state.calls:
                break
            await asyncio.sleep(0.1)
        assert not server.app.state.calls
    finally:
        await server.stop()
        engines.close()


async def test_a_client_that_does_not_speak_twilio_is_turned_away() -> None:
    engines = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    server = AssistantServer(
        AssistantSettings(serving=ServingSettings(port=0), configure_logging=False, prewarm=False),
        engines=engines,
    )
    await server.start(timeout=30)
    try:
        async with websockets.connect(server.twilio_url) as ws:
            await ws.send(json.dumps({"event": "start", "call_id": "x", "sample_rate": 16000}))
            await ws.send(bytes(640))
            with pytest.raises(websockets.ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 10)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1008
        line = TwilioLine(server.twilio_url)  # and the route still takes proper calls
        await line.open(CallStart("ok", VIEW))
        await line.send(np.zeros(320, np.int16))
        first = await asyncio.wait_for(line.recv(), 10)
        assert not isinstance(first, LineClosed)
        await line.close()
    finally:
        await server.stop()
        engines.close()
