"""The raw PCM websocket line (``docs/protocol.md``): 16 kHz PCM16 binary frames plus JSON control events."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from voice.audio import SAMPLE_RATE, Pcm, from_bytes, to_bytes
from voice.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.errors import LineError
from voice.lines.base import CallStart

MAX_MESSAGE_BYTES = 1 << 20  # 32 s of audio in one message is already abuse


class PcmWebsocketLine:
    """CallSim's side of a raw PCM websocket call."""

    def __init__(self, url: str, *, open_timeout_s: float = 10.0) -> None:
        self.url = url
        self.open_timeout_s = open_timeout_s
        self._ws: ClientConnection | None = None
        self._closed_reason: str | None = None

    async def open(self, start: CallStart) -> None:
        try:
            self._ws = await connect(
                self.url, open_timeout=self.open_timeout_s, max_size=MAX_MESSAGE_BYTES, ping_interval=None
            )
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise LineError(f"cannot connect to {self.url}: {exc}") from exc
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
            self._closed_reason = _closed(exc)

    async def recv(self) -> LineInput:
        if self._ws is None:
            return LineClosed("never connected")
        if self._closed_reason is not None:
            return LineClosed(self._closed_reason)
        try:
            message = await self._ws.recv()
        except ConnectionClosed as exc:
            self._closed_reason = _closed(exc)
            return LineClosed(self._closed_reason)
        return self._parse(message)

    def _parse(self, message: str | bytes) -> LineInput:
        if isinstance(message, bytes):
            try:
                return AssistantAudio(from_bytes(message))
            except ValueError as exc:
                return self._violation(str(exc))
        try:
            obj: Any = json.loads(message)
        except json.JSONDecodeError as exc:
            return self._violation(f"malformed JSON control message: {exc}")
        if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
            return self._violation("control message is not a JSON object with a string 'event'")
        payload = {k: v for k, v in obj.items() if k != "event"}
        return AssistantControl(obj["event"], payload)

    def _violation(self, why: str) -> LineClosed:
        self._closed_reason = f"protocol_error: {why}"
        return LineClosed(self._closed_reason)

    async def hangup(self, reason: str) -> None:
        await self._send(json.dumps({"event": "stop", "reason": reason}))
        await self.close()

    async def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(ConnectionClosed, OSError):
                await self._ws.close()
            self._closed_reason = self._closed_reason or "closed by caller"


def _closed(exc: ConnectionClosed) -> str:
    rcvd = exc.rcvd
    if rcvd is None:
        return "connection lost (no close frame)"
    return f"closed by assistant (code {rcvd.code}{': ' + rcvd.reason if rcvd.reason else ''})"
