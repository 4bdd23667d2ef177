"""The raw PCM websocket line (``docs/protocol.md``): 16 kHz PCM16 binary frames plus JSON control events.

:class:`PcmCodec` is the protocol, pure; :class:`PcmWebsocketLine` is it on the one websocket line shell
(:mod:`voice.lines.ws_shell`: connecting, the reader's inbox, the flood cap, closing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from websockets.exceptions import ConnectionClosed

from voice.core.audio import SAMPLE_RATE, Pcm, from_bytes, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

__all__ = ["MAX_AUDIO_MESSAGE_MS", "MAX_MESSAGE_BYTES", "PcmCodec", "PcmWebsocketLine", "parse_pcm_message"]

MAX_AUDIO_MESSAGE_MS = 2000  # one binary message: 100 frames of 20 ms, room for any streaming TTS chunk
# one message, audio or control (a control event is a few hundred bytes; a log is recorded up to 4 KiB):
# larger is the bot's protocol error (close 1009), never a jump of the call's timeline
MAX_MESSAGE_BYTES = MAX_AUDIO_MESSAGE_MS * SAMPLE_RATE // 1000 * 2


def parse_pcm_message(message: str | bytes) -> LineInput:
    """One message from the assistant → what the call core gets; never raises.

    A protocol violation comes back as ``LineClosed("protocol_error: ...")``.  Pure, so it can be fuzzed.
    """
    if isinstance(message, bytes):
        try:
            return AssistantAudio(from_bytes(message))
        except ValueError as exc:
            return _violation(str(exc))
    try:
        obj: Any = json.loads(message)
    except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        return _violation(f"malformed JSON control message: {str(exc)[:200]}")
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
        return _violation("control message is not a JSON object with a string 'event'")
    payload = {k: v for k, v in obj.items() if k != "event"}
    return AssistantControl(obj["event"], payload)


def _violation(why: str) -> LineClosed:
    return LineClosed(f"protocol_error: {why}")


class PcmCodec:
    """The raw protocol's messages: ``start``, binary caller frames, ``stop``; no marks.

    A flood of audio (more than a minute queued ahead of playout) is refused by the call core, which owns
    the playout, and a flood of control events is recorded up to a cap and counted (the core's
    :mod:`~voice.core.eventlog`); the codec only parses.
    """

    max_message_bytes = MAX_MESSAGE_BYTES

    def start(self, start: CallStart) -> Sequence[Message]:
        message = {
            "event": "start",
            "call_id": start.call_id,
            "sample_rate": SAMPLE_RATE,
            "encoding": "pcm_s16le",
            "dialogue": dict(start.dialogue),
        }
        return [json.dumps(message, ensure_ascii=False)]

    def audio(self, pcm: Pcm) -> Message:
        return to_bytes(pcm)

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        return ()  # the raw protocol has no marks

    def hangup(self, reason: str) -> Sequence[Message]:
        return [json.dumps({"event": "stop", "reason": reason})]

    def decode(self, message: Message) -> Sequence[LineInput]:
        return (parse_pcm_message(message),)

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return ()  # the raw protocol hangs up with its `hangup` event; a close is only the line's end


class PcmWebsocketLine(WebsocketLine[PcmCodec]):
    """CallSim's side of a raw PCM websocket call: :class:`PcmCodec` on the shell."""

    def new_codec(self) -> PcmCodec:
        return PcmCodec()
