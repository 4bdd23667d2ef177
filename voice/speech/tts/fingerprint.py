"""Fingerprints of synthesized speech: is this the voice the repository recorded, sample for sample or close?

The bundled set's caller audio is fingerprinted in ``voice/data/caller_voice.json``
(``scripts/bench_voice --update`` writes it).  A fingerprint holds the exact content (sample count and
sha256 of the int16 samples) and a coarse loudness envelope (RMS in dB over 40 ms frames), so two machines
whose kernels round differently can still be told apart from a voice that changed:

- **exact**: same samples; what the same machine and packages must give (a test requires it);
- **close**: the same number of samples (the acoustic model fixes every duration) and an envelope within
  :data:`ENVELOPE_TOLERANCE_DB` (mean absolute difference over the frames): another CPU's rounding;
- **differs**: anything else, e.g. a voice whose history changed it (the XNNPACK fault this guards against
  moved the probe sentence by 1,275 samples).

The tolerance is measured, not guessed.  ``scripts/bench_voice --kernels`` vocodes each line's mel with
TFLite's built-in kernels as well as with XNNPACK's, two code paths as far apart as two CPUs' SIMD: on the
113 bundled lines the same lengths and at most 0.0011 dB apart.  The smallest real change of the voice
found at an unchanged length (pitch 1.02 instead of 1.0) is 0.35 dB away.  The bound, 0.1 dB, sits ~100
times above the first and ~3 times below the second (docs/voice.md).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal, TypedDict

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, ms_to_samples

FRAME_SAMPLES = ms_to_samples(40, SAMPLE_RATE)
FLOOR_DB = -80.0  # silence reads as this, so pauses compare equal whatever their exact noise
ENVELOPE_TOLERANCE_DB = 0.1  # mean |difference| of two envelopes still called the same voice (see above)

Match = Literal["exact", "close", "differs"]


class FingerprintJson(TypedDict):
    """A fingerprint as ``caller_voice.json`` keeps it (one line of its ``lines``)."""

    text: str
    samples: int
    sha256: str
    envelope: list[float]


@dataclass(frozen=True)
class Fingerprint:
    """One line's audio: how many samples, their sha256, and the loudness envelope (dB per 40 ms)."""

    text: str
    samples: int
    sha256: str
    envelope: tuple[float, ...]

    def to_json(self) -> FingerprintJson:
        envelope = list(self.envelope)
        return {"text": self.text, "samples": self.samples, "sha256": self.sha256, "envelope": envelope}

    @classmethod
    def from_json(cls, obj: FingerprintJson) -> Fingerprint:
        return cls(str(obj["text"]), int(obj["samples"]), str(obj["sha256"]), tuple(obj["envelope"]))


def envelope(pcm: Pcm) -> tuple[float, ...]:
    """RMS level of each whole 40 ms frame in dB of full scale, floored at :data:`FLOOR_DB`, 0.1 dB steps."""
    frames = len(pcm) // FRAME_SAMPLES
    if frames == 0:
        return ()
    x = np.asarray(pcm[: frames * FRAME_SAMPLES], dtype=np.float64).reshape(frames, FRAME_SAMPLES) / 32768.0
    rms = np.sqrt(np.mean(x * x, axis=1))
    db = np.maximum(20.0 * np.log10(np.maximum(rms, 1e-12)), FLOOR_DB)
    return tuple(round(float(v), 1) for v in db)


def fingerprint(text: str, pcm: Pcm) -> Fingerprint:
    samples = np.ascontiguousarray(pcm, dtype=np.int16)
    return Fingerprint(text, len(samples), hashlib.sha256(samples.tobytes()).hexdigest(), envelope(samples))


def envelope_distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Mean absolute difference in dB over the frames both have (inf if either has none)."""
    n = min(len(a), len(b))
    if n == 0:
        return float("inf")
    return float(np.mean(np.abs(np.asarray(a[:n]) - np.asarray(b[:n]))))


def compare(expected: Fingerprint, got: Fingerprint, tolerance_db: float = ENVELOPE_TOLERANCE_DB) -> Match:
    """How ``got`` matches ``expected``: exact, close (another machine's rounding) or differs."""
    if got.sha256 == expected.sha256 and got.samples == expected.samples:
        return "exact"
    if got.samples == expected.samples and envelope_distance(expected.envelope, got.envelope) <= tolerance_db:
        return "close"
    return "differs"
