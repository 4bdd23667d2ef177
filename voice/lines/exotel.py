"""The Exotel voicebot line (``exotel+ws://``): CallSim plays Exotel's Voicebot applet, the bot is the server.

As Exotel streams a call both ways: ``connected``, then ``start`` with ``stream_sid`` and
``start.stream_sid``, ``call_sid``, ``account_sid``, ``from``/``to`` (empty: CallSim has no numbers),
``custom_parameters`` (``{"call_id": ...}``) and ``media_format`` (``encoding`` base64, ``sample_rate``,
``bit_rate``); one ``media`` per 20 ms (base64 of 16-bit little-endian linear PCM, mono, with ``chunk``
and ``timestamp``: milliseconds since the stream began) numbered by ``sequence_number``; ``stop``
(``reason`` callended) at hang-up.  pipecat's ``parse_telephony_websocket`` tells Exotel from the others
by ``event`` start with ``start.stream_sid``, ``call_sid`` and ``account_sid``.

The rate is 8000 Hz unless the bot's URL asks for another, as an Exotel applet is configured
(``?sample-rate=16000``; CallSim plays 8000 and 16000, not Exotel's 24000).  From the bot: ``media``
(the same PCM, base64; Exotel asks for multiples of 320 bytes, which CallSim does not insist on), ``clear``
(stop playing: :class:`~voice.core.call.AssistantControl` ``clear``, as Twilio's) and ``mark``, answered
with a ``mark`` once its audio has played (:class:`~voice.lines.carrier.PlayoutAcks`).  A bot hangs up by
closing the stream: a normal close is its hang-up.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from websockets.exceptions import ConnectionClosed

from voice.core.audio import FRAME_MS, SAMPLE_RATE, Pcm, from_bytes, to_bytes
from voice.core.call import AssistantAudio, LineClosed, LineInput
from voice.lines.carrier import (
    PlayoutAcks,
    base64_field,
    check_id,
    clear_or_mark,
    closed_by_bot,
    compact,
    derived_hex,
    json_event,
    passed_on,
    violation,
)
from voice.lines.effects import NarrowbandChannel
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

RATES = (8000, 16000)
# One message from the bot: Exotel takes chunks of up to 100 KB of PCM (133,336 in base64); its JSON fits
# with room.  Larger is the bot's protocol error (close 1009).
MAX_MESSAGE_BYTES = 160 * 1024


def rate_of(url: str) -> int:
    """The sample rate an Exotel applet would stream for ``url`` (its ``sample-rate`` query, else 8000)."""
    asked = parse_qs(urlsplit(url).query).get("sample-rate", ["8000"])[-1]
    if not asked.isdigit() or int(asked) not in RATES:
        raise ValueError(
            f"sample-rate={asked[:12]!r}: CallSim plays Exotel at {' or '.join(map(str, RATES))} Hz"
        )
    return int(asked)


@dataclass(frozen=True)
class ExotelIds:
    stream_sid: str
    call_sid: str
    account_sid: str

    @classmethod
    def for_call(cls, call_id: str) -> ExotelIds:
        return cls(
            derived_hex("", f"stream:{call_id}"),
            derived_hex("", f"call:{call_id}"),
            derived_hex("", call_id, 12),
        )


class ExotelCodec:
    """Exotel's side of a bidirectional voicebot stream as messages.  Pure but for the call's state."""

    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self, rate: int = 8000) -> None:
        if rate not in RATES:
            raise ValueError(f"Exotel at {rate} Hz: CallSim plays 8000 or 16000")
        self.rate = rate
        self.ids: ExotelIds | None = None
        self._seq = 0
        self._chunk = 0
        self._up = NarrowbandChannel() if rate != SAMPLE_RATE else None
        self._down = NarrowbandChannel() if rate != SAMPLE_RATE else None
        self.marks = PlayoutAcks[str]()

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _ids(self) -> ExotelIds:
        assert self.ids is not None, "start() first"
        return self.ids

    def start(self, start: CallStart) -> Sequence[Message]:
        ids = self.ids = ExotelIds.for_call(start.call_id)
        fmt = {
            "encoding": "base64",
            "sample_rate": str(self.rate),
            "bit_rate": f"{self.rate * 16 // 1000}kbps",
        }
        opening = {
            "event": "start",
            "sequence_number": self._next_seq(),
            "stream_sid": ids.stream_sid,
            "start": {
                "stream_sid": ids.stream_sid,
                "call_sid": ids.call_sid,
                "account_sid": ids.account_sid,
                "from": "",
                "to": "",
                "custom_parameters": {"call_id": start.call_id},
                "media_format": fmt,
            },
        }
        return [compact({"event": "connected"}), compact(opening)]

    def audio(self, pcm: Pcm) -> Message:
        self._chunk += 1
        wire = self._up.encode(pcm) if self._up is not None else to_bytes(pcm)
        media = {
            "chunk": self._chunk,
            "timestamp": str((self._chunk - 1) * FRAME_MS),
            "payload": base64.b64encode(wire).decode("ascii"),
        }
        seq = self._next_seq()
        return compact(
            {"event": "media", "sequence_number": seq, "stream_sid": self._ids().stream_sid, "media": media}
        )

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        """Exotel's ``mark`` for each of the bot's marks whose audio has now played, in order."""
        sid = self._ids().stream_sid
        return [
            compact(
                {"event": "mark", "sequence_number": self._next_seq(), "stream_sid": sid, "mark": {"name": n}}
            )
            for n in self.marks.played(len(marks))
        ]

    def hangup(self, reason: str) -> Sequence[Message]:
        ids = self._ids()
        stop = {"call_sid": ids.call_sid, "account_sid": ids.account_sid, "reason": "callended"}
        seq = self._next_seq()
        return [
            compact({"event": "stop", "sequence_number": seq, "stream_sid": ids.stream_sid, "stop": stop})
        ]

    def decode(self, message: Message) -> Sequence[LineInput]:
        parsed = json_event(message, "event", "Exotel")
        if isinstance(parsed, LineClosed):
            return (parsed,)
        event, obj = parsed
        if event in ("media", "mark", "clear") and (
            bad := check_id(obj, "stream_sid", self._ids().stream_sid, event)
        ):
            return (bad,)
        if event == "media":
            payload = base64_field(obj, "media", "payload")
            if isinstance(payload, LineClosed):
                return (payload,)
            if len(payload) % 2:
                return (violation(f"media of 16-bit PCM with an odd number of bytes ({len(payload)})"),)
            if not payload:
                return ()
            return (
                AssistantAudio(self._down.decode(payload) if self._down is not None else from_bytes(payload)),
            )
        if (control := clear_or_mark(event, obj, self.marks)) is not None:
            return (control,)
        return (passed_on(event, obj),)

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return closed_by_bot(exc)


class ExotelLine(WebsocketLine[ExotelCodec]):
    """CallSim's side of an Exotel voicebot stream: :class:`ExotelCodec` at the URL's ``sample-rate``."""

    def new_codec(self) -> ExotelCodec:
        return ExotelCodec(rate_of(self.url))
