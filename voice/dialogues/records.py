"""A CallBench dialogue as frozen records: the preset, the caller's turns with their timing cues, the
reference replies, the dialogue.

The records sit below everything else in ``voice.dialogues``: the loader (:mod:`voice.dialogues.schema`)
builds them and the annotations file (:mod:`voice.dialogues.annotation_file`) merges into them, so both
import them from here and the loader can merge a file of annotations without the two importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from voice.contract.policy import AssistantView
from voice.dialogues.annotations import DialogueAnnotations, TurnAnnotations
from voice.dialogues.validation import PresetType, Relation, Scenario


@dataclass(frozen=True)
class Preset:
    """The owner's explicit instruction; ``text`` is "" when ``type`` is "none"."""

    type: PresetType
    text: str


@dataclass(frozen=True)
class PauseInside:
    """The caller stops after ``after`` for ``ms``, then goes on; the assistant should not take the turn."""

    after: str
    ms: int


@dataclass(frozen=True)
class Backchannel:
    """A short acknowledgement said ``at_ms`` after the onset of the assistant's previous reply."""

    text: str
    at_ms: int


@dataclass(frozen=True)
class CallerTurn:
    """What the simulated caller says, with optional timing cues (all in ms, ``None`` when absent)."""

    text: str
    pause_before_ms: int | None = None
    barge_in_ms: int | None = None
    pause_inside: PauseInside | None = None
    backchannel: Backchannel | None = None

    @property
    def role(self) -> Literal["caller"]:
        return "caller"

    def segments(self) -> tuple[str, ...]:
        """The text as spoken: split in two around a mid-turn pause, else one piece."""
        if self.pause_inside is None:
            return (self.text,)
        cut = len(self.pause_inside.after)
        return (self.text[:cut], self.text[cut:])


@dataclass(frozen=True)
class AssistantTurn:
    """A reference reply: what an excellent assistant would say here (used for scoring, never played)."""

    text: str
    annotations: TurnAnnotations = field(default_factory=TurnAnnotations)

    @property
    def role(self) -> Literal["assistant"]:
        return "assistant"


Turn: TypeAlias = CallerTurn | AssistantTurn


@dataclass(frozen=True)
class Dialogue:
    """One scripted call; ``source``/``line`` locate it in its file for error messages and reports."""

    id: str
    scenario: Scenario
    preset: Preset
    owner_goal: str
    caller_goal: str
    relation: Relation
    turns: tuple[Turn, ...]
    source: str = ""
    line: int = 0
    annotations: DialogueAnnotations = field(default_factory=DialogueAnnotations)
    caller_voice: str | None = None  # the caller's voice, pinned (voice.app.run.caller_voices); None: drawn
    caller_sex: str | None = None  # or only its sex

    @property
    def caller_turns(self) -> tuple[CallerTurn, ...]:
        return tuple(t for t in self.turns if isinstance(t, CallerTurn))

    @property
    def assistant_turns(self) -> tuple[AssistantTurn, ...]:
        return tuple(t for t in self.turns if isinstance(t, AssistantTurn))

    def previous_assistant(self, index: int) -> AssistantTurn | None:
        """The assistant turn right before ``turns[index]`` (what a barge-in or backchannel overlaps)."""
        if index > 0 and isinstance(prev := self.turns[index - 1], AssistantTurn):
            return prev
        return None

    def assistant_view(self) -> AssistantView:
        """Only what the assistant under test may know; the caller's goal would leak the answer key."""
        return {
            "id": self.id,
            "scenario": self.scenario,
            "preset": {"type": self.preset.type, "text": self.preset.text},
            "owner_goal": self.owner_goal,
        }
