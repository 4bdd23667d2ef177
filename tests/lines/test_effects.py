"""The network effects: the mu-law channel, loss, jitter, noise and loudness, seeded and composable."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import numpy as np
import pytest

from voice.core.audio import FRAME_SAMPLES, Pcm, rms_dbfs
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput, PlayoutMark
from voice.errors import ConfigError
from voice.lines.effects import (
    NOMINAL_SPEECH_DBFS,
    Downsampler,
    EffectLine,
    LineEffects,
    MulawChannel,
    Upsampler,
    call_seed,
)
from voice.lines.line import CallStart
from voice.lines.memory import MemoryLine


def sine(hz: float, n: int, amp: float = 8000.0, rate: int = 16000) -> Pcm:
    return (amp * np.sin(2 * np.pi * hz * np.arange(n) / rate)).astype(np.int16)


def snr_db(clean: Pcm, noisy: Pcm) -> float:
    c, x = clean.astype(np.float64), noisy.astype(np.float64)
    return float(10 * np.log10(np.sum(c**2) / max(1e-9, np.sum((x - c) ** 2))))


# --- the mu-law channel ----------------------------------------------------------------------------------


def test_the_channel_makes_20_ms_frames_of_160_bytes_and_keeps_speech_band_audio() -> None:
    channel = MulawChannel()
    tone = sine(1000, 16000)
    encoded = [channel.encode(f) for f in np.split(tone, 50)]
    assert all(len(e) == 160 for e in encoded)
    decoded = np.concatenate([channel.decode(e) for e in encoded])
    assert len(decoded) == len(tone)
    delay = 30  # 15 samples of filter delay each way
    assert snr_db(tone[2000:-delay], decoded[2000 + delay :]) > 25  # mu-law is ~35 dB; filters cost a little


def test_the_channel_removes_what_a_phone_cannot_carry() -> None:
    channel = MulawChannel()
    high = sine(6000, 16000)
    out = np.concatenate([channel(f) for f in np.split(high, 50)])
    assert rms_dbfs(out[1000:]) < rms_dbfs(high) - 30


@pytest.mark.parametrize("sizes", [[320] * 10, [7, 313, 1, 999, 1880], [1] * 50 + [3150]])
def test_streaming_resampling_does_not_depend_on_chunking(sizes: list[int]) -> None:
    x = sine(440, sum(sizes)) + sine(2500, sum(sizes), 2000)
    whole_down = Downsampler()(x)
    down = Downsampler()
    cuts = np.cumsum(sizes)[:-1]
    chunked = np.concatenate([down(c) for c in np.split(x, cuts)])
    assert np.array_equal(whole_down, chunked)
    whole_up = Upsampler()(whole_down)
    up = Upsampler()
    pieces = np.split(whole_down, [3, 50, 51, 400])
    assert np.array_equal(whole_up, np.concatenate([up(p) for p in pieces]))


# --- settings ----------------------------------------------------------------------------------------------


def test_effects_are_validated_and_described() -> None:
    assert not LineEffects().alters_audio
    assert LineEffects(loss_rate=0.1).alters_audio and LineEffects(mulaw_band_limit=True).alters_audio
    d = LineEffects(jitter_ms=40, noise_snr_db=20).describe()
    assert d["jitter_ms"] == 40 and d["noise_snr_db"] == 20 and d["loss_rate"] == 0.0
    for bad in ({"loss_rate": 1.0}, {"jitter_ms": -1}, {"noise_snr_db": 500}, {"caller_gain_db": 99}):
        with pytest.raises(ConfigError, match="invalid line effects"):
            LineEffects(**bad)  # type: ignore[arg-type]


def test_each_call_has_its_own_reproducible_seed() -> None:
    assert call_seed(1, "a") == call_seed(1, "a") != call_seed(1, "b") != call_seed(2, "a")


# --- the wrapper on an in-memory line ----------------------------------------------------------------------


@dataclass
class Echo:
    """A fake assistant returning each caller frame as its reply audio, plus a control after each."""

    replies: list[LineInput] = field(default_factory=list)

    def on_start(self, start: CallStart) -> list[LineInput]:
        return []

    def on_frame(self, pcm: Pcm) -> list[LineInput]:
        return [AssistantAudio(pcm.copy()), AssistantControl("log", {"n": len(pcm)})]


async def run_frames(line: EffectLine, frames: list[Pcm]) -> tuple[list[Pcm], list[LineInput]]:
    await line.open(CallStart("call-1", {}))
    for f in frames:
        await line.send(f)
    got = [await asyncio.wait_for(line.recv(), 5) for _ in range(2 * len(frames))]
    inner = line.inner
    assert isinstance(inner, MemoryLine)
    return inner.sent, got


async def test_no_effects_is_transparent() -> None:
    frames = [sine(300, FRAME_SAMPLES) for _ in range(5)]
    sent, got = await run_frames(EffectLine(MemoryLine(Echo()), LineEffects()), frames)
    assert all(np.array_equal(a, b) for a, b in zip(sent, frames, strict=True))
    audio = [g.pcm for g in got if isinstance(g, AssistantAudio)]
    assert all(np.array_equal(a, b) for a, b in zip(audio, frames, strict=True))


async def test_loss_silences_whole_packets_both_ways_reproducibly() -> None:
    frames = [np.full(FRAME_SAMPLES, 1000, np.int16) for _ in range(400)]
    effects = LineEffects(loss_rate=0.2)

    async def once(seed: int) -> tuple[list[Pcm], list[LineInput], EffectLine]:
        line = EffectLine(MemoryLine(Echo()), effects, seed=seed)
        sent, got = await run_frames(line, frames)
        return sent, got, line

    sent, got, line = await once(7)
    lost_up = [not f.any() for f in sent]
    assert all(f.all() or not f.any() for f in sent)  # whole packets
    assert 0.13 < np.mean(lost_up) < 0.27 and sum(lost_up) == line.stats["caller_packets_lost"]
    down = [g.pcm for g in got if isinstance(g, AssistantAudio)]
    lost_down = [not f.any() for f in down]
    assert all(d for u, d in zip(lost_up, lost_down, strict=True) if u)  # lost on the way up stays silent
    assert 0.13 < line.stats["assistant_packets_lost"] / 400 < 0.27
    assert lost_down != lost_up  # the directions lose independently
    assert [len(f) for f in down] == [FRAME_SAMPLES] * 400  # a loss keeps the timeline
    again, _, _ = await once(7)
    assert all(np.array_equal(a, b) for a, b in zip(sent, again, strict=True))
    other, _, _ = await once(8)
    assert [not f.any() for f in other] != lost_up


async def test_caller_gain_and_noise_at_the_requested_snr() -> None:
    speech = [sine(500, FRAME_SAMPLES, 3000) for _ in range(100)]
    silence = [np.zeros(FRAME_SAMPLES, np.int16) for _ in range(100)]
    line = EffectLine(MemoryLine(Echo()), LineEffects(noise_snr_db=20, caller_gain_db=6), seed=1)
    await line.open(CallStart("c", {}))
    assert line.describe()["stats"]["caller_speech_dbfs"] == NOMINAL_SPEECH_DBFS
    for f in speech + silence:
        await line.send(f)
    inner = line.inner
    assert isinstance(inner, MemoryLine)
    level = rms_dbfs(np.concatenate(inner.sent[50:100]))
    expected = rms_dbfs(np.concatenate(speech)) + 6
    assert abs(level - expected) < 0.5
    noise = rms_dbfs(np.concatenate(inner.sent[100:]))
    assert abs(noise - (expected - 20)) < 1.5
    described = line.describe()
    assert described["noise_snr_db"] == 20 and described["seed"] == 1
    assert abs(described["stats"]["caller_speech_dbfs"] - expected) < 0.5


async def test_gain_clipping_is_counted() -> None:
    line = EffectLine(MemoryLine(Echo()), LineEffects(caller_gain_db=20))
    await line.open(CallStart("c", {}))
    await line.send(np.full(FRAME_SAMPLES, 10000, np.int16))
    assert line.stats["caller_samples_clipped"] == FRAME_SAMPLES


async def test_band_limit_applies_both_ways() -> None:
    line = EffectLine(MemoryLine(Echo()), LineEffects(mulaw_band_limit=True))
    frames = [sine(6000, FRAME_SAMPLES) for _ in range(20)]
    sent, _ = await run_frames(line, frames)
    assert rms_dbfs(np.concatenate(sent[5:])) < rms_dbfs(frames[0]) - 30
    assert all(len(s) == FRAME_SAMPLES for s in sent)


@dataclass
class Recorder:
    """A line that timestamps what goes up (caller frames and mark answers, in order) and serves its queue."""

    up: list[tuple[float, object]] = field(default_factory=list)  # (time, a frame or the marks answered)
    queue: asyncio.Queue[LineInput] = field(default_factory=asyncio.Queue)

    @property
    def sends(self) -> list[float]:
        return [t for t, x in self.up if not isinstance(x, tuple)]

    async def open(self, start: CallStart) -> None:
        return None

    async def send(self, pcm: Pcm) -> None:
        self.up.append((time.monotonic(), pcm))

    async def recv(self) -> LineInput:
        return await self.queue.get()

    async def played(self, marks: tuple[str, ...]) -> None:
        self.up.append((time.monotonic(), marks))

    async def hangup(self, reason: str) -> None:
        self.queue.put_nowait(LineClosed("hung up"))

    async def close(self) -> None:
        return None


async def test_jitter_delays_without_reordering_and_marks_keep_their_place_both_ways() -> None:
    inner = Recorder()
    line = EffectLine(inner, LineEffects(jitter_ms=60), seed=3)
    await line.open(CallStart("c", {}))
    issued = []
    for i in range(25):
        issued.append(time.monotonic())
        await line.send(np.full(FRAME_SAMPLES, i, np.int16))
        if i % 10 == 5:
            await line.played((f"m{i}",))  # answered behind the frames already in flight
            inner.queue.put_nowait(PlayoutMark(f"m{i}"))  # the bot's mark, behind its audio so far
        inner.queue.put_nowait(AssistantAudio(np.full(10, i, np.int16)))
        await asyncio.sleep(0.02)
    got = [await asyncio.wait_for(line.recv(), 5) for _ in range(27)]
    await line.hangup("done")
    assert isinstance(await asyncio.wait_for(line.recv(), 5), LineClosed)
    await line.close()
    down = [int(g.pcm[0]) if isinstance(g, AssistantAudio) else g for g in got]
    assert down == [*range(5), PlayoutMark("m5"), *range(5, 15), PlayoutMark("m15"), *range(15, 25)]
    up = [x if isinstance(x, tuple) else int(x[0]) for _, x in inner.up]
    assert up == [*range(6), ("m5",), *range(6, 16), ("m15",), *range(16, 25)]  # in the order given
    sends = inner.sends
    assert len(sends) == 25 and sends == sorted(sends)
    lateness = [s - t for s, t in zip(sends, issued, strict=True)]  # from when each frame was handed over
    assert max(lateness) < 0.06 + 0.05 and max(lateness) > 0.01  # delayed, by at most jitter (+ slack)
    assert 0 < line.stats["max_delay_ms"] <= 60


async def test_answering_marks_draws_no_delay_of_its_own() -> None:
    """The caller's packets keep their seeded jitter whether or not marks are answered in between."""
    lines = []
    for with_marks in (False, True):
        line = EffectLine(Recorder(), LineEffects(jitter_ms=40), seed=9)
        await line.open(CallStart("c", {}))
        for _ in range(10):
            if with_marks:
                await line.played(("m",))
            await line.send(np.zeros(FRAME_SAMPLES, np.int16))
        await line.close()
        lines.append(line)
    assert lines[0].stats == lines[1].stats
    assert lines[0]._rng_up.random() == lines[1]._rng_up.random()  # the same draws were taken
    line = EffectLine(Recorder(), LineEffects())  # without jitter, straight through
    await line.played(("x",))
    inner = line.inner
    assert isinstance(inner, Recorder) and [x for _, x in inner.up] == [("x",)]
