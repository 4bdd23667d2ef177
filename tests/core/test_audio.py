import numpy as np
import pytest

from voice.core import audio


def test_unit_conversions_round_trip():
    assert audio.FRAME_SAMPLES == 320
    assert audio.ms_to_samples(20) == 320
    assert audio.samples_to_ms(8000) == 500.0
    assert audio.ns_to_samples(1_000_000_000) == 16000
    assert audio.samples_to_ns(16) == 1_000_000


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


def test_frames_pad_last_and_rms():
    fr = audio.frames(np.ones(700, dtype=np.int16))
    assert [len(f) for f in fr] == [320, 320, 320]
    assert fr[-1][60:].sum() == 0
    assert audio.rms_dbfs(np.zeros(10, dtype=np.int16)) == float("-inf")
    assert audio.rms_dbfs(np.full(10, 16384, dtype=np.int16)) == pytest.approx(-6.02, abs=0.01)
