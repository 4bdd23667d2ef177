"""An in-memory line: the far side is a Python object, for unit tests of the driver and the call core."""

from __future__ import annotations

import asyncio
from typing import Protocol

from voice.core.audio import Pcm
from voice.core.call import LineClosed, LineInput
from voice.lines.line import CallStart


class FakeAssistant(Protocol):
    """The far side of a :class:`MemoryLine`: sees each caller frame, answers with line inputs."""

    def on_start(self, start: CallStart) -> list[LineInput]: ...

    def on_frame(self, pcm: Pcm) -> list[LineInput]: ...


class MemoryLine:
    """Delivers whatever the fake assistant returns, immediately, through a queue."""

    def __init__(self, assistant: FakeAssistant) -> None:
        self.assistant = assistant
        self.sent: list[Pcm] = []
        self.hangup_reason: str | None = None
        self.played_marks: list[str] = []  # what the driver reported played, in order
        self._queue: asyncio.Queue[LineInput] = asyncio.Queue()

    async def open(self, start: CallStart) -> None:
        for item in self.assistant.on_start(start):
            self._queue.put_nowait(item)

    async def send(self, pcm: Pcm) -> None:
        self.sent.append(pcm)
        for item in self.assistant.on_frame(pcm):
            self._queue.put_nowait(item)

    async def recv(self) -> LineInput:
        return await self._queue.get()

    async def played(self, marks: tuple[str, ...]) -> None:
        self.played_marks.extend(marks)

    async def hangup(self, reason: str) -> None:
        self.hangup_reason = reason
        self._queue.put_nowait(LineClosed("caller hung up"))

    async def close(self) -> None:
        return None
