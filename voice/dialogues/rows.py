"""A dialogue file's line once validated: the JSON shapes :mod:`voice.dialogues.validation` guarantees.

A decoded line is a border while it is checked (anything may be in it: unknown keys, wrong types), so the
checks read it as a plain object.  Once :func:`~voice.dialogues.validation.check_dialogue_object` finds no
problem in it, it is a :class:`DialogueRow`, and the loader (:mod:`voice.dialogues.schema`) builds the
records from named keys of known types.  The keys match the validator's (``tests/dialogues/test_rows.py``);
the annotations' own shapes are in :mod:`voice.dialogues.annotations`.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from voice.dialogues.annotations import DialogueNotesRow, TurnNotesRow
from voice.dialogues.validation import PresetType, Relation, Scenario


class PresetRow(TypedDict):
    """``preset``: its ``text`` null or "" (or left out) when ``type`` is none."""

    type: PresetType
    text: NotRequired[str | None]


class PauseInsideRow(TypedDict):
    """A caller turn's ``pause_inside``: ``after`` a proper prefix of the turn's text."""

    after: str
    ms: int


class BackchannelRow(TypedDict):
    """A caller turn's ``backchannel``."""

    text: str
    at_ms: int


class CallerTurnRow(TypedDict):
    """A caller turn with its optional timing cues (a barge-in never with a pause before or a backchannel)."""

    role: Literal["caller"]
    text: str
    pause_before_ms: NotRequired[int]
    barge_in_ms: NotRequired[int]
    pause_inside: NotRequired[PauseInsideRow]
    backchannel: NotRequired[BackchannelRow]


class AssistantTurnRow(TurnNotesRow):
    """A reference reply, with the annotations the checklist judge reads (none on the greeting)."""

    role: Literal["assistant"]
    text: str


class DialogueRow(DialogueNotesRow):
    """One dialogue: turns alternating caller and assistant, at least one of the caller's."""

    id: str
    scenario: Scenario
    relation: Relation
    preset: PresetRow
    owner_goal: str
    caller_goal: str
    turns: list[CallerTurnRow | AssistantTurnRow]
    caller_voice: NotRequired[str]
    caller_sex: NotRequired[str]
