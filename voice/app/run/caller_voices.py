"""Who calls: the population of caller voices of a run, and which voice and pace each call gets.

``--voices`` names the population: ``default`` (the catalogue voices whose measured CER passes, see
:func:`voice.speech.voices.default_mix`), ``all`` (the whole catalogue), ``female`` / ``male`` (the default
mix's voices of that sex), one voice, or a comma list.  ``--caller-speed`` is one pace (``1``, ``1.1``) or a
range (``0.9-1.15``) from which each call's pace is drawn.

Every draw is seeded by the run's seed and the call's id, so the same run gives every call the same voice
and pace on every machine, and a resumed run the ones it had.  Calls are spread over the population evenly:
the calls of one repeat go round a seeded permutation of it, so with 8 voices and 16 calls each voice has
two, and a dialogue called again (the next repeat) gets another voice.  A dialogue may pin its caller's
voice (``caller_voice``) or sex (``caller_sex``) in the JSONL; a pinned sex draws among the population's
voices of that sex (the catalogue's, if the population has none).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from voice.app.run.jobs import CallJob
from voice.dialogues.validation import VoiceCheck
from voice.errors import ConfigError
from voice.speech.tts.engine import TTSEngine
from voice.speech.voices import CATALOGUE, SEXES, Voice, VoiceBank, default_mix, get_voice

POPULATIONS = ("default", "all", *SEXES)
SPEED_RANGE = (0.5, 2.0)
SPEED_STEP = (
    0.05  # drawn paces are rounded to this, so a cache holds a few variants per line, not one per call
)


@dataclass(frozen=True)
class Pace:
    """The caller's speaking pace: one value, or a range drawn from per call."""

    lo: float = 1.0
    hi: float = 1.0

    def __str__(self) -> str:
        return f"{self.lo:g}" if self.lo == self.hi else f"{self.lo:g}-{self.hi:g}"

    def draw(self, key: str) -> float:
        if self.lo == self.hi:
            return self.lo
        steps = round((self.hi - self.lo) / SPEED_STEP)
        return round(self.lo + _rng(key).randint(0, steps) * SPEED_STEP, 2)


def parse_pace(text: str, option: str = "--caller-speed") -> Pace:
    """``1.1`` or ``0.9-1.15`` → a :class:`Pace` within :data:`SPEED_RANGE`; anything else a ConfigError."""
    parts = str(text).split("-")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2):
        raise ConfigError(f"{option} {text!r}: expected a pace (1.1) or a range (0.9-1.15)")
    lo, hi = values[0], values[-1]
    if not (SPEED_RANGE[0] <= lo <= hi <= SPEED_RANGE[1]):
        raise ConfigError(
            f"{option} {text!r}: paces must lie within {SPEED_RANGE[0]:g}-{SPEED_RANGE[1]:g}, low first"
        )
    return Pace(lo, hi)


def population(spec: str, option: str = "--voices") -> list[Voice]:
    """The voices ``spec`` names (see the module's docstring), each once, in catalogue order for a mix."""
    spec = spec.strip()
    if spec == "default":
        return default_mix()
    if spec == "all":
        return list(CATALOGUE.values())
    if spec in SEXES:
        voices = [v for v in default_mix() if v.sex == spec] or [
            v for v in CATALOGUE.values() if v.sex == spec
        ]
        return voices
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"{option}: name voices ({', '.join(POPULATIONS)}, or voice names)")
    try:
        voices = [get_voice(n) for n in names]
    except ConfigError as exc:
        raise ConfigError(f"{option}: {exc}") from None
    seen: dict[str, Voice] = {v.name: v for v in voices}
    return list(seen.values())


def _rng(key: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def voiced_jobs(jobs: Sequence[CallJob], voices: str, caller_speed: str, seed: int) -> list[CallJob]:
    """The jobs of a run with ``--voices`` and ``--caller-speed``: each with its caller's voice and pace."""
    pace = parse_pace(caller_speed)
    return assign_voices(jobs, population(voices), pace, seed)


def assign_voices(jobs: Sequence[CallJob], voices: Sequence[Voice], pace: Pace, seed: int) -> list[CallJob]:
    """Every job with its caller's voice, sex and pace (see the module's docstring)."""
    if not voices:
        raise ConfigError("--voices names no voice")
    by_repeat: dict[int, int] = {}
    order: dict[int, list[Voice]] = {}
    out: list[CallJob] = []
    for job in jobs:
        voice = _pinned(job, voices, seed)
        if voice is None:
            if job.repeat not in order:
                order[job.repeat] = list(voices)
                _rng(f"callsim-voices:{seed}:{job.repeat}").shuffle(order[job.repeat])
            k = by_repeat.get(job.repeat, 0)
            by_repeat[job.repeat] = k + 1
            voice = order[job.repeat][k % len(voices)]
        speed = pace.draw(f"callsim-pace:{seed}:{job.call_id}")
        out.append(dataclasses.replace(job, voice=voice.name, sex=voice.sex, speed=speed))
    return out


def _pinned(job: CallJob, voices: Sequence[Voice], seed: int) -> Voice | None:
    """The voice the job's dialogue pins (its ``caller_voice``, or one of its ``caller_sex``), if any."""
    d = job.dialogue
    where = f"{d.source or '<memory>'}:{d.line}"
    if d.caller_voice is not None:
        try:
            return get_voice(d.caller_voice)
        except ConfigError as exc:
            raise ConfigError(f"{where}: caller_voice: {exc}") from None
    if d.caller_sex is not None:
        pool = [v for v in voices if v.sex == d.caller_sex]
        pool = pool or [v for v in default_mix() if v.sex == d.caller_sex]
        pool = pool or [v for v in CATALOGUE.values() if v.sex == d.caller_sex]
        return _rng(f"callsim-sex:{seed}:{job.call_id}").choice(pool)
    return None


def caller_engines(voices: str, tts: str) -> TTSEngine | VoiceBank:
    """What a run's callers speak through: a bank of the named voices, or the one ``tts`` engine."""
    if voices:
        return VoiceBank()
    from voice.speech.tts import make_tts

    return make_tts(tts)


def voices_check(spec: str) -> VoiceCheck | None:
    """What some voice of the population cannot say (each engine's own check), for validation up front.

    A dialogue pinning a voice of another engine is checked when that voice speaks it (a line it cannot say
    is that call's ``caller_speech_failed``)."""
    from voice.speech.tts import voice_check

    checks = [c for c in (voice_check(e) for e in dict.fromkeys(v.engine for v in population(spec))) if c]
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]

    def problems(text: str) -> list[str]:
        return [f"{c.name}: {p}" for c in checks for p in c.problems(text)]

    return VoiceCheck("+".join(c.name for c in checks), problems)
