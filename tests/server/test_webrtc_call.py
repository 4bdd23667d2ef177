"""One WebRTC call of the built-in (``server/webrtc_call.py``): an offer gathered on loopback only, and a
call built on a real SmallWebRTC connection from ``request_data``.  The calls themselves, end to end
with a real aiortc caller, are in ``test_webrtc_route.py``."""

from __future__ import annotations

import json

import pytest

from server.config import AssistantSettings, SpeechEngines
from server.webrtc_call import WebrtcCallTransport, build_webrtc_call
from server.webrtc_route import parse_offer
from tests.server.assistant_client import DIALOGUE
from tests.server.webrtc_client import LOOPBACK, offer_sdp, sdp_candidates
from voice.lines.webrtc_ice import gather_on
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS


async def test_an_offer_is_gathered_on_loopback_only() -> None:
    sdp = await offer_sdp()
    assert sdp_candidates(sdp) and set(sdp_candidates(sdp)) == {"127.0.0.1"}
    assert parse_offer({"sdp": sdp, "type": "offer"}).request_data == {}


@pytest.mark.models  # each call's pipeline builds pipecat's Silero VAD, which loads its ONNX model
async def test_a_call_is_built_on_an_answered_connection_from_request_data() -> None:
    from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection

    engines = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    connection = SmallWebRTCConnection()
    try:
        with gather_on(LOOPBACK):
            await connection.initialize(sdp=await offer_sdp(), type="offer")
        answer = connection.get_answer()
        assert answer is not None and set(sdp_candidates(answer["sdp"])) == {"127.0.0.1"}
        settings = AssistantSettings(configure_logging=False, prewarm=False)
        data = {"call_id": 7, "dialogue": json.dumps(DIALOGUE), "campaign": "x"}
        call = build_webrtc_call(connection, engines, settings=settings, request_data=data)
        assert isinstance(call.transport, WebrtcCallTransport) and call.websocket is None
        assert call.serializer.call_id == "7" and not call.serializer.playout.playing()
        unnamed = build_webrtc_call(connection, engines, settings=settings)
        assert unnamed.serializer.call_id == connection.pc_id  # no call_id: the peer connection's id
    finally:
        await connection.disconnect()
        engines.close()
