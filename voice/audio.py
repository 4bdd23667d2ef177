"""PCM audio: the line format, frames, unit conversions, resampling, mu-law, and WAV files.

CallSim's line format is 16-bit signed little-endian mono PCM at 16 kHz, cut into 20 ms frames of 320
samples.  Inside audio logic time is counted in samples; milliseconds and nanoseconds are converted here,
once, at the edge.
"""

from __future__ import annotations

import os
import tempfile
import wave
from math import gcd
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy.signal import resample_poly

from voice.errors import RecordingError

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

_MULAW_BIAS = 0x84
_MULAW_CLIP = 32635


def _build_mulaw_decode_table() -> npt.NDArray[np.int16]:
    table = np.zeros(256, dtype=np.int16)
    for i in range(256):
        u = ~i & 0xFF
        sign = u & 0x80
        exponent = (u >> 4) & 0x07
        mantissa = u & 0x0F
        magnitude = ((mantissa << 3) + _MULAW_BIAS) << exponent
        value = magnitude - _MULAW_BIAS
        table[i] = -value if sign else value
    return table


_MULAW_DECODE = _build_mulaw_decode_table()


def mulaw_encode(pcm: Pcm) -> bytes:
    """int16 PCM to G.711 mu-law bytes."""
    x = np.asarray(pcm, dtype=np.int32)
    sign = np.where(x < 0, 0x80, 0x00)
    magnitude = np.minimum(np.abs(x), _MULAW_CLIP) + _MULAW_BIAS
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int32) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    encoded = ~(sign | (exponent << 4) | mantissa) & 0xFF
    return encoded.astype(np.uint8).tobytes()


def mulaw_decode(data: bytes) -> Pcm:
    """G.711 mu-law bytes to int16 PCM."""
    return _MULAW_DECODE[np.frombuffer(data, dtype=np.uint8)].astype(np.int16)


# --- WAV files -----------------------------------------------------------------------------------------


_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once at import: os.umask can only be read by setting it


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file so that readers see either the old content or the whole new content, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def wav_bytes(channels: list[Pcm], rate: int = SAMPLE_RATE) -> bytes:
    """Encode one or more equal-length int16 channels as a WAV file in memory."""
    import io

    if not channels:
        raise ValueError("at least one channel is needed")
    length = max(len(c) for c in channels)
    data = np.zeros((length, len(channels)), dtype="<i2")
    for i, c in enumerate(channels):
        data[: len(c), i] = c
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(len(channels))
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data.tobytes())
    return buf.getvalue()


def write_wav(path: Path, channels: list[Pcm], rate: int = SAMPLE_RATE) -> None:
    """Atomically write int16 channels (e.g. ``[caller, assistant]``) to a WAV file."""
    atomic_write_bytes(path, wav_bytes(channels, rate))


def read_wav(path: Path) -> tuple[list[Pcm], int]:
    """Read a 16-bit PCM WAV file into a list of channels and its sample rate."""
    try:
        with wave.open(str(path), "rb") as w:
            if w.getsampwidth() != 2:
                raise RecordingError(
                    f"{path}: only 16-bit PCM WAV is supported (got {8 * w.getsampwidth()}-bit)"
                )
            n_channels, rate = w.getnchannels(), w.getframerate()
            raw = w.readframes(w.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise RecordingError(f"{path}: cannot read WAV: {exc}") from exc
    data = np.frombuffer(raw, dtype="<i2").reshape(-1, n_channels)
    return [data[:, i].astype(np.int16) for i in range(n_channels)], rate


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
