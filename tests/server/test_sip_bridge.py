"""One gateway call's bridge on loopback, with a scripted assistant line: every caller frame reaches it,
its audio is played out in real time, ``clear`` cuts it, marks are answered, ``error`` and a silent caller
end the call."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import numpy as np
import pytest

from server.sip_gateway import SipGateway
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput, PlayoutMark
from voice.core.clock import MonotonicClock
from voice.lines.line import CallStart
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.sip import SipLine

pytestmark = pytest.mark.timeout(60)


class ScriptedLine(PcmWebsocketLine):
    """The assistant's side as a script: what it says (after a delay each), and what it was sent."""

    def __init__(self, url: str, script: list[tuple[float, LineInput]]) -> None:
        super().__init__(url)
        self.script = list(script)
        self.sent: list[np.ndarray] = []
        self.marks: list[str] = []
        self.hung_up: str | None = None
        self.start: CallStart | None = None

    async def open(self, start: CallStart) -> None:
        self.start = start

    async def send(self, pcm: np.ndarray) -> None:
        self.sent.append(pcm)

    async def recv(self) -> LineInput:
        if not self.script:
            await asyncio.Event().wait()  # says nothing more (until cancelled)
        delay, item = self.script.pop(0)
        await asyncio.sleep(delay)
        return item

    async def played(self, marks: tuple[str, ...]) -> None:
        self.marks += marks

    async def hangup(self, reason: str) -> None:
        self.hung_up = reason


def tone(seconds: float, hz: float = 500.0) -> np.ndarray:
    n = np.arange(int(seconds * 16000))
    return (8000 * np.sin(2 * np.pi * hz * n / 16000)).astype(np.int16)


@contextlib.asynccontextmanager
async def gateway_with(
    script: list[tuple[float, LineInput]], media_timeout_s: float = 10.0
) -> AsyncIterator[tuple[SipGateway, list[ScriptedLine]]]:
    lines: list[ScriptedLine] = []

    def factory(url: str) -> ScriptedLine:
        lines.append(ScriptedLine(url, script))
        return lines[-1]

    async with SipGateway("ws://unused", line_factory=factory, media_timeout_s=media_timeout_s) as gateway:
        yield gateway, lines


async def talk(line: SipLine, frames: int) -> None:
    clock = MonotonicClock(spin_ns=0)
    t0 = clock.now_ns()
    for k in range(frames):
        await clock.sleep_until(t0 + (k + 1) * 20_000_000)
        await line.send(np.zeros(320, np.int16) if k % 4 < 2 else np.full(320, 3000, np.int16))


async def collect(line: SipLine, seconds: float) -> list[LineInput]:
    items: list[LineInput] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            while True:
                items.append(await line.recv())
                if isinstance(items[-1], LineClosed):
                    break
    return items


def loud_frames(items: list[LineInput]) -> int:
    return sum(1 for i in items if isinstance(i, AssistantAudio) and int(np.abs(i.pcm).max()) > 1000)


async def test_every_caller_frame_reaches_the_assistant_silence_too():
    async with gateway_with([]) as (gateway, lines):
        line = SipLine(gateway.uri)
        await line.open(CallStart("c", {}))
        await talk(line, 50)
        await asyncio.sleep(0.3)  # the gateway's jitter buffer
        await line.close()
        sent = lines[0].sent
        assert 45 <= len(sent) <= 50
        peaks = [int(np.abs(p).max()) for p in sent]
        assert sum(p < 300 for p in peaks) >= 10 and sum(p > 1000 for p in peaks) >= 10, peaks
        assert lines[0].hung_up == "the caller hung up"


async def test_audio_far_ahead_of_real_time_is_played_in_real_time_and_clear_cuts_it():
    script: list[tuple[float, LineInput]] = [
        (0.0, AssistantAudio(tone(2.0))),
        (0.0, PlayoutMark("after-two-seconds")),
        (0.4, AssistantControl("clear")),
        (0.0, AssistantAudio(tone(0.2))),
        (0.0, PlayoutMark("end")),
    ]
    async with gateway_with(script) as (gateway, lines):
        line = SipLine(gateway.uri)
        await line.open(CallStart("c", {}))
        sender = asyncio.create_task(talk(line, 75))
        items = await collect(line, 1.5)
        await sender
        await line.close()
    heard = loud_frames(items)
    assert 25 <= heard <= 40, heard  # 0.4 s before the clear, then 0.2 s: not the 2 s sent at once
    assert lines[0].marks == ["after-two-seconds", "end"]  # the first answered at the clear


async def test_an_assistant_error_ends_the_call_with_bye():
    script: list[tuple[float, LineInput]] = [(0.2, AssistantControl("error", {"message": "boom"}))]
    async with gateway_with(script) as (gateway, _):
        line = SipLine(gateway.uri)
        await line.open(CallStart("c", {}))
        sender = asyncio.create_task(talk(line, 100))
        items = await collect(line, 3.0)
        sender.cancel()
        await line.close()
        (call,) = gateway.calls.values()
        assert call.reason == "assistant error: boom"
    assert any(isinstance(i, AssistantControl) and i.event == "hangup" for i in items)
    assert isinstance(items[-1], LineClosed)


async def test_a_caller_that_sends_no_rtp_is_hung_up():
    async with gateway_with([], media_timeout_s=0.5) as (gateway, lines):
        line = SipLine(gateway.uri)
        await line.open(CallStart("c", {}))
        items = await collect(line, 3.0)
        await line.close()
        (call,) = gateway.calls.values()
        assert call.reason is not None and call.reason.startswith("no_media")
    assert isinstance(items[-1], LineClosed)
    assert lines[0].hung_up is not None
