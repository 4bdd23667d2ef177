"""The raw PCM websocket line (``docs/protocol.md``): 16 kHz PCM16 binary frames plus JSON control events."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from voice.core.audio import SAMPLE_RATE, Pcm, from_bytes, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.errors import LineError
from voice.lines.base import CallStart
from voice.lines.headers import Headers
from voice.lines.redact import redact_text
from voice.lines.ws_client import WebsocketClient, closed_reason, connect

__all__ = ["MAX_AUDIO_MESSAGE_MS", "MAX_MESSAGE_BYTES", "PcmWebsocketLine", "parse_pcm_message"]

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


class PcmWebsocketLine:
    """CallSim's side of a raw PCM websocket call.

    A flood of audio (more than a minute queued ahead of playout) is refused by the call core, which owns
    the playout, and a flood of control events is recorded up to a cap and counted (the core's
    :mod:`~voice.core.eventlog`); this line only parses, and refuses a message over ``MAX_MESSAGE_BYTES``.
    """

    def __init__(self, url: str, *, open_timeout_s: float = 10.0, headers: Headers = ()) -> None:
        self.url = url
        self.headers = headers  # on the websocket upgrade (--header); never recorded
        self.open_timeout_s = open_timeout_s
        self._ws: WebsocketClient | None = None
        self._closed_reason: str | None = None

    async def open(self, start: CallStart) -> None:
        try:
            self._ws = await connect(
                self.url, open_timeout=self.open_timeout_s, max_size=MAX_MESSAGE_BYTES, headers=self.headers
            )
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise LineError(redact_text(f"cannot connect to {self.url}: {exc}")) from exc
        message = {
            "event": "start",
            "call_id": start.call_id,
            "sample_rate": SAMPLE_RATE,
            "encoding": "pcm_s16le",
            "dialogue": dict(start.dialogue),
        }
        await self._send(json.dumps(message, ensure_ascii=False))

    async def send(self, pcm: Pcm) -> None:
        await self._send(to_bytes(pcm))

    async def _send(self, data: str | bytes) -> None:
        if self._ws is None or self._closed_reason is not None:
            return
        try:
            await self._ws.send(data)
        except ConnectionClosed as exc:
            self._closed_reason = closed_reason(exc)

    async def recv(self) -> LineInput:
        if self._ws is None:
            return LineClosed("never connected")
        if self._closed_reason is not None:
            return LineClosed(self._closed_reason)
        try:
            message = await self._ws.recv()
        except ConnectionClosed as exc:
            self._closed_reason = closed_reason(exc)
            return LineClosed(self._closed_reason)
        item = parse_pcm_message(message)
        if isinstance(item, LineClosed):
            self._closed_reason = item.reason
        return item

    async def played(self, marks: tuple[str, ...]) -> None:
        return None  # the raw protocol has no marks

    async def hangup(self, reason: str) -> None:
        await self._send(json.dumps({"event": "stop", "reason": reason}))
        await self.close()

    async def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(ConnectionClosed, OSError):
                await self._ws.close()
            self._closed_reason = self._closed_reason or "closed by caller"
