"""The typed shapes of a validated line say what the validator lets through: the same keys, the same ones
required, so that a key added to one and not the other fails here rather than reading as ``Any``."""

import json
from typing import NotRequired, get_origin, get_type_hints

import pytest

from voice.dialogues import annotations as ann
from voice.dialogues import bundled_dialogues_path
from voice.dialogues import validation as va
from voice.dialogues.rows import (
    AssistantTurnRow,
    BackchannelRow,
    CallerTurnRow,
    DialogueRow,
    PauseInsideRow,
    PresetRow,
)


@pytest.mark.parametrize(
    ("row", "allowed"),
    [
        (DialogueRow, va._DIALOGUE_KEYS),
        (PresetRow, va._PRESET_KEYS),
        (CallerTurnRow, va._CALLER_KEYS),
        (AssistantTurnRow, va._ASSISTANT_KEYS),
        (PauseInsideRow, va._PAUSE_INSIDE_KEYS),
        (BackchannelRow, va._BACKCHANNEL_KEYS),
        (ann.TurnNotesRow, ann.TURN_KEYS),
        (ann.PrivateFactRow, ann._PRIVATE_KEYS),
        (ann.DialogueNotesRow, ann.DIALOGUE_KEYS),
    ],
    ids=lambda x: getattr(x, "__name__", "keys"),
)
def test_a_row_has_exactly_the_keys_validation_allows(row, allowed):
    assert set(get_type_hints(row)) == set(allowed)


def _optional(row: type) -> set[str]:
    """The keys marked NotRequired (the annotations' keys, from a ``total=False`` base, are all optional)."""
    hints = get_type_hints(row, include_extras=True)
    return {k for k, t in hints.items() if get_origin(t) is NotRequired}


def test_what_validation_requires_a_row_requires_and_nothing_else():
    notes = set(get_type_hints(ann.DialogueNotesRow))
    assert set(get_type_hints(DialogueRow)) - _optional(DialogueRow) - notes == set(va._REQUIRED_KEYS)
    # a caller turn needs its role and text; every cue is optional
    assert set(get_type_hints(CallerTurnRow)) - _optional(CallerTurnRow) == {"role", "text"}


def test_every_key_of_the_bundled_lines_is_in_its_row():
    for text in bundled_dialogues_path().read_text(encoding="utf-8").splitlines():
        obj = json.loads(text)
        assert va.check_dialogue_object(obj, "bundled", 0) == []
        assert set(obj) <= set(get_type_hints(DialogueRow))
        for turn in obj["turns"]:
            row = CallerTurnRow if turn["role"] == "caller" else AssistantTurnRow
            assert set(turn) <= set(get_type_hints(row))
