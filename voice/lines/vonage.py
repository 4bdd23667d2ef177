"""The Vonage websocket line (``vonage+ws://``): CallSim plays Vonage, the bot is the websocket server.

As Vonage connects a call leg to a websocket endpoint (the Voice API's ``connect`` to ``websocket``, and
the Video API's Audio Connector, both what pipecat's ``VonageFrameSerializer`` serves): one text message
first, ``{"event": "websocket:connected", "content-type": "audio/l16;rate=16000", ...}`` with the
endpoint's headers beside it (CallSim's: ``call_id``), then binary messages only, 16-bit little-endian
linear PCM, 20 ms each (640 bytes at 16 kHz).  Vonage has no stop message: the call ends with the
websocket's close, both ways.

From the bot: binary audio (the same PCM, any even length: Vonage wants 20 ms messages, CallSim does not
insist), and text JSON commands named by ``action``: ``clear`` (stop playing: :class:`~voice.core.call.
AssistantControl` ``clear``, answered with ``websocket:cleared`` once done) and ``notify`` (answered with
``websocket:notify`` and the bot's ``payload`` once the audio sent before it has played): both answers
wait for the call core's playout (:class:`~voice.lines.carrier.PlayoutAcks`).  A text message with an
``event`` instead of an ``action`` is recorded (``log`` as the bot's log); a bot hangs up by closing.
pipecat's ``parse_telephony_websocket`` does not detect Vonage: a pipecat bot serves it on a route of its
own with the serializer made directly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from websockets.exceptions import ConnectionClosed

from voice.core.audio import SAMPLE_RATE, Pcm, from_bytes, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineInput
from voice.lines.carrier import SHOWN, PlayoutAcks, closed_by_bot, compact, passed_on, violation
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

# One message from the bot: 2 s of 16 kHz PCM16 (64,000 bytes) with room, as the raw PCM protocol's cap;
# a command is a few hundred bytes.  Larger is the bot's protocol error (close 1009).
MAX_MESSAGE_BYTES = 64 * 1024
MAX_NOTIFY_BYTES = 4096  # a notify's payload, kept until it is answered (CallSim's bound, not Vonage's)
CLEARED = "websocket:cleared"
NOTIFY = "websocket:notify"


class VonageCodec:
    """Vonage's side of a websocket call leg as messages: 16 kHz linear PCM binary, JSON commands.  Pure."""

    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self) -> None:
        self.acks = PlayoutAcks[dict[str, Any]]()  # the messages that answer, once played

    def start(self, start: CallStart) -> Sequence[Message]:
        connected = {"event": "websocket:connected", "content-type": f"audio/l16;rate={SAMPLE_RATE}"}
        return [compact({**connected, "call_id": start.call_id})]

    def audio(self, pcm: Pcm) -> Message:
        return to_bytes(pcm)

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        """``websocket:notify`` (with the bot's payload) or ``websocket:cleared``, once each has played."""
        return [compact(answer) for answer in self.acks.played(len(marks))]

    def hangup(self, reason: str) -> Sequence[Message]:
        return ()  # Vonage says nothing: it closes the websocket

    def decode(self, message: Message) -> Sequence[LineInput]:
        if isinstance(message, bytes):
            if len(message) % 2:
                return (violation(f"binary audio with an odd number of bytes ({len(message)})"),)
            return (AssistantAudio(from_bytes(message)),) if message else ()
        try:
            obj: Any = json.loads(message)
        except (ValueError, RecursionError) as exc:
            return (violation(f"malformed JSON: {str(exc)[:SHOWN]}"),)
        if not isinstance(obj, dict):
            return (violation(f"not a JSON object: {message[:SHOWN]!r}"),)
        action = obj.get("action")
        if action is None and isinstance(obj.get("event"), str):
            return (passed_on(obj["event"], obj),)
        if not isinstance(action, str):
            return (violation(f"a command without a string 'action': {message[:SHOWN]!r}"),)
        if action == "clear":
            return (AssistantControl("clear"), self.acks.ask(CLEARED, {"event": CLEARED}))
        if action == "notify":
            payload = obj.get("payload", {})
            if len(json.dumps(payload)) > MAX_NOTIFY_BYTES:
                return (violation(f"notify with a payload over {MAX_NOTIFY_BYTES} bytes (CallSim's limit)"),)
            name = f"notify {json.dumps(payload, ensure_ascii=False)[:SHOWN]}"  # what the event log shows
            return (self.acks.ask(name, {"event": NOTIFY, "payload": payload}),)
        return (passed_on(action, obj, key="action"),)

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return closed_by_bot(exc)


class VonageLine(WebsocketLine[VonageCodec]):
    """CallSim's side of a Vonage websocket call leg: :class:`VonageCodec` on the shell."""

    def new_codec(self) -> VonageCodec:
        return VonageCodec()
