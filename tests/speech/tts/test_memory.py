"""MemoryTTS, the in-memory double: deterministic, speech-like, trimmed like a real engine."""

import numpy as np
import pytest

from voice.core.audio import Pcm, ms_to_samples
from voice.speech.tts.engine import EDGE_PAD_SAMPLES
from voice.speech.tts.memory import MemoryTTS


def peak_dbfs(pcm: Pcm) -> float:
    return 20 * np.log10(np.max(np.abs(pcm.astype(np.int32))) / 32768)


def test_memory_tts_is_deterministic_speech_like_and_trimmed():
    tts = MemoryTTS()
    a = tts.synthesize("你好，世界。")
    b = tts.synthesize("你好，世界。")
    assert a.dtype == np.int16 and np.array_equal(a, b)
    # 4 syllables of 180 ms + 3 inner gaps of 40 ms + one 150 ms pause, then ~30 ms pads at each end
    expected = ms_to_samples(4 * 180 + 3 * 40 + 40 + 150) + 2 * EDGE_PAD_SAMPLES
    assert abs(len(a) - expected) <= ms_to_samples(50)
    assert peak_dbfs(a) == pytest.approx(-3.0, abs=0.01)
    edge = np.abs(a.astype(np.int32))
    assert edge[:EDGE_PAD_SAMPLES].max() < 328 <= edge[EDGE_PAD_SAMPLES]
    assert tts.requests == ["你好，世界。", "你好，世界。"]


def test_memory_tts_punctuation_only_is_empty_and_voices_differ():
    assert len(MemoryTTS().synthesize("。，！ ")) == 0
    low, high = MemoryTTS(f0_hz=120), MemoryTTS(f0_hz=220)
    assert not np.array_equal(low.synthesize("好"), high.synthesize("好"))
    assert low.params() != high.params()
    assert len(MemoryTTS(speed=2.0).synthesize("你好")) < len(MemoryTTS().synthesize("你好"))
