"""VAD on synthetic audio whose speech boundaries are known to the sample."""

import math

import numpy as np
import pytest

from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, ms_to_samples
from voice.errors import ConfigError
from voice.speech.tts.engine import EDGE_PAD_SAMPLES
from voice.speech.tts.memory import MemoryTTS
from voice.speech.vad import FrameVAD, ms_to_frames, speech_bounds, speech_segments

TOLERANCE = ms_to_samples(5)


def voiced(ms: float, *, peak: float = 0.5, f0: float = 150.0, attack_ms: float = 5.0) -> np.ndarray:
    """A harmonic 'vowel' that starts sounding at its first sample (linear attack) and ends at its last."""
    n = ms_to_samples(ms)
    t = np.arange(n) / SAMPLE_RATE
    wave = sum(np.sin(2 * math.pi * k * f0 * t + k) / k for k in range(1, 8))
    env = np.minimum(1.0, np.minimum(np.arange(n), np.arange(n)[::-1]) / ms_to_samples(attack_ms))
    x = wave * env
    return np.round(x / np.max(np.abs(x)) * peak * 32767).astype(np.int16)


def compose(*parts: tuple[str, float], noise_dbfs: float | None = None, seed: int = 0):
    """Concatenate ('s', ms) silences and ('v', ms) voiced parts; returns audio and true [start, end)."""
    chunks, truth, pos = [], [], 0
    for kind, ms in parts:
        chunk = voiced(ms) if kind == "v" else np.zeros(ms_to_samples(ms), np.int16)
        if kind == "v":
            truth.append((pos, pos + len(chunk)))
        chunks.append(chunk)
        pos += len(chunk)
    audio = np.concatenate(chunks)
    if noise_dbfs is not None:
        rng = np.random.default_rng(seed)
        noise = rng.normal(0.0, 32768 * 10 ** (noise_dbfs / 20), len(audio))
        audio = np.clip(audio + np.round(noise), -32768, 32767).astype(np.int16)
    return audio, truth


def assert_close(found, truth):
    assert len(found) == len(truth), (found, truth)
    for (fs, fe), (ts, te) in zip(found, truth, strict=True):
        assert abs(fs - ts) <= TOLERANCE, f"onset {fs} vs {ts}"
        assert abs(fe - te) <= TOLERANCE, f"offset {fe} vs {te}"


def test_onsets_and_offsets_are_accurate_to_5_ms_off_the_frame_grid():
    # 1013 ms and 537 ms are deliberately not multiples of the 20 ms frame.
    audio, truth = compose(("s", 1013), ("v", 700), ("s", 537), ("v", 450), ("s", 300))
    found = speech_segments(audio)
    assert_close(found, truth)
    # refinement is the point: webrtcvad's frame grid alone is off by up to a frame or more
    raw = speech_segments(audio, refine=False)
    assert all(s % FRAME_SAMPLES == 0 for s, _ in raw)


def test_accuracy_holds_over_a_noise_floor_and_for_quiet_speech():
    audio, truth = compose(("s", 777), ("v", 600), ("s", 800), noise_dbfs=-65)
    assert_close(speech_segments(audio), truth)
    quiet = (voiced(600, peak=0.02)).astype(np.int16)  # -34 dBFS peak
    audio = np.concatenate([np.zeros(ms_to_samples(433), np.int16), quiet, np.zeros(8000, np.int16)])
    assert_close(speech_segments(audio), [(ms_to_samples(433), ms_to_samples(433) + len(quiet))])


def test_silence_and_noise_give_no_speech():
    assert speech_segments(np.zeros(SAMPLE_RATE * 2, np.int16)) == []
    assert speech_bounds(np.zeros(SAMPLE_RATE, np.int16)) is None
    noise, _ = compose(("s", 2000), noise_dbfs=-62)
    assert speech_segments(noise) == []
    assert speech_segments(np.zeros(0, np.int16)) == []


def test_short_gaps_merge_and_long_gaps_split():
    audio, truth = compose(("s", 300), ("v", 300), ("s", 120), ("v", 300), ("s", 300))
    assert_close(speech_segments(audio, min_silence_ms=200), [(truth[0][0], truth[1][1])])
    assert_close(speech_segments(audio, min_silence_ms=60), truth)


def test_segments_shorter_than_min_speech_are_dropped():
    audio, truth = compose(("s", 500), ("v", 40), ("s", 500), ("v", 400), ("s", 300))
    found = speech_segments(audio, min_speech_ms=100)
    assert_close(found, truth[1:])


def test_speech_bounds_of_memory_tts_are_exactly_its_edge_padding():
    audio = MemoryTTS().synthesize("你好，请问有什么事？")
    assert speech_bounds(audio) == (EDGE_PAD_SAMPLES, len(audio) - EDGE_PAD_SAMPLES)


def test_frame_vad_validates_and_ignores_digital_silence():
    vad = FrameVAD()
    assert not vad.is_speech(np.zeros(FRAME_SAMPLES, np.int16))
    whisper_level = voiced(20, peak=10 ** (-62 / 20))  # below the -55 dBFS floor
    assert not vad.is_speech(whisper_level)
    with pytest.raises(ValueError, match="320 samples"):
        vad.is_speech(np.zeros(160, np.int16))
    with pytest.raises(ConfigError):
        FrameVAD(aggressiveness=4)


def test_ms_to_frames_rounds_up():
    assert ms_to_frames(200) == 10
    assert ms_to_frames(210) == 11
    assert ms_to_frames(0) == 1
