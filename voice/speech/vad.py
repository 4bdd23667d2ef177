"""Voice activity detection: webrtcvad decisions on 20 ms frames, with boundaries refined to the sample.

webrtcvad answers per 20 ms frame and carries internal hangover, so its raw boundaries are late at onsets
and late at offsets by up to several frames.  Response latency is measured from these boundaries, so each
segment is refined with an amplitude threshold: the onset moves to the first sample of the connected
sound that webrtcvad's frames belong to, the offset to one past its last sample.  That makes onsets
accurate to well under a millisecond on clean audio instead of to a frame or worse.

The amplitude threshold is relative to the segment's peak (:func:`amplitude_threshold`), never below the
energy floor, so quiet speakers are not clipped and line noise below -55 dBFS never counts as sound.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from voice.core.audio import (
    ACTIVE_THRESHOLD,
    FRAME_SAMPLES,
    SAMPLE_RATE,
    Pcm,
    frames,
    ms_to_samples,
    to_bytes,
)
from voice.errors import ConfigError, EngineError

DEFAULT_AGGRESSIVENESS = 2
ENERGY_FLOOR_DBFS = -55.0
"""Frames whose RMS is below this are never speech, whatever webrtcvad says (it can fire on dither)."""

ONSET_PEAK_FRACTION = 0.03
"""Sound starts where |x| first reaches ``voice.core.audio.ACTIVE_THRESHOLD`` (1% of full scale, the
caller-side rule) or 3% of the segment peak (-30 dB) if that is lower, so quiet speech keeps its soft
onsets."""

_FULL_SCALE = 32768.0
_FLOOR_AMPLITUDE = int(np.ceil(_FULL_SCALE * 10.0 ** (ENERGY_FLOOR_DBFS / 20.0)))
_FLOOR_MEAN_SQUARE = (_FULL_SCALE * 10.0 ** (ENERGY_FLOOR_DBFS / 20.0)) ** 2
_REFINE_SAMPLES = 5 * FRAME_SAMPLES  # a refined boundary moves at most 100 ms outward from webrtcvad's
_HANGOVER_FRAMES = 8  # more than webrtcvad's longest hangover at 20 ms frames
_MAX_GAP_SAMPLES = FRAME_SAMPLES  # louder-than-threshold samples closer than 20 ms belong to one sound

_AbsArray = npt.NDArray[np.int32]


def ms_to_frames(ms: float) -> int:
    """Milliseconds to a whole number of 20 ms frames, rounded up (at least one frame)."""
    return max(1, -(-ms_to_samples(ms) // FRAME_SAMPLES))


def amplitude_threshold(peak: int) -> int:
    """|x| at which a segment with this peak counts as sounding (see the module docstring)."""
    return max(_FLOOR_AMPLITUDE, min(ACTIVE_THRESHOLD, int(ONSET_PEAK_FRACTION * float(peak))))


def _abs(pcm: Pcm) -> _AbsArray:
    return np.abs(np.asarray(pcm, dtype=np.int32))


def _refine_onset(absx: _AbsArray, start: int, end: int, lo: int, thr: int) -> int:
    """Earliest sample of the sound around ``[start, end)``, searching back no further than ``lo``."""
    inside = np.flatnonzero(absx[start:end] >= thr)
    if len(inside) == 0:
        return start
    first = start + int(inside[0])
    window_lo = max(lo, start - _REFINE_SAMPLES)
    before = window_lo + np.flatnonzero(absx[window_lo:first] >= thr)
    chain = np.append(before, first)
    breaks = np.flatnonzero(np.diff(chain) > _MAX_GAP_SAMPLES)
    return int(chain[breaks[-1] + 1]) if len(breaks) else int(chain[0])


def _refine_offset(absx: _AbsArray, start: int, end: int, hi: int, thr: int) -> int:
    """One past the last sample of the sound around ``[start, end)``, searching on no further than ``hi``."""
    inside = np.flatnonzero(absx[start:end] >= thr)
    if len(inside) == 0:
        return end
    last = start + int(inside[-1])
    window_hi = min(hi, end + _REFINE_SAMPLES, len(absx))
    after = last + 1 + np.flatnonzero(absx[last + 1 : window_hi] >= thr)
    chain = np.insert(after, 0, last)
    breaks = np.flatnonzero(np.diff(chain) > _MAX_GAP_SAMPLES)
    return int(chain[breaks[0]]) + 1 if len(breaks) else int(chain[-1]) + 1


class FrameVAD:
    """webrtcvad on one 20 ms frame at 16 kHz, with an energy floor for digital-silence robustness.

    webrtcvad keeps state between frames (its own hangover), so use one instance per audio stream.
    """

    def __init__(self, aggressiveness: int = DEFAULT_AGGRESSIVENESS) -> None:
        if aggressiveness not in (0, 1, 2, 3):
            raise ConfigError(f"VAD aggressiveness must be 0, 1, 2 or 3 (got {aggressiveness})")
        try:
            import webrtcvad
        except ImportError as exc:
            raise EngineError("webrtcvad is not installed: pip install webrtcvad-wheels") from exc
        self.aggressiveness = aggressiveness
        self._vad = webrtcvad.Vad(aggressiveness)

    def is_speech(self, frame: Pcm) -> bool:
        """True if this 320-sample frame is speech; frames below the energy floor never are."""
        if len(frame) != FRAME_SAMPLES:
            raise ValueError(f"a VAD frame is {FRAME_SAMPLES} samples (got {len(frame)})")
        if float(np.mean(np.square(frame, dtype=np.float64))) < _FLOOR_MEAN_SQUARE:
            return False
        try:
            return bool(self._vad.is_speech(to_bytes(frame), SAMPLE_RATE))
        except Exception as exc:  # webrtcvad raises bare Exception on bad input
            raise EngineError(f"webrtcvad failed: {exc}") from exc


def _frame_runs(flags: list[bool]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, flag in enumerate(flags):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(flags)))
    return runs


def speech_segments(
    pcm: Pcm,
    *,
    aggressiveness: int = DEFAULT_AGGRESSIVENESS,
    min_speech_ms: float = 60,
    min_silence_ms: float = 200,
    refine: bool = True,
) -> list[tuple[int, int]]:
    """Speech in ``pcm`` as ``[start, end)`` sample ranges, in order and non-overlapping.

    Runs of speech frames separated by less than ``min_silence_ms`` are merged first (pauses between
    syllables and words), then runs shorter than ``min_speech_ms`` are dropped (clicks).  With ``refine``
    the frame-aligned boundaries are moved to the exact first and one-past-last sounding sample.
    """
    vad = FrameVAD(aggressiveness)
    flags = [vad.is_speech(f) for f in frames(np.asarray(pcm, dtype=np.int16))]
    min_gap, min_len = ms_to_frames(min_silence_ms), ms_to_frames(min_speech_ms)
    merged: list[tuple[int, int]] = []
    for start, end in _frame_runs(flags):
        if merged and start - merged[-1][1] < min_gap:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    n = len(pcm)
    segments = [(s * FRAME_SAMPLES, min(e * FRAME_SAMPLES, n)) for s, e in merged if e - s >= min_len]
    if not refine:
        return segments
    absx = _abs(pcm)
    refined: list[tuple[int, int]] = []
    for i, (start, end) in enumerate(segments):
        lo = refined[-1][1] if refined else 0
        hi = segments[i + 1][0] if i + 1 < len(segments) else n
        thr = amplitude_threshold(int(absx[start:end].max()))
        onset = _refine_onset(absx, start, end, lo, thr)
        offset = _refine_offset(absx, start, end, hi, thr)
        refined.append((onset, max(offset, onset + 1)))
    return refined


def speech_bounds(pcm: Pcm, *, aggressiveness: int = DEFAULT_AGGRESSIVENESS) -> tuple[int, int] | None:
    """First speech onset and last speech offset in samples (refined), or None if there is no speech."""
    segments = speech_segments(pcm, aggressiveness=aggressiveness)
    return (segments[0][0], segments[-1][1]) if segments else None


@dataclass(frozen=True)
class VadEvent:
    """A speech boundary found by :class:`EndpointDetector`.

    ``sample`` is where the boundary is (refined onset, or one past the last sounding sample);
    ``decided_at`` is the sample count at which the detector knew it, i.e. the end of the frame that
    triggered the decision.  ``decided_at - sample`` is the detector's own reaction time.
    """

    kind: Literal["speech_start", "speech_end"]
    sample: int
    decided_at: int


class EndpointDetector:
    """Streaming speech start/end detection over consecutive 20 ms frames.

    Speech starts after ``start_ms`` of consecutive speech frames and ends after ``min_silence_ms`` of
    consecutive non-speech frames; both are converted to frame counts once, here.  Sample indices count
    from the first frame fed (or the last :meth:`reset`).
    """

    def __init__(
        self,
        *,
        aggressiveness: int = DEFAULT_AGGRESSIVENESS,
        start_ms: float = 60,
        min_silence_ms: float = 200,
        refine: bool = True,
    ) -> None:
        self._aggressiveness = aggressiveness
        self._start_frames = ms_to_frames(start_ms)
        self._end_frames = ms_to_frames(min_silence_ms)
        self._refine = refine
        # Enough history to look back from a decision to the boundary, past webrtcvad's own hangover
        # (at most 5 frames at 20 ms), plus the refinement window.
        self._history_frames = (
            max(self._start_frames, self._end_frames)
            + _HANGOVER_FRAMES
            + _REFINE_SAMPLES // FRAME_SAMPLES
            + 1
        )
        self.reset()

    def reset(self) -> None:
        """Forget all state and restart sample counting at zero."""
        self._vad = FrameVAD(self._aggressiveness)
        self._history: deque[Pcm] = deque(maxlen=self._history_frames)
        self._fed = 0
        self._in_speech = False
        self._run = 0  # consecutive speech frames (while silent) or non-speech frames (while speaking)
        self._last_speech_end = 0  # end of the last speech frame, in samples
        self._onset = 0
        self._last_offset = 0
        self._peak = 0

    @property
    def in_speech(self) -> bool:
        """True between a speech_start and its speech_end."""
        return self._in_speech

    @property
    def samples_fed(self) -> int:
        """Samples consumed so far."""
        return self._fed

    def feed(self, frame: Pcm) -> list[VadEvent]:
        """Consume one 320-sample frame; return the events it completed (usually none)."""
        speech = self._vad.is_speech(frame)
        frame = np.asarray(frame, dtype=np.int16)
        self._history.append(frame)
        frame_start = self._fed
        self._fed += FRAME_SAMPLES
        if speech:
            self._peak = max(self._peak, int(np.max(np.abs(frame.astype(np.int32)))))
            self._last_speech_end = self._fed
        if not self._in_speech:
            self._run = self._run + 1 if speech else 0
            if not speech:
                self._peak = 0
            if self._run < self._start_frames:
                return []
            self._in_speech, self._run = True, 0
            self._onset = self._start_onset(frame_start - (self._start_frames - 1) * FRAME_SAMPLES)
            return [VadEvent("speech_start", self._onset, self._fed)]
        self._run = 0 if speech else self._run + 1
        if self._run < self._end_frames:
            return []
        offset = self._end_offset()
        self._in_speech, self._run, self._peak = False, 0, 0
        self._last_offset = offset
        return [VadEvent("speech_end", offset, self._fed)]

    def _buffer(self) -> tuple[_AbsArray, int]:
        """The remembered frames as one |x| array and the absolute sample index of its first sample."""
        absx = _abs(np.concatenate(list(self._history)))
        return absx, self._fed - len(absx)

    def _start_onset(self, run_start: int) -> int:
        if not self._refine:
            return run_start
        absx, base = self._buffer()
        lo = max(0, self._last_offset - base)
        onset = _refine_onset(absx, run_start - base, len(absx), lo, amplitude_threshold(self._peak))
        return base + onset

    def _end_offset(self) -> int:
        if not self._refine:
            return self._last_speech_end
        absx, base = self._buffer()
        start = max(0, self._onset - base)
        end = self._last_speech_end - base
        if end <= start:
            return self._last_speech_end
        return base + _refine_offset(absx, start, end, len(absx), amplitude_threshold(self._peak))


__all__ = [
    "DEFAULT_AGGRESSIVENESS",
    "EndpointDetector",
    "FrameVAD",
    "VadEvent",
    "amplitude_threshold",
    "ms_to_frames",
    "speech_bounds",
    "speech_segments",
]
