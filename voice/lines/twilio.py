"""The Twilio Media Streams line (``twilio+ws://``): CallSim plays Twilio, the bot is the websocket server.

CallSim connects to the bot's URL and speaks Twilio's bidirectional Media Streams protocol as Twilio does
(``docs/twilio.md``): ``connected``, ``start`` (``streamSid``, ``callSid``, ``customParameters``,
``mediaFormat`` audio/x-mulaw 8000 Hz mono), one ``media`` per 20 ms (base64 mu-law, 160 bytes, with
``sequenceNumber``, ``chunk`` and ``timestamp``), and ``stop`` at hang-up.  From the bot it takes ``media``
(mu-law 8 kHz, any size), ``clear`` (drop unplayed audio) and ``mark``.

Marks: Twilio answers a bot's ``mark`` when the audio sent before it has been *played*, and at once for
marks whose audio a ``clear`` dropped.  The call core owns the playout, so a ``mark`` goes to it as a
:class:`~voice.core.call.PlayoutMark`, in order with the audio; the core reports it played in the
:class:`~voice.core.call.Tick` of the frame in which its audio ends (or a ``clear`` drops it), logs
``mark_played``, and the driver hands it back to :meth:`TwilioLine.played`, which answers it just before
that frame's caller audio: at most one frame (20 ms) late, as with Twilio's own packetized playout.
A flood of audio (more than a minute queued ahead of playout) is refused by the core for the same reason.
Unknown events, ``log``, ``clear`` and marks are all passed on: the core keeps the first 1000 records of
each kind and counts the rest (:mod:`voice.core.eventlog`).  One message is at most
:data:`MAX_MESSAGE_BYTES` (2 s of mu-law audio as base64 JSON, with room; larger: ``protocol_error``).

A bot hangs up by closing the websocket (Twilio has no hang-up message; real bots may also call Twilio's
REST API): a normal close (1000/1001) is returned as ``AssistantControl("hangup")`` before the
:class:`~voice.core.call.LineClosed`, so the caller hears what is still queued and the call ends as an
assistant hang-up, as with the raw protocol's ``hangup`` event.  Everything else the bot gets wrong
(malformed JSON, wrong encodings, floods of pending marks or messages, an abnormal close mid-call) comes
back from :meth:`recv` as :class:`~voice.core.call.LineClosed` with a reason; :meth:`recv` never raises.

This module is the protocol, :class:`TwilioCodec` (pure messages); the socket, the reader's inbox and its
flood cap are the one websocket line shell's (:mod:`voice.lines.ws_shell`), as for the raw PCM line.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed

from voice.core.audio import FRAME_MS, Pcm
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput, PlayoutMark
from voice.core.event_json import JsonObject, JsonValue
from voice.lines.effects import MulawChannel
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

TWILIO_RATE = 8000
MAX_PENDING_MARKS = 1000  # marks waiting for their audio to play
# one message from the bot: a media message of 2 s of mu-law (16,000 bytes, 21,336 in base64) and its
# JSON fits with room, as does any control event; larger is the bot's protocol error (close 1009)
MAX_MESSAGE_BYTES = 32 * 1024
_SHOWN = 200  # characters of a bad message kept in a reason


# --- the bot's messages: a pure parser -------------------------------------------------------------------


@dataclass(frozen=True)
class BotMedia:
    payload: bytes  # mu-law, 8 kHz, mono


@dataclass(frozen=True)
class BotMark:
    name: str


@dataclass(frozen=True)
class BotClear:
    pass


@dataclass(frozen=True)
class BotOther:
    """An event Twilio does not define (recorded and ignored), or CallSim's ``log`` extension."""

    event: str
    fields: dict[str, JsonValue] = field(default_factory=dict)  # the message's other members, as parsed


@dataclass(frozen=True)
class Violation:
    reason: str  # starts with "protocol_error: "


BotMessage = BotMedia | BotMark | BotClear | BotOther
_STREAM_EVENTS = ("media", "mark", "clear")


def parse_twilio_message(message: str | bytes, stream_sid: str | None = None) -> BotMessage | Violation:
    """One message from the bot → what it means, or why it breaks the protocol.  Pure; never raises.

    ``stream_sid``: if given, ``media``/``mark``/``clear`` naming another stream are violations (Twilio
    would not play them).  A missing ``streamSid`` is tolerated.
    """
    if isinstance(message, bytes):
        return _bad(f"binary message of {len(message)} bytes (Twilio Media Streams messages are JSON text)")
    try:
        obj: Any = json.loads(message)
    except (ValueError, RecursionError) as exc:
        return _bad(f"malformed JSON: {str(exc)[:_SHOWN]}")
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
        return _bad(f"not a JSON object with a string 'event': {message[:_SHOWN]!r}")
    event: str = obj["event"]
    sid = obj.get("streamSid", stream_sid)
    if event in _STREAM_EVENTS and stream_sid is not None and sid != stream_sid:
        return _bad(f"{event} for stream {str(obj['streamSid'])[:_SHOWN]!r}, not {stream_sid!r}")
    if event == "media":
        media = obj.get("media")
        payload = media.get("payload") if isinstance(media, dict) else None
        if not isinstance(payload, str):
            return _bad("media without a string media.payload")
        try:
            return BotMedia(base64.b64decode(payload, validate=True))
        except (binascii.Error, ValueError) as exc:
            return _bad(f"media.payload is not base64 ({exc})")
    if event == "mark":
        mark = obj.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        if not isinstance(name, str):
            return _bad("mark without a string mark.name")
        return BotMark(name)
    if event == "clear":
        return BotClear()
    fields: dict[str, JsonValue] = {k: v for k, v in obj.items() if k != "event"}
    if len(json.dumps(fields, default=str)) > 4 * _SHOWN:
        fields = {"truncated": json.dumps(fields, default=str)[: 4 * _SHOWN]}
    return BotOther(event, fields)


def _bad(why: str) -> Violation:
    return Violation(f"protocol_error: {why}")


# --- CallSim's messages -------------------------------------------------------------------------------


def _sid(prefix: str, call_id: str) -> str:
    """A Twilio-shaped SID (prefix + 32 hex), derived from the call id so reruns send the same ones."""
    return prefix + hashlib.sha256(f"{prefix}:{call_id}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class StreamIds:
    account_sid: str
    call_sid: str
    stream_sid: str

    @classmethod
    def for_call(cls, call_id: str) -> StreamIds:
        return cls(_sid("AC", call_id), _sid("CA", call_id), _sid("MZ", call_id))


def custom_parameters(start: CallStart) -> dict[str, str]:
    """What CallSim tells the bot in ``start.customParameters`` (TwiML ``<Parameter>``s: strings only)."""
    return {"call_id": start.call_id, "dialogue": json.dumps(dict(start.dialogue), ensure_ascii=False)}


# --- the codec, and the line -----------------------------------------------------------------------------


class TwilioCodec:
    """Twilio's side of Media Streams as messages: what Twilio sends, and what a bot's messages mean.

    Pure but for the call's running state (sequence numbers, chunks, the mu-law channels, marks pending);
    the websocket is the shell's (:mod:`voice.lines.ws_shell`).
    """

    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self) -> None:
        self.ids: StreamIds | None = None
        self._seq = 0
        self._chunk = 0
        self._up = MulawChannel()  # caller → bot
        self._down = MulawChannel()  # bot → caller
        self._marks_received = 0
        self.marks_echoed: list[str] = []  # names, in the order they were answered

    @property
    def stream_sid(self) -> str | None:
        return self.ids.stream_sid if self.ids is not None else None

    def _next_seq(self) -> str:
        self._seq += 1
        return str(self._seq)

    def start(self, start: CallStart) -> Sequence[Message]:
        """``connected``, then ``start`` with the call's SIDs, its parameters and the media format."""
        ids = self.ids = StreamIds.for_call(start.call_id)
        connected = {"event": "connected", "protocol": "Call", "version": "1.0.0"}
        opening: JsonObject = {
            "event": "start",
            "sequenceNumber": self._next_seq(),
            "start": {
                "accountSid": ids.account_sid,
                "streamSid": ids.stream_sid,
                "callSid": ids.call_sid,
                "tracks": ["inbound"],
                "customParameters": custom_parameters(start),
                "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": TWILIO_RATE, "channels": 1},
            },
            "streamSid": ids.stream_sid,
        }
        return [_json(connected), _json(opening)]

    def audio(self, pcm: Pcm) -> Message:
        """One 20 ms caller frame as ``media``."""
        assert self.ids is not None, "start() first"
        self._chunk += 1
        media = {
            "track": "inbound",
            "chunk": str(self._chunk),
            "timestamp": str((self._chunk - 1) * FRAME_MS),
            "payload": base64.b64encode(self._up.encode(pcm)).decode("ascii"),
        }
        seq = self._next_seq()
        return _json(
            {"event": "media", "sequenceNumber": seq, "media": media, "streamSid": self.ids.stream_sid}
        )

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        """Answer the bot's marks whose audio the caller has now heard (or a ``clear`` dropped), in order."""
        assert self.ids is not None, "start() first"
        echoes = []
        for name in marks:
            seq = self._next_seq()
            mark: JsonObject = {
                "event": "mark",
                "sequenceNumber": seq,
                "streamSid": self.ids.stream_sid,
                "mark": {"name": name},
            }
            echoes.append(_json(mark))
            self.marks_echoed.append(name)
        return echoes

    def hangup(self, reason: str) -> Sequence[Message]:
        """Twilio's hang-up: ``stop`` (Twilio gives no reason on the wire); the shell then closes."""
        assert self.ids is not None, "start() first"
        ids = self.ids
        stop = {"accountSid": ids.account_sid, "callSid": ids.call_sid}
        return [
            _json(
                {
                    "event": "stop",
                    "sequenceNumber": self._next_seq(),
                    "streamSid": ids.stream_sid,
                    "stop": stop,
                }
            )
        ]

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        """Over Twilio a bot hangs up by closing the stream (1000/1001), or through Twilio's REST API."""
        rcvd = exc.rcvd
        if rcvd is None or rcvd.code not in (1000, 1001):
            return ()
        why = f"the bot closed the stream (code {rcvd.code})"
        return (AssistantControl("hangup", {"reason": why, "detail": rcvd.reason}),)

    def decode(self, message: Message) -> Sequence[LineInput]:
        """A message from the bot → what the core gets (nothing for empty media), counting marks pending."""
        parsed = parse_twilio_message(message, self.stream_sid)
        if isinstance(parsed, Violation):
            return (LineClosed(parsed.reason),)
        if isinstance(parsed, BotMedia):
            return (AssistantAudio(self._down.decode(parsed.payload)),) if parsed.payload else ()
        if isinstance(parsed, BotMark):
            self._marks_received += 1
            if self._marks_received - len(self.marks_echoed) > MAX_PENDING_MARKS:
                return (LineClosed(f"protocol_error: flood: over {MAX_PENDING_MARKS} marks pending"),)
            return (PlayoutMark(parsed.name),)
        if isinstance(parsed, BotClear):
            return (AssistantControl("clear"),)
        if parsed.event == "log":
            return (AssistantControl("log", parsed.fields),)
        # recorded and ignored; the core keeps the first 1000 records of it and counts the rest
        return (AssistantControl("unknown", {"event": parsed.event[:_SHOWN], **parsed.fields}),)


def _json(message: JsonObject) -> str:
    return json.dumps(message, ensure_ascii=False)


class TwilioLine(WebsocketLine[TwilioCodec]):
    """CallSim's side of a Twilio Media Streams call: :class:`TwilioCodec` on the shell."""

    def new_codec(self) -> TwilioCodec:
        return TwilioCodec()

    @property
    def marks_echoed(self) -> list[str]:
        """The bot's marks answered so far, in order."""
        return self.codec.marks_echoed

    @property
    def stream_sid(self) -> str | None:
        return self.codec.stream_sid
