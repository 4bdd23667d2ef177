"""The built-in assistant taking Twilio Media Streams calls, through pipecat's own Twilio support.

A call on the ``/twilio`` route is answered the way pipecat's telephony examples answer Twilio: pipecat's
``parse_telephony_websocket`` reads the ``connected`` and ``start`` messages (``streamSid``, ``callSid``,
``customParameters``), then pipecat's ``FastAPIWebsocketTransport`` runs with pipecat's
``TwilioFrameSerializer`` (``auto_hang_up=False``: no Twilio account, no REST call; hanging up is closing
the socket).  So CallSim's Twilio line is exercised against pipecat's real implementation of the protocol.

CallSim puts the dialogue's assistant view in ``customParameters["dialogue"]`` (a JSON string: TwiML
parameters are strings); it becomes the same ``start`` message the ``/pcm`` route gets, so the policy is
configured the same way over both routes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from fastapi import WebSocket
from pipecat.frames.frames import (
    AudioRawFrame,
    CancelWorkerFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
)
from pipecat.runner.utils import parse_telephony_websocket
from pipecat.serializers.twilio import TwilioFrameSerializer

from server.pcm_serializer import PlayoutTracker, StartMessage
from voice.core.audio import SAMPLE_RATE

logger = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_SECS = 10.0
TWILIO_RATE = 8000


class TwilioCallSerializer(TwilioFrameSerializer):
    """pipecat's ``TwilioFrameSerializer``, unchanged on the wire, plus what the built-in's pipeline reads.

    Like :class:`server.pcm_serializer.PcmSerializer` it keeps an estimate of what is still playing at the
    caller's end (the barge-in strategy asks for more speech while the caller hears us), byte counts for
    the call log, and whether the caller hung up.  It also never raises on garbage: pipecat's own
    ``deserialize`` lets e.g. a JSON array or bad base64 escape, which would end the receive loop.
    """

    def __init__(self, stream_sid: str, call_sid: str | None, *, call_id: str | None = None) -> None:
        super().__init__(
            stream_sid=stream_sid,
            call_sid=call_sid,
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
        )
        self.playout = PlayoutTracker()
        self.call_id = call_id or call_sid
        self.stopped = False
        self.hung_up = False
        self.malformed = 0
        self.bytes_in = 0  # as 16 kHz PCM16, like PcmSerializer's counts
        self.bytes_out = 0

    async def serialize(self, frame: Frame) -> str | bytes | None:
        """pipecat's serialization; audio sent is also added to the playout estimate."""
        if self.stopped:
            return None
        out = await super().serialize(frame)
        if isinstance(out, str) and isinstance(frame, AudioRawFrame):
            # What went out, not what came in: pipecat's resampler may hold audio back or release a batch.
            seconds = _payload_bytes(out) / TWILIO_RATE
            self.playout.on_audio_sent(seconds)
            self.bytes_out += round(seconds * SAMPLE_RATE) * 2
        elif isinstance(frame, InterruptionFrame):
            self.playout.on_clear()
        return out

    async def deserialize(self, data: str | bytes) -> Frame | None:
        """pipecat's deserialization; ``stop`` ends the call (nothing queued is worth sending then)."""
        if isinstance(data, str) and '"stop"' in data:
            with contextlib.suppress(ValueError, RecursionError):  # nested too deep: not a stop
                message = json.loads(data)
                if isinstance(message, dict) and message.get("event") == "stop":
                    self.stopped = True
                    logger.info(f"call {self.call_id}: caller hung up (Twilio stop)")
                    return CancelWorkerFrame(reason="caller hung up")
        try:
            frame = await super().deserialize(data)
        except Exception as exc:  # pipecat assumes well-formed messages
            self.malformed += 1
            logger.warning(f"TwilioCallSerializer: dropping a malformed message ({exc!r})")
            return None
        if isinstance(frame, InputAudioRawFrame):
            self.bytes_in += len(frame.audio) * SAMPLE_RATE // max(1, frame.sample_rate)
        return frame


def _payload_bytes(message: str) -> int:
    """Bytes of mu-law in one of pipecat's ``media`` messages (0 if it is not one)."""
    with contextlib.suppress(ValueError, KeyError, TypeError):
        payload = json.loads(message)["media"]["payload"]
        return len(payload) * 3 // 4 - payload[-2:].count("=")
    return 0


def start_message(call_id: str | None, parameters: dict[str, Any]) -> StartMessage:
    """The ``/pcm``-style ``start`` message from a Twilio ``start``'s custom parameters."""
    raw = parameters.get("dialogue")
    dialogue: Any = None
    if isinstance(raw, str):
        with contextlib.suppress(ValueError):
            dialogue = json.loads(raw)
    elif isinstance(raw, dict):
        dialogue = raw
    if raw is not None and not isinstance(dialogue, dict):
        logger.warning(f"call {call_id}: customParameters.dialogue is not a JSON object; default view")
        dialogue = None
    return {"event": "start", "call_id": parameters.get("call_id") or call_id, "dialogue": dialogue}


async def answer_twilio(
    websocket: WebSocket, timeout: float = HANDSHAKE_TIMEOUT_SECS
) -> tuple[TwilioCallSerializer, StartMessage] | None:
    """Read the Twilio handshake on an accepted websocket; the call's serializer and start message.

    None (after closing the socket) if the client does not speak Twilio or says nothing in time.
    """
    try:
        kind, data = await asyncio.wait_for(parse_telephony_websocket(websocket), timeout)
    except Exception as exc:  # closed early, timed out, or pipecat's parser gave up
        logger.warning(f"twilio route: no Twilio handshake ({exc!r})")
        kind, data = "none", None
    if kind != "twilio" or data is None or not data.stream_id:
        logger.warning(f"twilio route: not a Twilio Media Stream ({kind}); closing")
        with contextlib.suppress(Exception):
            await websocket.close(code=1008)
        return None
    start = start_message(data.call_id, dict(data.body or {}))
    serializer = TwilioCallSerializer(data.stream_id, data.call_id, call_id=start["call_id"])
    return serializer, start
