"""The dialogue schema: what a CallBench dialogue is, how a file of them is read, checked and counted.

``voice.dialogues`` is the public face (``from voice.dialogues import load_dialogues, Dialogue``): the names
a dialogue's user reaches for, re-exported from the modules that define them:

- :mod:`voice.dialogues.records`: the frozen records (a dialogue, its turns, their cues);
- :mod:`voice.dialogues.schema`: the strict JSONL loader;
- :mod:`voice.dialogues.validation`: the rules a dialogue object is held to, every problem located;
- :mod:`voice.dialogues.rows`: a line's typed shape once it passed them, what the loader builds from;
- :mod:`voice.dialogues.annotations`: the optional annotations the checklist judge reads;
- :mod:`voice.dialogues.annotation_file`: the same annotations kept in a file apart, merged by the loader;
- :mod:`voice.dialogues.stats`: coverage counts of a loaded set (``callsim data stats``).

This module only re-exports: the submodules import one another, never a name defined here, so the order
they are imported in does not matter.  No ``from __future__ import annotations`` here: it would bind the name
``annotations`` in this package, hiding the submodule from ``from voice.dialogues import annotations``.
"""

from voice.dialogues.annotations import DialogueAnnotations, TurnAnnotations
from voice.dialogues.records import (
    AssistantTurn,
    Backchannel,
    CallerTurn,
    Dialogue,
    PauseInside,
    Preset,
    Turn,
)
from voice.dialogues.schema import (
    BUNDLED_FILE,
    bundled_dialogues_path,
    load_dialogues,
    parse_dialogue,
    validate_file,
)
from voice.dialogues.validation import (
    BACKCHANNEL_AT_RANGE,
    BACKCHANNEL_MAX_CHARS,
    BARGE_IN_RANGE,
    ID_PATTERN,
    MAX_ID_CHARS,
    MAX_LINE_BYTES,
    MAX_TURN_CHARS,
    PAUSE_BEFORE_RANGE,
    PAUSE_INSIDE_RANGE,
    PRESET_TYPES,
    RELATIONS,
    SCENARIOS,
    PresetType,
    Relation,
    Scenario,
    VoiceCheck,
    check_caller_turn,
    check_dialogue_object,
)

__all__ = [
    "BACKCHANNEL_AT_RANGE",
    "BACKCHANNEL_MAX_CHARS",
    "BARGE_IN_RANGE",
    "BUNDLED_FILE",
    "ID_PATTERN",
    "MAX_ID_CHARS",
    "MAX_LINE_BYTES",
    "MAX_TURN_CHARS",
    "PAUSE_BEFORE_RANGE",
    "PAUSE_INSIDE_RANGE",
    "PRESET_TYPES",
    "RELATIONS",
    "SCENARIOS",
    "AssistantTurn",
    "Backchannel",
    "CallerTurn",
    "Dialogue",
    "DialogueAnnotations",
    "PauseInside",
    "Preset",
    "PresetType",
    "Relation",
    "Scenario",
    "Turn",
    "TurnAnnotations",
    "VoiceCheck",
    "bundled_dialogues_path",
    "check_caller_turn",
    "check_dialogue_object",
    "load_dialogues",
    "parse_dialogue",
    "validate_file",
]  # fmt: skip
