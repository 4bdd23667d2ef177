"""A CallSim-like client of the built-in assistant for the server tests: a plain ``websockets`` client that
sends 20 ms frames in real time, always, and records what comes back (``test_assistant.py``,
``test_app.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import websockets
from websockets.exceptions import ConnectionClosed

from server.app import AssistantServer
from server.config import AssistantSettings, PolicySettings, ServingSettings, SpeechEngines
from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm, to_bytes

FRAME_SECS = FRAME_SAMPLES / SAMPLE_RATE
SILENT_RMS = 100.0  # int16 RMS below this is silence
DIALOGUE = {
    "id": "takeout-01",
    "scenario": "takeout",
    "preset": {"type": "regular", "text": "外卖放门口就行，我在开会。"},
    "owner_goal": "外卖放在门口",
}


@contextlib.asynccontextmanager
async def running(
    engines: SpeechEngines,
    policy_factory: Any = None,
    *,
    start_timeout_secs: float = PolicySettings.start_timeout_secs,
    prewarm: bool = True,
) -> AsyncIterator[AssistantServer]:
    server = AssistantServer(
        AssistantSettings(
            serving=ServingSettings(port=0),
            policy=PolicySettings(start_timeout_secs=start_timeout_secs),
            prewarm=prewarm,
            configure_logging=False,
        ),
        engines=engines,
        policy_factory=policy_factory,
    )
    await server.start(timeout=60)
    try:
        yield server
    finally:
        await server.stop()


async def say(engines: SpeechEngines, text: str) -> Pcm:
    return await asyncio.to_thread(engines.tts.synthesize, text)


@dataclass
class Received:
    at: float
    audio: bytes | None = None
    event: dict[str, Any] | None = None


@dataclass
class FakeCallSim:
    """A CallSim stand-in: 20 ms frames in real time (silence unless speaking); logs what comes back."""

    ws: Any
    t0: float = field(default_factory=time.monotonic)
    got: list[Received] = field(default_factory=list)
    _speech: list[tuple[Pcm, asyncio.Future[float]]] = field(default_factory=list)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._reader()), asyncio.create_task(self._sender())]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await task

    def now(self) -> float:
        return time.monotonic() - self.t0

    async def _reader(self) -> None:
        try:
            async for message in self.ws:
                if isinstance(message, bytes):
                    self.got.append(Received(self.now(), audio=message))
                else:
                    self.got.append(Received(self.now(), event=json.loads(message)))
                self._changed.set()
        except ConnectionClosed:
            pass
        self.closed = True
        self._changed.set()

    async def _sender(self) -> None:
        silence = bytes(FRAME_SAMPLES * 2)
        next_at = time.monotonic()
        frames: list[bytes] = []
        done: asyncio.Future[float] | None = None
        while True:
            if not frames and self._speech:
                pcm, done = self._speech.pop(0)
                padded = np.zeros(-(-len(pcm) // FRAME_SAMPLES) * FRAME_SAMPLES, dtype=np.int16)
                padded[: len(pcm)] = pcm
                frames = [
                    to_bytes(padded[i : i + FRAME_SAMPLES]) for i in range(0, len(padded), FRAME_SAMPLES)
                ]
            await self.ws.send(frames.pop(0) if frames else silence)
            if not frames and done is not None:
                done.set_result(self.now() + FRAME_SECS)
                done = None
            next_at += FRAME_SECS
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    async def speak(self, pcm: Pcm) -> tuple[float, float]:
        """Queue speech; returns (start, end) times of its audio once it has all been sent."""
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._speech.append((pcm, done))
        end = await asyncio.wait_for(done, timeout=len(pcm) / SAMPLE_RATE + 5)
        return end - len(pcm) / SAMPLE_RATE, end

    async def wait_for(self, predicate: Any, timeout: float, what: str) -> Received:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for item in self.got[seen:]:
                if predicate(item):
                    return item
            seen = len(self.got)
            if self.closed:
                raise AssertionError(f"socket closed while waiting for {what}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=remaining)

    async def first_audio_after(self, t: float, timeout: float = 10.0) -> float:
        item = await self.wait_for(
            lambda r: r.audio and r.at >= t and rms(r.audio) > SILENT_RMS, timeout, "audio"
        )
        return item.at

    async def event(self, name: str, after: float = 0.0, timeout: float = 10.0) -> Received:
        return await self.wait_for(
            lambda r: r.event and r.event.get("event") == name and r.at >= after, timeout, name
        )

    async def wait_closed(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return self.closed

    def audio_between(self, a: float, b: float) -> bytes:
        return b"".join(r.audio for r in self.got if r.audio and a <= r.at < b)

    def events(self, name: str) -> list[dict[str, Any]]:
        return [r.event for r in self.got if r.event and r.event.get("event") == name]

    async def until_quiet(self, quiet_secs: float = 0.8, timeout: float = 30.0) -> float:
        """Wait until no audio has arrived for ``quiet_secs``; then also wait out its estimated playout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            audio = [r for r in self.got if r.audio]
            last = audio[-1].at if audio else 0.0
            if self.now() - last >= quiet_secs:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the assistant never stopped talking")
        playout_end = self.playout_end()
        await asyncio.sleep(max(0.0, playout_end - self.now()) + 0.3)
        return playout_end

    def playout_end(self) -> float:
        """When the audio received so far finishes playing, for a client playing it in real time."""
        end = 0.0
        for r in self.got:
            if r.event and r.event.get("event") == "clear":
                end = min(end, r.at)
            elif r.audio:
                end = max(end, r.at) + len(r.audio) / 2 / SAMPLE_RATE
        return end


def rms(audio: bytes) -> float:
    x = np.frombuffer(audio, dtype="<i2").astype(np.float64)
    return float(np.sqrt(np.mean(x * x))) if len(x) else 0.0


@contextlib.asynccontextmanager
async def call(server: AssistantServer) -> AsyncIterator[FakeCallSim]:
    async with websockets.connect(server.url, open_timeout=10, close_timeout=5) as ws:
        sim = FakeCallSim(ws)
        sim.start()
        try:
            yield sim
        finally:
            await sim.close()


def start_message(dialogue: Mapping[str, Any] = DIALOGUE) -> str:
    return json.dumps(
        {
            "event": "start",
            "call_id": "e2e",
            "sample_rate": 16000,
            "encoding": "pcm_s16le",
            "dialogue": dialogue,
        },
        ensure_ascii=False,
    )
