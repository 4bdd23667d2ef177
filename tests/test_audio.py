import numpy as np
import pytest

from voice import audio
from voice.errors import RecordingError


def test_unit_conversions_round_trip():
    assert audio.FRAME_SAMPLES == 320
    assert audio.ms_to_samples(20) == 320
    assert audio.samples_to_ms(8000) == 500.0
    assert audio.ns_to_samples(1_000_000_000) == 16000
    assert audio.samples_to_ns(16) == 1_000_000


def test_mulaw_round_trip_error_is_bounded_by_the_codec_step():
    x = (np.sin(np.arange(8000) / 7.0) * 30000).astype(np.int16)
    y = audio.mulaw_decode(audio.mulaw_encode(x))
    err = np.abs(y.astype(np.int32) - x.astype(np.int32))
    # G.711 mu-law: the quantisation step grows with magnitude, up to 1024 in the top segment
    assert err.max() <= 1024
    small = np.abs(x) < 256
    assert err[small].max() <= 16
    assert len(audio.mulaw_encode(x)) == len(x)


def test_resample_keeps_duration_and_tone():
    t = np.arange(16000) / 16000
    x = audio.float_to_pcm16(0.5 * np.sin(2 * np.pi * 440 * t))
    y = audio.resample(x, 16000, 8000)
    assert len(y) == 8000
    spectrum = np.abs(np.fft.rfft(y.astype(np.float64)))
    assert abs(np.argmax(spectrum) - 440) <= 1  # 1 Hz bins over one second


def test_bytes_round_trip_and_odd_length_rejected():
    x = np.array([0, 1, -1, 32767, -32768], dtype=np.int16)
    assert np.array_equal(audio.from_bytes(audio.to_bytes(x)), x)
    with pytest.raises(ValueError):
        audio.from_bytes(b"\x00\x01\x02")


def test_wav_write_read_two_channels(tmp_path):
    left = np.arange(100, dtype=np.int16)
    right = -np.arange(80, dtype=np.int16)
    path = tmp_path / "x.wav"
    audio.write_wav(path, [left, right])
    (l2, r2), rate = audio.read_wav(path)
    assert rate == 16000
    assert np.array_equal(l2, left)
    assert np.array_equal(r2[:80], right) and not r2[80:].any()
    assert not list(tmp_path.glob("*.tmp"))


def test_read_wav_error_names_the_file(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not a wav")
    with pytest.raises(RecordingError, match=r"bad\.wav"):
        audio.read_wav(bad)


def test_frames_pad_last_and_rms():
    fr = audio.frames(np.ones(700, dtype=np.int16))
    assert [len(f) for f in fr] == [320, 320, 320]
    assert fr[-1][60:].sum() == 0
    assert audio.rms_dbfs(np.zeros(10, dtype=np.int16)) == float("-inf")
    assert audio.rms_dbfs(np.full(10, 16384, dtype=np.int16)) == pytest.approx(-6.02, abs=0.01)


def test_atomic_writes_leave_readable_files_and_no_temporaries(tmp_path):
    import os
    import stat

    target = tmp_path / "sub" / "x.json"
    audio.atomic_write_bytes(target, b"{}")
    audio.atomic_write_bytes(target, b"[1]")
    assert target.read_bytes() == b"[1]"
    mode = stat.S_IMODE(os.stat(target).st_mode)
    assert mode & stat.S_IRUSR and mode & stat.S_IRGRP  # 0644 under the usual umask, not mkstemp's 0600
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]
