"""What the carrier codecs' tests share: pipecat's own detection of a carrier, and a closed socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.frames import Close

from voice.lines.ws_shell import Message


class _Opening:
    """The one part of a FastAPI websocket that pipecat's ``parse_telephony_websocket`` reads: its text."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = messages

    async def iter_text(self) -> AsyncIterator[str]:
        for m in self._messages:
            assert isinstance(m, str), "a carrier's opening messages are text"
            yield m


async def pipecat_detects(messages: Sequence[Message]) -> tuple[str, Any]:
    """What pipecat's runner makes of a call opening with ``messages``: (transport type, call data)."""
    from pipecat.runner.utils import parse_telephony_websocket

    return await parse_telephony_websocket(_Opening(messages))


def closed(code: int, reason: str = "") -> ConnectionClosed:
    """The socket's end as the shell sees it when the bot closed it with ``code``."""
    return ConnectionClosed(Close(code, reason), None)
