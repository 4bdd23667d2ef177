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
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from voice.core.audio import FRAME_MS, Pcm
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput, PlayoutMark
from voice.errors import LineError
from voice.lines.base import CallStart
from voice.lines.effects import MulawChannel
from voice.lines.headers import Headers
from voice.lines.redact import redact_text
from voice.lines.ws_client import WebsocketClient, closed_reason, connect

TWILIO_RATE = 8000
FLOOD_BACKLOG = 5000  # messages read from the socket but not yet taken by the driver
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
    fields: dict[str, Any] = field(default_factory=dict)


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
    fields = {k: v for k, v in obj.items() if k != "event"}
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


# --- the line ---------------------------------------------------------------------------------------------


class TwilioLine:
    """CallSim's side of a Twilio Media Streams call.  Implements the Line protocol."""

    def __init__(self, url: str, *, open_timeout_s: float = 10.0, headers: Headers = ()) -> None:
        self.url = url
        self.headers = headers  # on the websocket upgrade (--header); never recorded
        self.open_timeout_s = open_timeout_s
        self._ws: WebsocketClient | None = None
        self._ids: StreamIds | None = None
        self._closed_reason: str | None = None
        self._seq = 0
        self._chunk = 0
        self._up = MulawChannel()  # caller → bot
        self._down = MulawChannel()  # bot → caller
        self._inbox: asyncio.Queue[LineInput] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._marks_received = 0
        self.marks_echoed: list[str] = []  # names, in the order they were answered
        self.stream_sid: str | None = None

    # --- Line protocol ---------------------------------------------------------------------------------

    async def open(self, start: CallStart) -> None:
        try:
            self._ws = await connect(
                self.url, open_timeout=self.open_timeout_s, max_size=MAX_MESSAGE_BYTES, headers=self.headers
            )
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise LineError(redact_text(f"cannot connect to {self.url}: {exc}")) from exc
        ids = self._ids = StreamIds.for_call(start.call_id)
        self.stream_sid = ids.stream_sid
        await self._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        await self._send(
            {
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
        )
        self._reader = asyncio.create_task(self._read())

    async def send(self, pcm: Pcm) -> None:
        """Send one 20 ms caller frame as ``media``."""
        if self._ids is None:
            return
        self._chunk += 1
        await self._send(
            {
                "event": "media",
                "sequenceNumber": self._next_seq(),
                "media": {
                    "track": "inbound",
                    "chunk": str(self._chunk),
                    "timestamp": str((self._chunk - 1) * FRAME_MS),
                    "payload": base64.b64encode(self._up.encode(pcm)).decode("ascii"),
                },
                "streamSid": self._ids.stream_sid,
            }
        )

    async def recv(self) -> LineInput:
        if self._ws is None:
            return LineClosed("never connected")
        if self._inbox.empty() and self._closed_reason is not None:
            return LineClosed(self._closed_reason)
        return await self._inbox.get()

    async def played(self, marks: tuple[str, ...]) -> None:
        """Answer the bot's marks whose audio the caller has now heard (or a ``clear`` dropped), in order."""
        for name in marks:
            await self._echo(name)

    async def hangup(self, reason: str) -> None:
        """Twilio's hang-up: ``stop``, then the socket closes (Twilio gives no reason on the wire)."""
        if self._ids is not None:
            ids = self._ids
            await self._send(
                {
                    "event": "stop",
                    "sequenceNumber": self._next_seq(),
                    "streamSid": ids.stream_sid,
                    "stop": {"accountSid": ids.account_sid, "callSid": ids.call_sid},
                }
            )
        await self.close()

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        if self._ws is not None:
            with contextlib.suppress(ConnectionClosed, OSError):
                await self._ws.close()
            self._end("closed by caller")

    # --- inside ------------------------------------------------------------------------------------------

    def _next_seq(self) -> str:
        self._seq += 1
        return str(self._seq)

    async def _send(self, message: dict[str, Any]) -> None:
        if self._ws is None or self._closed_reason is not None:
            return
        try:
            await self._ws.send(json.dumps(message, ensure_ascii=False))
        except ConnectionClosed as exc:
            self._end(closed_reason(exc))

    async def _echo(self, name: str) -> None:
        if self._ids is None or self._closed_reason is not None:
            return
        await self._send(
            {
                "event": "mark",
                "sequenceNumber": self._next_seq(),
                "streamSid": self._ids.stream_sid,
                "mark": {"name": name},
            }
        )
        self.marks_echoed.append(name)

    def _end(self, reason: str) -> None:
        """The line is over: later ``recv`` calls return ``LineClosed(reason)`` once the inbox is empty."""
        if self._closed_reason is None:
            self._closed_reason = reason
            self._inbox.put_nowait(LineClosed(reason))

    async def _read(self) -> None:
        assert self._ws is not None
        while self._closed_reason is None:
            try:
                message = await self._ws.recv()
            except ConnectionClosed as exc:
                rcvd = exc.rcvd
                if rcvd is not None and rcvd.code in (1000, 1001):
                    # Over Twilio a bot hangs up by closing the stream (or through Twilio's REST API).
                    why = f"the bot closed the stream (code {rcvd.code})"
                    self._inbox.put_nowait(AssistantControl("hangup", {"reason": why, "detail": rcvd.reason}))
                self._end(closed_reason(exc))
                return
            item = self._receive(message)
            if isinstance(item, LineClosed):
                self._end(item.reason)
                return
            if item is not None:
                self._inbox.put_nowait(item)
            if self._inbox.qsize() > FLOOD_BACKLOG:
                self._end(f"protocol_error: flood: {self._inbox.qsize()} messages not yet taken")
                return

    def _receive(self, message: str | bytes) -> LineInput | None:
        """A message from the bot → what the core gets (None: nothing), counting marks and unknown events."""
        parsed = parse_twilio_message(message, self.stream_sid)
        if isinstance(parsed, Violation):
            return LineClosed(parsed.reason)
        if isinstance(parsed, BotMedia):
            if not parsed.payload:
                return None
            return AssistantAudio(self._down.decode(parsed.payload))
        if isinstance(parsed, BotMark):
            self._marks_received += 1
            if self._marks_received - len(self.marks_echoed) > MAX_PENDING_MARKS:
                return LineClosed(f"protocol_error: flood: over {MAX_PENDING_MARKS} marks pending")
            return PlayoutMark(parsed.name)
        if isinstance(parsed, BotClear):
            return AssistantControl("clear")
        if parsed.event == "log":
            return AssistantControl("log", parsed.fields)
        # recorded and ignored; the core keeps the first 1000 records of it and counts the rest
        return AssistantControl("unknown", {"event": parsed.event[:_SHOWN], **parsed.fields})
