"""The line to a person playing the assistant (``callsim talk --role assistant``).

CallSim plays a dialogue's caller as in any run; the "assistant" at the other end is a person: what the caller
says goes to their speaker, and their microphone is the assistant's audio, delivered 20 ms at a time as it
is captured.  The same metrics measure them, so a person's figures on the bundled dialogues are the human
baseline bots are compared with (``callsim compare human-run bot-run``).
"""

from __future__ import annotations

import asyncio

from voice.app.live.ports import Microphone, Speaker
from voice.core.audio import Pcm
from voice.core.call import AssistantAudio, LineClosed, LineInput
from voice.lines.line import CallStart


class PersonLine:
    """A :class:`~voice.lines.line.Line` whose far end is a microphone and a speaker.

    A microphone that runs out (a file) leaves the line silent: the caller goes on as it would with an
    assistant that says nothing more, and the call ends by its own rules.
    """

    def __init__(self, mic: Microphone, speaker: Speaker) -> None:
        self.mic, self.speaker = mic, speaker
        self.hung_up: str | None = None
        self._closed = asyncio.Event()

    async def open(self, start: CallStart) -> None:
        await self.mic.start()
        await self.speaker.start()

    async def send(self, pcm: Pcm) -> None:
        self.speaker.play(pcm)

    async def recv(self) -> LineInput:
        frame = await self.mic.read()
        if frame is None:
            await self._closed.wait()  # nothing more will come; the driver cancels this read at the end
            return LineClosed("the person's microphone ran out")
        return AssistantAudio(frame)

    async def played(self, marks: tuple[str, ...]) -> None:
        return None  # a person asks for no marks

    async def hangup(self, reason: str) -> None:
        self.hung_up = reason

    async def close(self) -> None:
        self._closed.set()
        await self.mic.stop()
        await self.speaker.stop()
