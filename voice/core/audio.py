"""PCM audio: the line format, frames, unit conversions, resampling and where speech is in a clip.

CallSim's line format is 16-bit signed little-endian mono PCM at 16 kHz, cut into 20 ms frames of 320
samples.  Inside audio logic time is counted in samples; milliseconds and nanoseconds are converted here,
once, at the edge.
"""

from __future__ import annotations

from math import gcd

import numpy as np
import numpy.typing as npt
from scipy.signal import resample_poly

SAMPLE_RATE = 16_000
FRAME_MS = 20
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000  # 320
FRAME_BYTES = FRAME_SAMPLES * 2

Pcm = npt.NDArray[np.int16]


def ms_to_samples(ms: float, rate: int = SAMPLE_RATE) -> int:
    """Milliseconds to a whole number of samples (rounded to nearest)."""
    return round(ms * rate / 1000.0)


def samples_to_ms(samples: int | float, rate: int = SAMPLE_RATE) -> float:
    """Samples to milliseconds."""
    return float(samples) * 1000.0 / rate


def ns_to_samples(ns: int, rate: int = SAMPLE_RATE) -> int:
    """Nanoseconds to samples, rounded down (a sample is heard once its start has passed)."""
    return ns * rate // 1_000_000_000


def samples_to_ns(samples: int, rate: int = SAMPLE_RATE) -> int:
    """Samples to nanoseconds."""
    return samples * 1_000_000_000 // rate


def silence(samples: int) -> Pcm:
    """``samples`` of digital silence."""
    return np.zeros(max(0, samples), dtype=np.int16)


_SILENT: dict[int, Pcm] = {}


def shared_silence(samples: int) -> Pcm:
    """A read-only array of ``samples`` zeros, shared by every caller (no allocation per frame)."""
    pcm = _SILENT.get(samples)
    if pcm is None:
        pcm = silence(samples)
        pcm.setflags(write=False)
        _SILENT[samples] = pcm
    return pcm


def float_to_pcm16(audio: npt.NDArray[np.floating]) -> Pcm:
    """Float audio in [-1, 1] to int16, clipping out-of-range values."""
    return np.clip(np.round(np.asarray(audio, dtype=np.float64) * 32767.0), -32768, 32767).astype(np.int16)


def pcm16_to_float(pcm: Pcm) -> npt.NDArray[np.float32]:
    """int16 PCM to float32 in [-1, 1)."""
    return (np.asarray(pcm, dtype=np.float32) / 32768.0).astype(np.float32)


def resample(pcm: Pcm, src_rate: int, dst_rate: int) -> Pcm:
    """Polyphase resampling of int16 PCM (anti-aliased)."""
    if src_rate == dst_rate or len(pcm) == 0:
        return np.asarray(pcm, dtype=np.int16).copy()
    g = gcd(src_rate, dst_rate)
    out = resample_poly(np.asarray(pcm, dtype=np.float64), dst_rate // g, src_rate // g)
    return np.clip(np.round(out), -32768, 32767).astype(np.int16)


def to_bytes(pcm: Pcm) -> bytes:
    """int16 PCM to little-endian bytes."""
    return np.asarray(pcm, dtype="<i2").tobytes()


def from_bytes(data: bytes) -> Pcm:
    """Little-endian 16-bit bytes to int16 PCM; a trailing odd byte is an error."""
    if len(data) % 2:
        raise ValueError(f"PCM16 payload has an odd number of bytes ({len(data)})")
    return np.frombuffer(data, dtype="<i2").astype(np.int16)


def rms_dbfs(pcm: Pcm) -> float:
    """RMS level in dBFS (-inf for digital silence)."""
    if len(pcm) == 0:
        return float("-inf")
    rms = float(np.sqrt(np.mean(np.square(pcm.astype(np.float64)))))
    return 20.0 * np.log10(rms / 32768.0) if rms > 0 else float("-inf")


def frames(pcm: Pcm, frame_samples: int = FRAME_SAMPLES) -> list[Pcm]:
    """Cut PCM into whole frames, zero-padding the last one."""
    n = -(-len(pcm) // frame_samples)
    padded = np.zeros(n * frame_samples, dtype=np.int16)
    padded[: len(pcm)] = pcm
    return [padded[i * frame_samples : (i + 1) * frame_samples] for i in range(n)]


# --- G.711 mu-law (the telephone codec) ---------------------------------------------------------------

ACTIVE_THRESHOLD = 328  # 1% of full scale: above any dither/codec floor, below the quietest speech onset


def active_bounds(pcm: Pcm, threshold: int = ACTIVE_THRESHOLD) -> tuple[int, int] | None:
    """``[first, last + 1)`` sample indices whose magnitude reaches ``threshold``; None if none does.

    Used to know exactly where synthesized caller speech starts and ends, and to refine a frame-level
    speech onset to the sample.
    """
    idx = np.flatnonzero(np.abs(np.asarray(pcm, dtype=np.int32)) >= threshold)
    if len(idx) == 0:
        return None
    return int(idx[0]), int(idx[-1]) + 1
