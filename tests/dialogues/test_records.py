import dataclasses

import pytest

from voice import dialogues as dl
from voice.dialogues import schema
from voice.dialogues.annotations import DialogueAnnotations, TurnAnnotations
from voice.dialogues.records import (
    AssistantTurn,
    Backchannel,
    CallerTurn,
    Dialogue,
    PauseInside,
    Preset,
)

GREETING = AssistantTurn("您好，我是机主的电话助理，请问有什么事？")
PAUSED = CallerTurn("我想问一下，明天还要不要送？", pause_inside=PauseInside("我想问一下，", 1500))
REPLY = AssistantTurn("这个我记下来，转告机主。")
BYE = CallerTurn("好的，再见。", backchannel=Backchannel("嗯", 700))


def call(*turns: CallerTurn | AssistantTurn) -> Dialogue:
    return Dialogue(
        "takeout-regular-01", "takeout", Preset("regular", "放门口"), "外卖放门口", "送到外卖", "alignment",
        turns,
    )  # fmt: skip


def test_a_caller_turn_is_spoken_in_two_pieces_around_its_pause_only():
    assert PAUSED.segments() == ("我想问一下，", "明天还要不要送？")
    assert BYE.segments() == ("好的，再见。",)
    assert (PAUSED.role, REPLY.role) == ("caller", "assistant")
    assert CallerTurn("喂").pause_before_ms is None and CallerTurn("喂").barge_in_ms is None


def test_a_dialogue_tells_its_parties_turns_and_what_a_cue_overlaps():
    d = call(GREETING, PAUSED, REPLY, BYE)
    assert d.caller_turns == (PAUSED, BYE) and d.assistant_turns == (GREETING, REPLY)
    assert d.previous_assistant(1) == GREETING and d.previous_assistant(3) == REPLY
    assert d.previous_assistant(0) is None and d.previous_assistant(2) is None
    assert call(PAUSED).previous_assistant(0) is None


def test_records_are_frozen_and_unannotated_unless_given():
    d = call(GREETING, PAUSED)
    assert d.annotations == DialogueAnnotations() and GREETING.annotations == TurnAnnotations()
    assert (d.source, d.line, d.caller_voice, d.caller_sex) == ("", 0, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.id = "other"  # type: ignore[misc]


def test_the_assistant_view_leaves_the_callers_goal_out():
    assert call(GREETING).assistant_view() == {
        "id": "takeout-regular-01",
        "scenario": "takeout",
        "preset": {"type": "regular", "text": "放门口"},
        "owner_goal": "外卖放门口",
    }


def test_the_records_are_the_ones_the_loader_and_the_package_name():
    for name in ("Preset", "PauseInside", "Backchannel", "CallerTurn", "AssistantTurn", "Dialogue", "Turn"):
        assert getattr(schema, name) is getattr(dl, name), name
    assert dl.Dialogue is Dialogue and dl.CallerTurn is CallerTurn
