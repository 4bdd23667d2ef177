"""Files CallSim writes: atomically (a reader sees the whole file or none) and WAV audio.

Every file a run writes goes through :func:`atomic_write_bytes`, so a killed run never leaves a
half-written file that looks complete.  A write that fails because of the disk (full, read-only, no
permission, a file-size limit) becomes a :class:`~voice.errors.StorageError`: every later write would fail
the same way, so a batch stops on it instead of recording one call after another as failed.
"""

from __future__ import annotations

import errno
import os
import tempfile
import wave
from pathlib import Path

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.errors import RecordingError, StorageError

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once at import: os.umask can only be read by setting it


def cache_root() -> Path:
    """CallSim's cache directory: ``$CALLSIM_CACHE`` or ``~/.cache/callsim``.

    One root for every room's cache (models, synthesized speech, LLM answers, calibrations), so it sits
    here, below them all."""
    env = os.environ.get("CALLSIM_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "callsim"


# What the disk, not the file's name or content, refuses: the batch cannot go on writing.
DISK_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO}
)


def storage_error(exc: BaseException, path: Path | None = None) -> StorageError | None:
    """``exc`` as a :class:`StorageError` if it is the disk's refusal (ENOSPC, EROFS...), else None."""
    if isinstance(exc, StorageError):
        return exc
    if not isinstance(exc, OSError) or exc.errno not in DISK_ERRNOS:
        return None
    where = path or (Path(exc.filename) if isinstance(exc.filename, str) else None)
    code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return StorageError(f"cannot write {where or 'a file'}: {exc.strerror or exc} ({code})")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file so that readers see either the old content or the whole new content, never half.

    A refusal of the disk raises :class:`StorageError` (see :func:`storage_error`); other ``OSError``s
    (a name too long...) are the caller's to explain.
    """
    try:
        _atomic_write_bytes(path, data)
    except OSError as exc:
        if (refused := storage_error(exc, path)) is not None:
            raise refused from exc
        raise


def _atomic_write_bytes(path: Path, data: bytes) -> None:
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
            n_channels, rate, frames = w.getnchannels(), w.getframerate(), w.getnframes()
            raw = w.readframes(frames)
    except (OSError, EOFError, wave.Error) as exc:
        raise RecordingError(f"{path}: cannot read WAV: {exc}") from exc
    if len(raw) < frames * n_channels * 2:  # a cut file reads short, silently: measured, it would mislead
        held = len(raw) // (n_channels * 2)
        raise RecordingError(
            f"{path}: truncated WAV: its header says {frames} frames ({frames / rate:.2f} s), the file holds"
            f" {held} ({held / rate:.2f} s); was it copied or written completely?"
        )
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
