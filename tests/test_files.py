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
