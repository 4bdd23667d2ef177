"""Offline Mandarin TTS with Kokoro-82M v1.0 (int8 ONNX) and its eight Mandarin voices (four women, four men).

The text goes through the project's own readings first (:func:`voice.speech.readings.spoken`: 京A12345
read as a plate, 8:45 as a time), never raw digits to the G2P, whose cn2an reads every digit string as a
quantity.  misaki's Mandarin G2P (pypinyin + jieba) turns it into Kokoro's phonemes; the model speaks them
in one voice's style row (the row for the token count, as kokoro-onnx picks it) at 24 kHz, resampled to
16 kHz under the output policy (:func:`voice.speech.tts.engine.finish_speech`).

**The same text gives the same samples, whatever was synthesized before and in whichever process.**  The
ONNX session runs on one intra-op and one inter-op thread, sequentially, so no reduction order depends on
scheduling, and each sentence is its own ``run`` with no state carried between runs; a test synthesizes a
line after others and in a second process and requires the very same samples.  Another CPU's int8 kernels
(AVX2 / AVX-512 VNNI) may round differently: ``scripts/bench_voice`` tells exact from close from differs.

The model (0.6 s to load) and the G2P (jieba's dictionary, ~0.5 s, cached under ``$CALLSIM_CACHE``) are
loaded once per process and shared by every voice; synthesis is serialised by a lock.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, float_to_pcm16, ms_to_samples, resample
from voice.errors import ConfigError, EngineError, EngineUnavailable
from voice.files import cache_root
from voice.speech.readings import spoken
from voice.speech.tts.engine import finish_speech
from voice.speech.tts.kokoro_assets import VOICE_SHA256, ensure_model, load_voice, vocabulary

log = logging.getLogger(__name__)

KOKORO_RATE = 24_000
REVISION = "1"  # in the cache key: bump when the text path, the chunking or the session set-up change
VOICES = tuple(VOICE_SHA256)
MAX_TOKENS = 500  # the model's context is 512 with the two pads; longer sentences are cut at a clause
_SENTENCE = re.compile(r"(?<=[。！？!?；;])")
_CLAUSE = re.compile(r"(?<=[，,、：:])")
SENTENCE_PAUSE_MS = 250  # between two sentences synthesized apart (the model pauses within one itself)

_load_lock = threading.Lock()
_synth_lock = threading.Lock()
_model: _Model | None = None


@dataclass(frozen=True)
class _Model:
    session: Any
    g2p: Any
    vocab: dict[str, int]


def _load_model() -> _Model:
    global _model
    with _load_lock:
        if _model is not None:
            return _model
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise EngineUnavailable(f"onnxruntime cannot be imported ({exc}); run scripts/setup") from exc
        path = ensure_model()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EngineUnavailable(f"Kokoro's model {path} failed to load: {exc}") from exc
        _model = _Model(session, _make_g2p(), vocabulary())
        return _model


def _make_g2p() -> Any:
    """misaki's Mandarin G2P, jieba's dictionary cache kept in CallSim's cache (not the temp folder)."""
    try:
        import jieba
        from misaki import zh
    except ImportError as exc:
        raise EngineUnavailable(f"misaki[zh] cannot be imported ({exc}); run scripts/setup") from exc
    jieba.setLogLevel(logging.WARNING)
    folder = cache_root() / "jieba"
    folder.mkdir(parents=True, exist_ok=True)
    jieba.dt.tmp_dir = str(folder)
    return zh.ZHG2P()


def phonemes(text: str) -> str:
    """Kokoro's phonemes for ``text`` as a caller says it (readings first); what :meth:`KokoroTTS.synthesize`
    speaks, and what :func:`unspeakable` checks."""
    model = _load_model()
    result, _ = model.g2p(spoken(text))
    return str(result or "")


def unspeakable(text: str) -> list[str]:
    """What in ``text`` Kokoro cannot say: letters or marks the G2P left as they were (sorted, unique).

    Punctuation the vocabulary lacks (~, ～) is silence either way and not listed."""
    vocab = _load_model().vocab
    return sorted({c for c in phonemes(text) if c not in vocab and c.isalnum()})


def _chunks(text: str, vocab: dict[str, int], g2p: Any) -> list[list[int]]:
    """``text`` as the token lists to run: one per sentence, a sentence over :data:`MAX_TOKENS` cut at its
    clauses (and a clause still over it at the limit)."""
    out: list[list[int]] = []
    for sentence in (s for s in _SENTENCE.split(text) if s.strip()):
        pieces = [sentence]
        if len(_tokens(sentence, vocab, g2p)) > MAX_TOKENS:
            pieces = [c for c in _CLAUSE.split(sentence) if c.strip()]
        for piece in pieces:
            tokens = _tokens(piece, vocab, g2p)
            out += [tokens[i : i + MAX_TOKENS] for i in range(0, len(tokens), MAX_TOKENS)]
    return [t for t in out if t]


def _tokens(text: str, vocab: dict[str, int], g2p: Any) -> list[int]:
    said, _ = g2p(text)
    return [vocab[c] for c in str(said or "") if c in vocab]


class KokoroTTS:
    """One of Kokoro's Mandarin voices; ``speed`` > 1 speaks faster (the model's own duration scale)."""

    name = "kokoro"

    def __init__(self, voice: str | None = None, *, speed: float = 1.0) -> None:
        if voice is None:
            voice = VOICES[0]
        if voice not in VOICES:
            raise ConfigError(f"Kokoro has no Mandarin voice {voice!r}; choose one of: {', '.join(VOICES)}")
        if not 0.5 <= speed <= 2.0:
            raise ConfigError(f"Kokoro's speed must be within 0.5-2.0 (got {speed})")
        self.voice = voice
        self.speed = speed
        self._style: np.ndarray | None = None

    def params(self) -> dict[str, str]:
        return {"voice": self.voice, "speed": f"{self.speed:g}", "rev": REVISION}

    def load(self) -> None:
        """Load the model, the G2P and this voice now (otherwise the first :meth:`synthesize` does)."""
        _load_model()
        self._voice_table()

    def _voice_table(self) -> np.ndarray:
        if self._style is None:
            self._style = load_voice(self.voice)
        return self._style

    def synthesize(self, text: str) -> Pcm:
        model = _load_model()
        style = self._voice_table()
        with _synth_lock:
            parts: list[Pcm] = []
            for tokens in _chunks(spoken(text), model.vocab, model.g2p):
                try:
                    audio = model.session.run(
                        None,
                        {
                            "tokens": np.asarray([[0, *tokens, 0]], dtype=np.int64),
                            "style": style[min(len(tokens), len(style) - 1)].reshape(1, -1),
                            "speed": np.asarray([self.speed], dtype=np.float32),
                        },
                    )[0]
                except Exception as exc:
                    raise EngineError(f"Kokoro ({self.voice}) failed on {text!r}: {exc}") from exc
                if parts:
                    parts.append(np.zeros(ms_to_samples(SENTENCE_PAUSE_MS, KOKORO_RATE), dtype=np.int16))
                parts.append(float_to_pcm16(np.asarray(audio, dtype=np.float64).ravel()))
        if not parts:
            return np.zeros(0, dtype=np.int16)
        return finish_speech(resample(np.concatenate(parts), KOKORO_RATE, SAMPLE_RATE))
