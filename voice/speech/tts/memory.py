"""An in-memory TTS double: instant, deterministic tones shaped like speech, for tests and quick runs."""

from __future__ import annotations

import math
import threading
import unicodedata

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, float_to_pcm16, ms_to_samples
from voice.errors import ConfigError
from voice.speech.tts.engine import finish_speech


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
