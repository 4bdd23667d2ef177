"""The calls of a run: which dialogue, which repeat, which caller seed, under which id.

Repeats are laid out repeat-major, so a run killed half-way holds whole passes over the dataset, and each
repeat derives its own seed from the run's, so repeats differ in timing while the first stays the seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from voice.app.run.resume import dialogue_sha
from voice.dialogues import Dialogue
from voice.errors import ConfigError
from voice.metrics.model.jsonio import JsonValue


@dataclass(frozen=True)
class CallJob:
    """One call to make: a dialogue, which repeat of it, the caller's seed for that repeat, voice and pace."""

    call_id: str
    dialogue: Dialogue
    repeat: int = 1
    seed: int = 0
    # the caller's voice (voice.app.run.caller_voices); "" in runs that name none: the one engine
    voice: str = ""
    sex: str | None = None  # that voice's speaker
    speed: float = 1.0  # the caller's pace (1: the voice's own)

    def labels(self) -> dict[str, JsonValue]:
        """What a call's JSON carries besides its metrics: what to break results down by, and provenance."""
        d = self.dialogue
        return {
            "scenario": d.scenario,
            "preset_type": d.preset.type,
            "relation": d.relation,
            "repeat": self.repeat,
            "seed": self.seed,
            "dialogue_sha": dialogue_sha(d),
            **(
                {"voice": self.voice, "voice_sex": self.sex or "-", "caller_speed": self.speed}
                if self.voice
                else {}
            ),
        }


def repeat_seed(seed: int, repeat: int) -> int:
    """The caller's seed for repeat ``repeat`` (1-based): ``seed`` itself for the first, then derived."""
    if repeat == 1:
        return seed
    return int.from_bytes(hashlib.sha256(f"callsim-repeat:{seed}:{repeat}".encode()).digest()[:4], "big")


def plan_jobs(dialogues: Sequence[Dialogue], repeats: int = 1, seed: int = 0) -> list[CallJob]:
    """Every call of a run, repeat-major (a run killed half-way holds whole passes over the dataset).

    The call id is the dialogue id for a single repeat, ``<dialogue>.r<k>`` otherwise.
    """
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1 (got {repeats})")
    return [
        CallJob(d.id if repeats == 1 else f"{d.id}.r{k}", d, k, repeat_seed(seed, k))
        for k in range(1, repeats + 1)
        for d in dialogues
    ]
