"""The Telnyx media streaming line (``telnyx+ws://``): CallSim plays Telnyx, the bot is the websocket server.

As Telnyx opens a bidirectional media stream (``stream_bidirectional_mode=rtp``): ``connected``
(``version``), then ``start`` with the ``stream_id`` at the top and ``start.call_control_id``,
``user_id``, ``client_state`` (base64 of ``{"call_id": ...}``: where a Telnyx app keeps its own state) and
``media_format`` (``PCMU`` or ``PCMA``, 8000 Hz, mono); one ``media`` per 20 ms (base64 G.711, 160 bytes,
``track`` inbound, ``chunk``, ``timestamp``, all numbered by ``sequence_number``); ``stop`` at hang-up.
pipecat's ``parse_telephony_websocket`` tells Telnyx from the others by that ``stream_id`` and
``call_control_id``, and reads the encoding from ``media_format``.

From the bot: ``media`` (G.711 at 8 kHz, any length: Telnyx takes 20 ms to 30 s a message), ``clear``
(stop playing: :class:`~voice.core.call.AssistantControl` ``clear``, as Twilio's) and ``mark``, answered
with a ``mark`` once its audio has played (:class:`~voice.lines.carrier.PlayoutAcks`).  The bot's audio
is decoded in the stream's bidirectional codec: PCMU unless the codec is told otherwise, which is what
pipecat's runner makes its ``TelnyxFrameSerializer`` send whatever the call's own encoding.  A bot hangs
up through Telnyx's REST API (pipecat's ``auto_hang_up``, which CallSim cannot see) and by closing the
stream: a normal close is its hang-up.  Anything else malformed ends the call with ``protocol_error``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass

from websockets.exceptions import ConnectionClosed

from voice.core.audio import FRAME_MS, Pcm
from voice.core.call import AssistantAudio, LineClosed, LineInput
from voice.lines.carrier import (
    PlayoutAcks,
    base64_field,
    check_id,
    clear_or_mark,
    closed_by_bot,
    compact,
    derived_id,
    json_event,
    passed_on,
)
from voice.lines.effects import AlawChannel, MulawChannel
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

TELNYX_RATE = 8000
ENCODINGS = {"PCMU": MulawChannel, "PCMA": AlawChannel}
# One message from the bot: Telnyx plays chunks of up to 30 s (240,000 bytes of G.711, 320,000 in
# base64); its JSON fits with room.  Larger is the bot's protocol error (close 1009).
MAX_MESSAGE_BYTES = 352 * 1024


@dataclass(frozen=True)
class TelnyxIds:
    stream_id: str
    call_control_id: str
    user_id: str

    @classmethod
    def for_call(cls, call_id: str) -> TelnyxIds:
        return cls(
            derived_id("stream", call_id), "v3:" + derived_id("call", call_id), derived_id("user", call_id)
        )


class TelnyxCodec:
    """Telnyx's side of a bidirectional media stream as messages.  Pure but for the call's running state."""

    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self, encoding: str = "PCMU", bot_encoding: str = "PCMU") -> None:
        if encoding not in ENCODINGS or bot_encoding not in ENCODINGS:
            raise ValueError(f"Telnyx encodings are {sorted(ENCODINGS)}, not {encoding!r}/{bot_encoding!r}")
        self.encoding, self.bot_encoding = encoding, bot_encoding
        self.ids: TelnyxIds | None = None
        self._seq = 0
        self._chunk = 0
        self._up = ENCODINGS[encoding]()  # caller → bot
        self._down = ENCODINGS[bot_encoding]()  # bot → caller
        self.marks = PlayoutAcks[str]()

    def _next_seq(self) -> str:
        self._seq += 1
        return str(self._seq)

    def _ids(self) -> TelnyxIds:
        assert self.ids is not None, "start() first"
        return self.ids

    def start(self, start: CallStart) -> Sequence[Message]:
        ids = self.ids = TelnyxIds.for_call(start.call_id)
        state = base64.b64encode(json.dumps({"call_id": start.call_id}).encode()).decode("ascii")
        opening = {
            "event": "start",
            "sequence_number": self._next_seq(),
            "start": {
                "user_id": ids.user_id,
                "call_control_id": ids.call_control_id,
                "client_state": state,
                "media_format": {"encoding": self.encoding, "sample_rate": TELNYX_RATE, "channels": 1},
            },
            "stream_id": ids.stream_id,
        }
        return [compact({"event": "connected", "version": "1.0.0"}), compact(opening)]

    def audio(self, pcm: Pcm) -> Message:
        self._chunk += 1
        media = {
            "track": "inbound",
            "chunk": str(self._chunk),
            "timestamp": str((self._chunk - 1) * FRAME_MS),
            "payload": base64.b64encode(self._up.encode(pcm)).decode("ascii"),
        }
        seq = self._next_seq()
        return compact(
            {"event": "media", "sequence_number": seq, "media": media, "stream_id": self._ids().stream_id}
        )

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        """Telnyx's ``mark`` for each of the bot's marks whose audio has now played, in order."""
        sid = self._ids().stream_id
        return [
            compact(
                {"event": "mark", "sequence_number": self._next_seq(), "stream_id": sid, "mark": {"name": n}}
            )
            for n in self.marks.played(len(marks))
        ]

    def hangup(self, reason: str) -> Sequence[Message]:
        ids = self._ids()
        stop = {"user_id": ids.user_id, "call_control_id": ids.call_control_id}
        return [
            compact(
                {
                    "event": "stop",
                    "sequence_number": self._next_seq(),
                    "stop": stop,
                    "stream_id": ids.stream_id,
                }
            )
        ]

    def decode(self, message: Message) -> Sequence[LineInput]:
        parsed = json_event(message, "event", "Telnyx")
        if isinstance(parsed, LineClosed):
            return (parsed,)
        event, obj = parsed
        if event in ("media", "mark", "clear") and (
            bad := check_id(obj, "stream_id", self._ids().stream_id, event)
        ):
            return (bad,)
        if event == "media":
            payload = base64_field(obj, "media", "payload")
            if isinstance(payload, LineClosed):
                return (payload,)
            return (AssistantAudio(self._down.decode(payload)),) if payload else ()
        if (control := clear_or_mark(event, obj, self.marks)) is not None:
            return (control,)
        return (passed_on(event, obj),)

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return closed_by_bot(exc)


class TelnyxLine(WebsocketLine[TelnyxCodec]):
    """CallSim's side of a Telnyx media stream: :class:`TelnyxCodec` (PCMU both ways) on the shell."""

    def new_codec(self) -> TelnyxCodec:
        return TelnyxCodec()
