"""Transcribers by name: offline Whisper (the default) or any OpenAI-compatible transcription server.

``make_transcriber("whisper")`` is Whisper base with the settings that hear the built-in assistant's replies
best (:data:`REPLY_WHISPER`: a phone-assistant prompt and hotwords; figures in docs/benchmarks.md);
``make_transcriber("openai:MODEL")`` posts each reply to ``/v1/audio/transcriptions`` of a server
(faster-whisper servers, FunASR, vLLM, OpenAI) with the same prompt.  Every transcriber can
:meth:`~voice.speech.asr.ASREngine.describe` itself, so a scored run records what made its transcripts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from voice.errors import ConfigError
from voice.speech.asr import DEFAULT_PROMPT, ASREngine, MemoryASR, WhisperASR

TRANSCRIBERS = ("whisper", "openai:MODEL", "memory")

REPLY_PROMPT = (
    "以下是电话助理替机主接电话时说的普通话，常说到机主、外卖、快递、驿站、快递柜、验证码、转告、回电。"
)
"""The initial prompt for transcribing replies: a phone assistant's register and vocabulary, which Whisper
base otherwise mishears (机主 as 基础, 记者, 吉祖; 快递 as 快地; 驿站 as 一站)."""

REPLY_HOTWORDS = "机主 外卖 快递 驿站 快递柜 验证码 转告 回电"
"""Hint words, put before the prompt by faster-whisper."""


@dataclass(frozen=True)
class WhisperSettings:
    """Decoding settings of offline Whisper (what :class:`~voice.speech.asr.WhisperASR` takes)."""

    beam_size: int = 1
    initial_prompt: str | None = DEFAULT_PROMPT
    hotwords: str | None = None
    audio_context_s: float | None = None  # None: the full 30 s window (see WhisperASR)


ASSISTANT_WHISPER = WhisperSettings()
"""The built-in assistant's settings for the caller's speech: greedy, fastest (it is on the critical path)."""

REPLY_WHISPER = WhisperSettings(beam_size=1, initial_prompt=REPLY_PROMPT, hotwords=REPLY_HOTWORDS)
"""For transcribing replies: the domain prompt and hotwords halve the CER on the built-in assistant's voice
for ~1 % more time; beam 5 gained nothing measurable on top for ~17 % more (docs/benchmarks.md)."""


def check_transcriber(spec: str, *, option: str | None = None) -> None:
    """Refuse a name :func:`make_transcriber` would refuse, without making (or loading) the transcriber: a
    run checks ``--transcriber`` before its first call, also when only a later ``score`` would use it."""
    name, _, model = spec.partition(":")
    if spec in ("memory", "whisper") or (name == "openai" and model.strip()):
        return
    said = f"unknown transcriber {spec!r}; choose one of: {', '.join(TRANSCRIBERS)}"
    raise ConfigError(f"{option}: {said}" if option else said)


def make_transcriber(
    spec: str = "whisper",
    *,
    whisper: WhisperSettings = REPLY_WHISPER,
    model_dir: Path | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout_s: float = 60.0,
    max_retries: int = 2,
    prompt: str | None = REPLY_PROMPT,
    language: str = "zh",
) -> ASREngine:
    """A transcriber from its name: ``whisper``, ``openai:MODEL`` or ``memory`` (a double, for tests).

    Whisper takes ``whisper`` (settings) and ``model_dir`` (default: the Whisper base weights).  The
    OpenAI-compatible one takes ``base_url`` and ``api_key`` (default: ``$CALLSIM_ASR_BASE_URL`` /
    ``$CALLSIM_ASR_API_KEY``, else ``$OPENAI_BASE_URL`` / ``$OPENAI_API_KEY``, so the transcription server
    can differ from a judge's chat server), ``timeout_s`` per request, ``max_retries`` (the client's
    backoff on 429, 5xx, timeouts and lost connections) and ``prompt``.  Unknown names raise
    :class:`~voice.errors.ConfigError`.
    """
    check_transcriber(spec)
    name, _, model = spec.partition(":")
    if spec == "memory":  # the test double: hears nothing (like ``--tts memory``)
        return MemoryASR([], default="")
    if spec == "whisper":
        return WhisperASR(
            model_dir,
            language=language,
            beam_size=whisper.beam_size,
            initial_prompt=whisper.initial_prompt,
            hotwords=whisper.hotwords,
            audio_context_s=whisper.audio_context_s,
        )
    if name == "openai" and model.strip():
        from voice.speech.openai_asr import OpenAIASR

        return OpenAIASR(
            model.strip(),
            base_url=base_url or _env("CALLSIM_ASR_BASE_URL", "OPENAI_BASE_URL"),
            api_key=api_key or _env("CALLSIM_ASR_API_KEY", "OPENAI_API_KEY"),
            timeout_s=timeout_s,
            max_retries=max_retries,
            prompt=prompt,
            language=language,
        )
    raise AssertionError(f"check_transcriber let {spec!r} through")  # pragma: no cover


def _env(*names: str) -> str | None:
    return next((v for n in names if (v := os.environ.get(n, "").strip())), None)
