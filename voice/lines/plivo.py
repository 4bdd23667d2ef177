"""The Plivo audio stream line (``plivo+ws://``): CallSim plays Plivo, the bot is the websocket server.

As Plivo streams a call both ways (``<Stream bidirectional="true"
contentType="audio/x-mulaw;rate=8000">``, what pipecat's runner answers Plivo with): ``start`` (no
``connected`` before it) with ``start.callId``, ``streamId``, ``accountId``, ``tracks`` and
``mediaFormat`` (``audio/x-mulaw``, 8000 Hz), and ``extra_headers`` (``callsimCallId=...``: Plivo's slot
for the app's own key-value pairs); one ``media`` per 20 ms (base64 mu-law, 160 bytes, with ``track``,
``chunk`` and ``timestamp``: milliseconds since the stream began, where Plivo's own are Unix
milliseconds, so that reruns send the same messages), numbered by ``sequenceNumber``.  pipecat's
``parse_telephony_websocket`` tells Plivo from the others by ``start.streamId`` and ``start.callId``.
Plivo ends the stream by closing the websocket when the call ends: it has no stop message, so CallSim's
hang-up is the close.

From the bot: ``playAudio`` (``media.contentType`` ``audio/x-mulaw`` at 8000 Hz, or ``audio/x-l16`` at
8000 or 16000 Hz, base64), ``clearAudio`` (stop playing: :class:`~voice.core.call.AssistantControl`
``clear``, answered with ``clearedAudio`` once done) and ``checkpoint``, Plivo's mark, answered with
``playedStream`` once the audio before it has played.  Both answers wait for the call core's playout
(:class:`~voice.lines.carrier.PlayoutAcks`).  A bot hangs up through Plivo's REST API (pipecat's
``auto_hang_up``) or by closing the stream: a normal close is its hang-up.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from websockets.exceptions import ConnectionClosed

from voice.core.audio import FRAME_MS, SAMPLE_RATE, Pcm, from_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.lines.carrier import (
    PlayoutAcks,
    at_path,
    base64_field,
    check_id,
    closed_by_bot,
    compact,
    derived_hex,
    derived_id,
    json_event,
    passed_on,
    violation,
)
from voice.lines.effects import MulawChannel, NarrowbandChannel
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

PLIVO_RATE = 8000
# One message from the bot: 2 s of the largest format Plivo plays (16 kHz linear PCM: 64,000 bytes,
# 85,336 in base64) and its JSON, with room; larger is the bot's protocol error (close 1009).
MAX_MESSAGE_BYTES = 96 * 1024
CLEARED = "clearedAudio"  # the name the event log shows for the acknowledgement of a clearAudio


@dataclass(frozen=True)
class PlivoIds:
    call_id: str
    stream_id: str
    account_id: str

    @classmethod
    def for_call(cls, call_id: str) -> PlivoIds:
        return cls(derived_id("call", call_id), derived_id("stream", call_id), derived_hex("MA", call_id, 18))


class PlivoCodec:
    """Plivo's side of a bidirectional audio stream as messages.  Pure but for the call's running state."""

    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self) -> None:
        self.ids: PlivoIds | None = None
        self._extra = ""
        self._seq = 0
        self._chunk = 0
        self._up = MulawChannel()
        self._down = {"audio/x-mulaw": MulawChannel(), "audio/x-l16": NarrowbandChannel()}
        self.acks = PlayoutAcks[tuple[str, str]]()  # (event, checkpoint name) to answer

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _ids(self) -> PlivoIds:
        assert self.ids is not None, "start() first"
        return self.ids

    def start(self, start: CallStart) -> Sequence[Message]:
        ids = self.ids = PlivoIds.for_call(start.call_id)
        self._extra = f"callsimCallId={start.call_id}"
        opening = {
            "event": "start",
            "sequenceNumber": self._next_seq(),
            "start": {
                "callId": ids.call_id,
                "streamId": ids.stream_id,
                "accountId": ids.account_id,
                "tracks": ["inbound"],
                "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": PLIVO_RATE},
            },
            "extra_headers": self._extra,
        }
        return [compact(opening)]

    def audio(self, pcm: Pcm) -> Message:
        self._chunk += 1
        media = {
            "track": "inbound",
            "timestamp": str((self._chunk - 1) * FRAME_MS),
            "chunk": self._chunk,
            "payload": base64.b64encode(self._up.encode(pcm)).decode("ascii"),
        }
        message = {"event": "media", "sequenceNumber": self._next_seq(), "streamId": self._ids().stream_id}
        return compact({**message, "media": media, "extra_headers": self._extra})

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        """``playedStream`` for each checkpoint now played, ``clearedAudio`` for each clear done, in order."""
        out = []
        for event, name in self.acks.played(len(marks)):
            message: dict[str, str | int] = {"event": event, "sequenceNumber": self._next_seq()}
            message["streamId"] = self._ids().stream_id
            out.append(compact({**message, "name": name} if event == "playedStream" else message))
        return out

    def hangup(self, reason: str) -> Sequence[Message]:
        return ()  # Plivo says nothing: it closes the websocket when the call ends

    def decode(self, message: Message) -> Sequence[LineInput]:
        parsed = json_event(message, "event", "Plivo")
        if isinstance(parsed, LineClosed):
            return (parsed,)
        event, obj = parsed
        ours = ("playAudio", "checkpoint", "clearAudio")
        if event in ours and (bad := check_id(obj, "streamId", self._ids().stream_id, event)):
            return (bad,)
        if event == "playAudio":
            return self._play(obj)
        if event == "clearAudio":
            return (AssistantControl("clear"), self.acks.ask(CLEARED, (CLEARED, "")))
        if event == "checkpoint":
            name = obj.get("name")
            if not isinstance(name, str):
                return (violation("checkpoint without a string name"),)
            return (self.acks.ask(name, ("playedStream", name)),)
        return (passed_on(event, obj),)

    def _play(self, obj: dict[str, Any]) -> Sequence[LineInput]:  # the message as parsed
        kind, rate = at_path(obj, "media", "contentType"), at_path(obj, "media", "sampleRate")
        if (kind, rate) not in (("audio/x-mulaw", 8000), ("audio/x-l16", 8000), ("audio/x-l16", 16000)):
            return (violation(f"playAudio of {str(kind)[:40]!r} at {str(rate)[:12]} Hz (Plivo plays "
                              "audio/x-mulaw at 8000, audio/x-l16 at 8000 or 16000)"),)  # fmt: skip
        payload = base64_field(obj, "media", "payload")
        if isinstance(payload, LineClosed):
            return (payload,)
        if not payload:
            return ()
        if kind == "audio/x-l16" and len(payload) % 2:
            return (violation(f"playAudio of audio/x-l16 with an odd number of bytes ({len(payload)})"),)
        if rate == SAMPLE_RATE:
            return (AssistantAudio(from_bytes(payload)),)
        return (AssistantAudio(self._down[str(kind)].decode(payload)),)

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return closed_by_bot(exc)


class PlivoLine(WebsocketLine[PlivoCodec]):
    """CallSim's side of a Plivo audio stream: :class:`PlivoCodec` on the shell."""

    def new_codec(self) -> PlivoCodec:
        return PlivoCodec()
