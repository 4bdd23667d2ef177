"""A call's audio on WebRTC: the caller's frames as an aiortc track, the bot's track back as 16 kHz PCM.

:class:`CallerTrack` is the caller's outgoing track.  aiortc's sender *pulls* frames (``recv``) and encodes
each to Opus as soon as it has it; aiortc's own ``AudioStreamTrack`` paces itself with a sleep.  This
track has no clock of its own: ``recv`` waits for the next frame the call driver pushes, so the driver's
one schedule (frame ``k`` at ``t0 + (k+1) * 20 ms``) is the pacing of the RTP stream too, as on every
other line.  Frames are numbered in samples (``pts`` at 16 kHz), which aiortc turns into RTP timestamps.
If the sender stops taking frames (a dead connection) at most :data:`MAX_QUEUED_FRAMES` wait and the
oldest are dropped and counted: memory stays bounded.

:class:`HeardAudio` turns what the bot's track gives (Opus decoded by aiortc after its jitter buffer:
48 kHz stereo) into the call's 16 kHz mono, with one resampler per call so frame edges join without a
seam.  Frames of digital silence are not handed on (:data:`SILENT_PEAK`): a WebRTC bot sends a frame
every 20 ms whether it speaks or not (pipecat's output track sends zeros between replies), and the call
core's playout buffer plays each chunk from its arrival or after what is queued, so a stream of silence
would carry any one late frame's delay into the next reply.  Dropping silence does not move anything the
caller hears: a dropped frame would have played as silence where it now plays nothing.
"""

from __future__ import annotations

import asyncio
import fractions
from collections import deque

import numpy as np
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from av import AudioFrame, AudioResampler

from voice.core.audio import SAMPLE_RATE, Pcm

__all__ = ["MAX_QUEUED_FRAMES", "SILENT_PEAK", "CallerTrack", "HeardAudio"]

MAX_QUEUED_FRAMES = 50  # 1 s of caller audio waiting for a sender that does not take it
# Opus's decoding of digital silence stays within a few LSB (seen: at most 5); speech onsets are far above
SILENT_PEAK = 16
_TIME_BASE = fractions.Fraction(1, SAMPLE_RATE)


class CallerTrack(MediaStreamTrack):
    """The caller's audio track: one frame per :meth:`push`, handed to aiortc's sender as it comes."""

    kind = "audio"

    def __init__(self, max_queued: int = MAX_QUEUED_FRAMES) -> None:
        super().__init__()
        self._frames: deque[AudioFrame] = deque()
        self._ready = asyncio.Event()
        self._pts = 0
        self._max_queued = max_queued
        self.dropped = 0  # frames the sender never took, dropped oldest first

    def push(self, pcm: Pcm) -> None:
        """Queue one frame of caller audio (16 kHz mono int16) for the sender."""
        samples = np.ascontiguousarray(pcm, dtype=np.int16).reshape(1, -1)
        frame = AudioFrame.from_ndarray(samples, format="s16", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        frame.time_base = _TIME_BASE
        frame.pts = self._pts
        self._pts += samples.shape[1]
        self._frames.append(frame)
        while len(self._frames) > self._max_queued:
            self._frames.popleft()
            self.dropped += 1
        self._ready.set()

    async def recv(self) -> AudioFrame:
        while not self._frames:
            if self.readyState != "live":
                raise MediaStreamError
            self._ready.clear()
            await self._ready.wait()
        if self.readyState != "live":
            raise MediaStreamError
        return self._frames.popleft()

    def stop(self) -> None:
        super().stop()
        self._ready.set()  # a sender waiting in recv() wakes and sees the track ended


class HeardAudio:
    """The bot's decoded frames as the call's PCM: mono, 16 kHz, silence left out."""

    def __init__(self) -> None:
        self._resampler = AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        self.frames = 0  # frames received from the bot's track
        self.silent = 0  # of which digital silence, not handed on

    def convert(self, frame: AudioFrame) -> Pcm | None:
        """One received frame → its PCM, or ``None`` for digital silence."""
        self.frames += 1
        parts = [
            np.asarray(out.to_ndarray(), dtype=np.int16).reshape(-1)
            for out in self._resampler.resample(frame)
        ]
        pcm = np.concatenate(parts) if parts else np.zeros(0, np.int16)
        if len(pcm) == 0 or int(np.abs(pcm.astype(np.int32)).max()) < SILENT_PEAK:
            self.silent += 1
            return None
        return pcm
