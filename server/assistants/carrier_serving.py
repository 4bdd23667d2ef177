"""A raw-PCM test assistant (the reference, the echo) behind a carrier's media stream, through pipecat.

The test assistants speak CallSim's raw protocol over one connection (binary 16 kHz PCM frames; JSON
``start``, ``stop``, ``clear``, ``log``, ``hangup``: :class:`~server.assistants.serving.CallConnection`).
:class:`CarrierConnection` is that connection over a carrier's websocket (Twilio, Telnyx, Plivo, Exotel,
Vonage, Genesys AudioHook; pipecat's protobuf protocol), translated both ways by pipecat's own serializer
for the carrier, made as a pipecat bot makes it (:func:`carrier_connection`: ids from pipecat's
``parse_telephony_websocket`` where pipecat's runner uses it).  So the fidelity bench's ground truth sits
behind exactly what a pipecat bot on that carrier sends: a clear is the serializer's answer to an
``InterruptionFrame``, a log its transport message, a hang-up the websocket's close (Genesys: its
``disconnect``).

The serializer works at the carrier's own rate (8 kHz, or 16 kHz for Vonage and pipecat), where pipecat
passes PCM through untouched; the 16 ↔ 8 kHz step is CallSim's streaming filter pair
(:class:`~voice.lines.effects.Downsampler`, :class:`~voice.lines.effects.Upsampler`), whose delay is fixed
(under a millisecond each way).  pipecat's own resampler, which a real pipecat bot would run, releases
audio in blocks of about 100 ms: that is the bot's timing, not the transport's, and would blur the truth.

No carrier's opening carries a dialogue, so the assistant's ``start`` is made up here, its ``dialogue``
from the URL's ``dialogue`` query parameter (JSON; the fidelity bench puts the reference's behaviour
there).  :func:`carrier_of` names the carrier a URL path asks for (``/telnyx``), or None for raw PCM.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Sequence
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

from pipecat.frames.frames import (
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    OutputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
)
from pipecat.runner.utils import parse_telephony_websocket
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.serializers.exotel import ExotelFrameSerializer
from pipecat.serializers.genesys import GenesysAudioHookSerializer
from pipecat.serializers.plivo import PlivoFrameSerializer
from pipecat.serializers.protobuf import ProtobufFrameSerializer
from pipecat.serializers.telnyx import TelnyxFrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.serializers.vonage import VonageFrameSerializer

from voice.core.audio import SAMPLE_RATE, from_bytes, to_bytes
from voice.lines.effects import Downsampler, Upsampler
from voice.lines.ws_server import ServerConnection

# carrier → the rate its serializer works at (the carrier's wire rate)
RATES = {"twilio": 8000, "telnyx": 8000, "plivo": 8000, "exotel": 8000, "genesys": 8000, "vonage": 16000,
         "pipecat": 16000}  # fmt: skip
STOPS = {("event", "stop"), ("type", "close")}  # CallSim's hang-up message, where the carrier has one


def carrier_of(path: str) -> str | None:
    """The carrier a request path names (its first segment: ``/telnyx?...`` → ``telnyx``), else None."""
    name = urlsplit(path).path.strip("/").split("/")[0]
    return name if name in RATES else None


class _Opening:
    """The websocket as pipecat's ``parse_telephony_websocket`` reads it, keeping what it read."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws, self.read = ws, list[str | bytes]()

    async def iter_text(self) -> AsyncIterator[str]:
        while True:
            message = await self.ws.recv()
            self.read.append(message)
            if isinstance(message, str):
                yield message


async def _serializer(carrier: str, ws: ServerConnection) -> tuple[FrameSerializer, list[str | bytes]]:
    """The serializer a pipecat bot would make for ``carrier``, and the messages read to make it."""
    if carrier == "vonage":
        return VonageFrameSerializer(), []
    if carrier == "genesys":
        return GenesysAudioHookSerializer(), []
    if carrier == "pipecat":
        return ProtobufFrameSerializer(), []
    opening = _Opening(ws)
    kind, data = await parse_telephony_websocket(opening)  # type: ignore[arg-type]  # it reads iter_text only
    if kind != carrier:
        raise ValueError(f"pipecat took a {carrier} call's opening for {kind}")
    made: FrameSerializer
    if carrier == "twilio":
        twilio = TwilioFrameSerializer.InputParams(auto_hang_up=False)
        made = TwilioFrameSerializer(data.stream_id or "", call_sid=data.call_id, params=twilio)
    elif carrier == "telnyx":
        telnyx = TelnyxFrameSerializer.InputParams(auto_hang_up=False)
        made = TelnyxFrameSerializer(
            data.stream_id, data.outbound_encoding, "PCMU", data.call_id, params=telnyx
        )
    elif carrier == "plivo":
        plivo = PlivoFrameSerializer.InputParams(auto_hang_up=False)
        made = PlivoFrameSerializer(data.stream_id, data.call_id, params=plivo)
    else:
        made = ExotelFrameSerializer(data.stream_id, data.call_id)
    return made, opening.read


async def carrier_connection(ws: ServerConnection, carrier: str) -> CarrierConnection:
    """The raw-protocol connection over ``ws``, a call from CallSim's line for ``carrier``."""
    serializer, read = await _serializer(carrier, ws)
    await serializer.setup(SimpleNamespace(audio_in_sample_rate=RATES[carrier]))  # type: ignore[arg-type]
    query = parse_qs(urlsplit(ws.request.path if ws.request is not None else "").query)
    dialogue = json.loads(query["dialogue"][-1]) if "dialogue" in query else {}
    start = {"event": "start", "sample_rate": SAMPLE_RATE, "encoding": "pcm_s16le", "dialogue": dialogue}
    return CarrierConnection(ws, serializer, RATES[carrier], json.dumps(start), read)


class CarrierConnection:
    """A :class:`~server.assistants.serving.CallConnection` over a carrier's websocket."""

    def __init__(
        self,
        ws: ServerConnection,
        serializer: FrameSerializer,
        rate: int,
        start: str,
        read: Sequence[str | bytes],
    ) -> None:
        self.ws, self.serializer, self.rate = ws, serializer, rate
        self._start, self._read = start, list(read)
        self._up = Upsampler() if rate != SAMPLE_RATE else None
        self._down = Downsampler() if rate != SAMPLE_RATE else None
        self._stream = self._translated()

    def __aiter__(self) -> AsyncIterator[str | bytes]:
        return self._stream

    async def recv(self) -> str | bytes:
        return await anext(self._stream)

    async def _translated(self) -> AsyncIterator[str | bytes]:
        """The call in the raw protocol: ``start``, then each caller frame as 16 kHz PCM, ``stop``."""
        yield self._start
        for message in self._read:
            for out in await self._inbound(message):
                yield out
        async for message in self.ws:
            for out in await self._inbound(message):
                yield out

    async def _inbound(self, message: str | bytes) -> list[str | bytes]:
        if isinstance(message, str):
            obj = json.loads(message)
            if any(obj.get(key) == value for key, value in STOPS):
                return [json.dumps({"event": "stop"})]
        frame = await self.serializer.deserialize(message)
        if isinstance(frame, InputAudioRawFrame):
            pcm = from_bytes(frame.audio)
            return [to_bytes(self._up(pcm) if self._up is not None else pcm)]
        if isinstance(frame, OutputTransportMessageFrame | OutputTransportMessageUrgentFrame):
            await self._send_frame(frame)  # the serializer's own answer (Genesys' opened, pong, closed)
        return []

    async def send(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            pcm = from_bytes(message)
            pcm = self._down(pcm) if self._down is not None else pcm
            await self._send_frame(OutputAudioRawFrame(to_bytes(pcm), self.rate, 1))
            return
        event = json.loads(message)
        if event.get("event") == "clear":
            await self._send_frame(InterruptionFrame())
        elif event.get("event") == "hangup":
            if isinstance(self.serializer, GenesysAudioHookSerializer):
                await self._send_frame(EndFrame())  # AudioHook's disconnect
            else:
                await self.ws.close()  # on a carrier the bot hangs up by closing
        else:
            await self._send_frame(OutputTransportMessageFrame(message=event))

    async def _send_frame(self, frame: Frame) -> None:
        out = await self.serializer.serialize(frame)
        if out:
            await self.ws.send(out)

    async def ping(self) -> Awaitable[float]:
        return await self.ws.ping()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await self.ws.close(code, reason)
