"""Speech fingerprints: exact for the same samples, close for another CPU's rounding, differs otherwise."""

import numpy as np

from voice.core.audio import SAMPLE_RATE
from voice.speech.tts.fingerprint import (
    FLOOR_DB,
    FRAME_SAMPLES,
    Fingerprint,
    compare,
    envelope,
    envelope_distance,
    fingerprint,
)


def tone(seconds: float = 1.0, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (level * 32767 * np.sin(2 * np.pi * 220 * t)).astype(np.int16)


def test_the_envelope_is_the_level_of_each_whole_40_ms_frame_floored_for_silence():
    pcm = np.concatenate([tone(0.2), np.zeros(FRAME_SAMPLES * 3 + 5, dtype=np.int16)])
    env = envelope(pcm)
    assert len(env) == len(pcm) // FRAME_SAMPLES
    assert all(abs(v - 20 * np.log10(0.5 / np.sqrt(2))) < 0.2 for v in env[:5])  # a sine's RMS
    assert env[-3:] == (FLOOR_DB,) * 3
    assert envelope(np.zeros(10, dtype=np.int16)) == ()


def test_the_same_samples_are_exact_rounding_is_close_and_a_changed_voice_differs():
    pcm = tone()
    first = fingerprint("好", pcm)
    assert compare(first, fingerprint("好", pcm.copy())) == "exact"
    rounding = pcm + np.random.default_rng(0).integers(-2, 3, len(pcm)).astype(np.int16)
    assert compare(first, fingerprint("好", rounding)) == "close"
    louder = (pcm.astype(np.int32) * 2).clip(-32768, 32767).astype(np.int16)  # ~6 dB: another voice
    assert compare(first, fingerprint("好", louder)) == "differs"
    assert compare(first, fingerprint("好", pcm[:-1])) == "differs"  # a duration changed


def test_fingerprints_round_trip_through_json():
    f = fingerprint("好的", tone(0.3))
    assert Fingerprint.from_json(f.to_json()) == f
    assert envelope_distance(f.envelope, ()) == float("inf")
