"""Files CallSim writes: atomically (a reader sees the whole file or none) and WAV audio.

Every file a run writes goes through :func:`atomic_write_bytes`, so a killed run never leaves a
half-written file that looks complete.
"""

from __future__ import annotations

import os
import tempfile
import wave
from pathlib import Path

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.errors import RecordingError

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


AUDIO_FORMATS = ("wav", "flac")  # how a call's stereo recording may be stored (both lossless)


def write_audio(path: Path, channels: list[Pcm], rate: int = SAMPLE_RATE) -> None:
    """Atomically write int16 channels as WAV or FLAC, by ``path``'s suffix.

    FLAC (libsndfile through ``soundfile``) is lossless: the samples read back are the ones written, so
    every figure measured from a FLAC recording is the WAV's, at about a third of its size.
    """
    if path.suffix != ".flac":
        write_wav(path, channels, rate)
        return
    import io

    import soundfile

    buf = io.BytesIO()
    soundfile.write(buf, np.stack(channels, axis=1), rate, format="FLAC", subtype="PCM_16")
    atomic_write_bytes(path, buf.getvalue())


def read_audio(path: Path) -> tuple[list[Pcm], int]:
    """Read a WAV or FLAC recording (by suffix) into int16 channels and its sample rate."""
    if path.suffix != ".flac":
        return read_wav(path)
    import soundfile

    try:
        data, rate = soundfile.read(str(path), dtype="int16", always_2d=True)
    except (OSError, RuntimeError, soundfile.LibsndfileError) as exc:
        raise RecordingError(f"{path}: cannot read FLAC: {exc}") from exc
    return [np.ascontiguousarray(data[:, i]) for i in range(data.shape[1])], int(rate)
