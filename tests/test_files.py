import numpy as np
import pytest

from voice import files
from voice.errors import RecordingError


def test_wav_write_read_two_channels(tmp_path):
    left = np.arange(100, dtype=np.int16)
    right = -np.arange(80, dtype=np.int16)
    path = tmp_path / "x.wav"
    files.write_wav(path, [left, right])
    (l2, r2), rate = files.read_wav(path)
    assert rate == 16000
    assert np.array_equal(l2, left)
    assert np.array_equal(r2[:80], right) and not r2[80:].any()
    assert not list(tmp_path.glob("*.tmp"))


def test_flac_is_lossless_and_a_bad_one_is_named(tmp_path):
    left = np.array([0, 1, -1, 32767, -32768, 123], dtype=np.int16)
    right = -left[::-1]
    files.write_audio(tmp_path / "x.flac", [left, right], 8000)
    (l2, r2), rate = files.read_audio(tmp_path / "x.flac")
    assert rate == 8000 and np.array_equal(l2, left) and np.array_equal(r2, right)
    files.write_audio(tmp_path / "y.wav", [left, right])  # by suffix
    assert files.read_wav(tmp_path / "y.wav")[1] == 16000
    (tmp_path / "bad.flac").write_bytes(b"not flac")
    with pytest.raises(RecordingError, match=r"bad\.flac: cannot read FLAC"):
        files.read_audio(tmp_path / "bad.flac")


def test_read_wav_error_names_the_file(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not a wav")
    with pytest.raises(RecordingError, match=r"bad\.wav"):
        files.read_wav(bad)


def test_atomic_writes_leave_readable_files_and_no_temporaries(tmp_path):
    import os
    import stat

    target = tmp_path / "sub" / "x.json"
    files.atomic_write_bytes(target, b"{}")
    files.atomic_write_bytes(target, b"[1]")
    assert target.read_bytes() == b"[1]"
    mode = stat.S_IMODE(os.stat(target).st_mode)
    assert mode & stat.S_IRUSR and mode & stat.S_IRGRP  # 0644 under the usual umask, not mkstemp's 0600
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_a_disk_refusal_is_a_storage_error_and_other_os_errors_are_not(tmp_path):
    import errno

    from voice.errors import StorageError

    full = files.storage_error(OSError(errno.ENOSPC, "No space left on device"), tmp_path / "x.wav")
    assert isinstance(full, StorageError)
    assert str(full) == f"cannot write {tmp_path / 'x.wav'}: No space left on device (ENOSPC)"
    assert files.storage_error(OSError(errno.ENAMETOOLONG, "File name too long")) is None
    assert files.storage_error(ValueError("x")) is None
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError):  # not the disk's refusal: the caller explains it
        files.atomic_write_bytes(tmp_path / "file" / "x.json", b"{}")


def test_a_write_past_the_file_size_limit_is_a_storage_error(tmp_path):
    """RLIMIT_FSIZE (what a full disk looks like to one file) in a child process, for real."""
    import subprocess
    import sys

    code = (
        "import resource, signal, sys; from pathlib import Path; from voice import files;"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
        "try:\n files.atomic_write_bytes(Path(sys.argv[1]), bytes(5000))\n"
        "except Exception as exc:\n print(type(exc).__name__, exc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "x.wav")], capture_output=True, text=True
    )
    assert done.stdout.startswith("StorageError cannot write") and "(EFBIG)" in done.stdout
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file is gone


def test_a_truncated_wav_is_refused_as_such_not_read_short(tmp_path):
    """A copy cut short reads fewer frames without any error from ``wave``: measured, it would mislead."""
    path = tmp_path / "cut.wav"
    files.write_wav(path, [np.ones(16000, np.int16), np.ones(16000, np.int16)])
    path.write_bytes(path.read_bytes()[:-30001])  # an odd byte count too: cut inside a frame
    with pytest.raises(
        RecordingError, match=r"cut\.wav: truncated WAV: its header says 16000 frames \(1\.00 s\)"
    ):
        files.read_wav(path)


def test_the_cache_root_is_callsim_cache_or_the_home_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("CALLSIM_CACHE", str(tmp_path / "c"))
    assert files.cache_root() == tmp_path / "c"
    monkeypatch.delenv("CALLSIM_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert files.cache_root() == tmp_path / ".cache" / "callsim"
