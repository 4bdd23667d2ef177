"""Sound devices through PortAudio (sounddevice): the microphone and speaker of a live call.

PortAudio calls back on its own thread with each block; the microphone hands blocks to the event loop
(``call_soon_threadsafe``) and cuts them into 20 ms frames; the speaker's callback takes what
:meth:`DeviceSpeaker.play` queued and plays silence when nothing is.  A device is opened at 16 kHz when it
accepts it (PulseAudio and most USB headsets do), else at its own rate with resampling here, at the edge.
``latency="high"`` by default: the low-latency setting underruns on busy machines, and the latency it adds
is measured by the loopback calibration (``callsim talk --calibrate``) rather than guessed.

Errors are :class:`~voice.errors.EngineUnavailable` with what to do: PortAudio missing (``apt install
libportaudio2``), no such device (``callsim talk --list-devices``), or one that refuses to open.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm, resample
from voice.errors import EngineUnavailable
from voice.speech.sound import portaudio

Device = int | str | None  # an index, a name (or part of one), or None for the default


def sounddevice() -> Any:
    """The sounddevice module, or :class:`EngineUnavailable` saying how to get PortAudio or do without it."""
    return portaudio("run without devices: callsim talk --input-wav FILE --output-wav FILE")


def list_devices() -> str:
    """The sound devices PortAudio sees, one per line (``>`` marks the default input, ``<`` the output)."""
    sd = sounddevice()
    try:
        return str(sd.query_devices())
    except sd.PortAudioError as exc:
        raise EngineUnavailable(f"cannot list sound devices: {exc}") from exc


@dataclass(frozen=True)
class DeviceInfo:
    """What a call needs of PortAudio's description of a device: its name and its own rate."""

    name: str
    default_samplerate: float


def device_info(kind: str, device: Device) -> DeviceInfo:
    """PortAudio's description of the ``kind`` ("input"/"output") device, or a clear error if there is none
    (checked before a call starts, so a missing microphone is said at once)."""
    sd = sounddevice()
    try:
        info = sd.query_devices(device, kind)
        return DeviceInfo(info["name"], info["default_samplerate"])
    except (ValueError, sd.PortAudioError) as exc:
        raise EngineUnavailable(
            f"no {kind} sound device {device if device is not None else '(default)'}: {exc}; "
            "see callsim talk --list-devices, or use --input-wav/--output-wav"
        ) from exc


def _open(kind: str, device: Device, latency: str, callback: Any) -> tuple[Any, int]:
    """Open and start a mono 16-bit ``kind`` ("input"/"output") stream with 20 ms blocks, at 16 kHz if the
    device takes it, else at its own rate; returns the stream and its rate."""
    sd = sounddevice()
    info = device_info(kind, device)
    stream_class = sd.RawInputStream if kind == "input" else sd.RawOutputStream
    last: Exception | None = None
    for rate in dict.fromkeys((SAMPLE_RATE, int(info.default_samplerate))):
        try:
            stream = stream_class(
                samplerate=rate,
                blocksize=rate * 20 // 1000,
                device=device,
                channels=1,
                dtype="int16",
                latency=latency,
                callback=callback,
            )
            stream.start()
            return stream, rate
        except sd.PortAudioError as exc:
            last = exc
    raise EngineUnavailable(f"cannot open the {kind} device {info.name!r}: {last}") from last


class DeviceMicrophone:
    """A PortAudio input device as a :class:`~voice.app.live.ports.Microphone` (mono, 20 ms frames)."""

    def __init__(self, device: Device = None, *, latency: str = "high") -> None:
        self.device, self.latency = device, latency
        self.rate = SAMPLE_RATE
        self.overflows = 0  # blocks PortAudio reports as lost (the machine was too busy)
        self._stream: Any = None
        self._blocks: asyncio.Queue[bytes] = asyncio.Queue()
        self._pending = np.zeros(0, np.int16)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()

        def on_block(data: Any, frames: int, time_info: Any, status: Any) -> None:
            if status:
                self.overflows += 1
            loop.call_soon_threadsafe(self._blocks.put_nowait, bytes(data))

        self._stream, self.rate = _open("input", self.device, self.latency, on_block)

    @property
    def backlog(self) -> int:
        """Blocks captured and not yet read (calibration anchors on the newest)."""
        return self._blocks.qsize()

    async def read(self) -> Pcm | None:
        while len(self._pending) < FRAME_SAMPLES:
            block = np.frombuffer(await self._blocks.get(), dtype=np.int16)
            if self.rate != SAMPLE_RATE:
                block = resample(block, self.rate, SAMPLE_RATE)
            self._pending = np.concatenate([self._pending, block])
        frame, self._pending = self._pending[:FRAME_SAMPLES], self._pending[FRAME_SAMPLES:]
        return frame

    async def stop(self) -> None:
        if self._stream is not None:
            self._stream.stop()
            self._stream.close()
            self._stream = None


class DeviceSpeaker:
    """A PortAudio output device as a :class:`~voice.app.live.ports.Speaker`: plays what is queued, in
    order."""

    def __init__(self, device: Device = None, *, latency: str = "high") -> None:
        self.device, self.latency = device, latency
        self.rate = SAMPLE_RATE
        self.underflows = 0  # callbacks that found nothing queued while something was playing
        self._stream: Any = None
        self._queue: deque[bytes] = deque()
        self._lock = threading.Lock()
        self._head = b""

    async def start(self) -> None:
        def on_block(out: Any, frames: int, time_info: Any, status: Any) -> None:
            need = len(out)
            with self._lock:
                data = self._head
                while len(data) < need and self._queue:
                    data += self._queue.popleft()
                self._head = data[need:]
            chunk = data[:need]
            out[: len(chunk)] = chunk
            if 0 < len(chunk) < need:
                self.underflows += 1
            if len(chunk) < need:
                out[len(chunk) :] = b"\x00" * (need - len(chunk))

        self._stream, self.rate = _open("output", self.device, self.latency, on_block)

    def play(self, pcm: Pcm) -> None:
        audio = resample(pcm, SAMPLE_RATE, self.rate) if self.rate != SAMPLE_RATE else pcm
        with self._lock:
            self._queue.append(np.asarray(audio, dtype="<i2").tobytes())

    async def stop(self) -> None:
        if self._stream is not None:
            self._stream.stop()
            self._stream.close()
            self._stream = None
