"""Where a person's voice comes from and where what they hear goes: the microphone and speaker interfaces.

A live call (``callsim talk``) reads a :class:`Microphone` 20 ms at a time and gives a :class:`Speaker` what
the person should hear.  Two implementations of each: sound devices (:mod:`voice.app.live.devices`, PortAudio
through sounddevice) and WAV files (here): a file played at real-time pace stands in for the microphone,
and what would have gone to the speaker is written to a file, so the same code runs without audio hardware
(tests, CI, a demo replayed from a recording).  Audio inside is 16 kHz mono int16; a file at another rate
or with more channels is converted once, at this edge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm, resample, samples_to_ns
from voice.core.clock import Clock
from voice.errors import ConfigError
from voice.files import read_wav, write_wav

FRAME_NS = samples_to_ns(FRAME_SAMPLES)


class Microphone(Protocol):
    """The person's voice, 20 ms (320 samples at 16 kHz) per :meth:`read`, in real time."""

    async def start(self) -> None: ...

    async def read(self) -> Pcm | None:
        """The next 20 ms as captured, when it has been; None once a file has run out (a device never)."""
        ...

    async def stop(self) -> None: ...


class Speaker(Protocol):
    """What the person hears: audio handed to :meth:`play` is queued and played in order, in real time."""

    async def start(self) -> None: ...

    def play(self, pcm: Pcm) -> None: ...

    async def stop(self) -> None: ...


def load_mono_16k(path: Path) -> Pcm:
    """A WAV file as 16 kHz mono (channels mixed down, resampled): a :class:`ConfigError` if unreadable."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such WAV file")
    channels, rate = read_wav(path)
    if not channels or not len(channels[0]):
        raise ConfigError(f"{path}: the WAV file holds no audio")
    mixed = np.mean(np.stack([c.astype(np.float64) for c in channels]), axis=0)
    pcm = np.clip(np.round(mixed), -32768, 32767).astype(np.int16)
    return resample(pcm, rate, SAMPLE_RATE) if rate != SAMPLE_RATE else pcm


class WavMicrophone:
    """A WAV file played as if spoken into a microphone, one 20 ms frame per read, at real-time pace.

    Frame ``k`` is delivered at ``t0 + k * 20 ms``, ``t0`` being the first read: when it *begins*, as a file
    has no capture latency (a device delivers a block once it is full, one block late).  After the file,
    ``tail_s`` of silence (so the call can hear the reply to the last words), then None.
    """

    def __init__(self, path: Path, clock: Clock, *, tail_s: float = 0.0) -> None:
        self.path = path
        self._clock = clock
        self._tail = int(tail_s * SAMPLE_RATE)
        self._pcm: Pcm | None = None
        self._t0: int | None = None
        self._k = 0

    async def start(self) -> None:
        pcm = load_mono_16k(self.path)
        padded = -(-(len(pcm) + self._tail) // FRAME_SAMPLES) * FRAME_SAMPLES
        self._pcm = np.concatenate([pcm, np.zeros(padded - len(pcm), np.int16)])

    async def read(self) -> Pcm | None:
        if self._pcm is None:
            await self.start()
        assert self._pcm is not None
        if self._t0 is None:
            self._t0 = self._clock.now_ns()
        s = self._k * FRAME_SAMPLES
        if s >= len(self._pcm):
            return None
        await self._clock.sleep_until(self._t0 + self._k * FRAME_NS)
        self._k += 1
        return self._pcm[s : s + FRAME_SAMPLES]

    async def stop(self) -> None:
        self._k = len(self._pcm) // FRAME_SAMPLES if self._pcm is not None else 0


class WavSpeaker:
    """Everything played, written to a 16 kHz mono WAV file (atomically) when stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._parts: list[Pcm] = []

    async def start(self) -> None:
        self._parts = []

    def play(self, pcm: Pcm) -> None:
        self._parts.append(np.asarray(pcm, dtype=np.int16).copy())

    @property
    def played(self) -> Pcm:
        return np.concatenate(self._parts) if self._parts else np.zeros(0, np.int16)

    async def stop(self) -> None:
        write_wav(self.path, [self.played])


class LimitedMicrophone:
    """Another microphone for at most ``seconds``: then it runs out, as a file does (the caller hangs up
    after the reply to what was said).  ``callsim talk --max-secs``; a device alone never ends a call."""

    def __init__(self, mic: Microphone, seconds: float) -> None:
        self.mic = mic
        self._frames_left = int(seconds * SAMPLE_RATE) // FRAME_SAMPLES

    async def start(self) -> None:
        await self.mic.start()

    async def read(self) -> Pcm | None:
        if self._frames_left <= 0:
            return None
        self._frames_left -= 1
        return await self.mic.read()

    async def stop(self) -> None:
        await self.mic.stop()


class MemoryMicrophone:
    """A microphone double: the frames it was given, one per read, without waiting; then None."""

    def __init__(self, pcm: Pcm) -> None:
        n = -(-len(pcm) // FRAME_SAMPLES) * FRAME_SAMPLES
        self._pcm = np.concatenate([np.asarray(pcm, np.int16), np.zeros(n - len(pcm), np.int16)])
        self._k = 0

    async def start(self) -> None:
        return None

    async def read(self) -> Pcm | None:
        s = self._k * FRAME_SAMPLES
        if s >= len(self._pcm):
            return None
        self._k += 1
        return self._pcm[s : s + FRAME_SAMPLES]

    async def stop(self) -> None:
        return None


class MemorySpeaker(WavSpeaker):
    """A speaker double: keeps what it played (:attr:`played`), writes nothing."""

    def __init__(self) -> None:
        super().__init__(Path("unused.wav"))

    async def stop(self) -> None:
        return None
