"""The caller model's answer is held to the dialogue schema's bounds; every problem is named."""

import pytest

from voice.llm.schema import check_schema, validate
from voice.react.decision import CallerDecision, output_schema, parse_decision


def answer(**kw):
    base = {
        "action": "say",
        "text": "那我放门口了。",
        "pause_before_ms": None,
        "pause_inside": None,
        "backchannel": None,
        "interrupt_after_ms": None,
        "goal": None,
        "reason": "继续",
    }
    return {**base, **kw}


def parse(data, interrupting=False, max_chars=60):
    return parse_decision(data, interrupting=interrupting, max_chars=max_chars)


def test_the_schema_is_in_the_validated_subset_and_a_good_answer_fits_it():
    check_schema(output_schema())
    assert validate(answer(), output_schema()) == []


def test_a_turn_with_cues_becomes_a_decision():
    d = parse(
        answer(
            text="改天的话……明天下午可以吗",
            pause_before_ms=800,
            pause_inside={"after": "改天的话……", "ms": 1200},
            backchannel={"text": "嗯", "at_ms": 900},
            interrupt_after_ms=3000,
        )
    )
    assert d.action == "say" and d.turn is not None
    assert d.turn.pause_before_ms == 800 and d.turn.pause_inside is not None
    assert d.turn.pause_inside.after == "改天的话……" and d.turn.pause_inside.ms == 1200
    assert d.backchannel is not None and (d.backchannel.text, d.backchannel.at_ms) == ("嗯", 900)
    assert d.interrupt_after_ms == 3000


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"pause_before_ms": 99_999}, "pause_before_ms: must be in 0..10000"),
        ({"pause_inside": {"after": "别的", "ms": 1000}}, "proper prefix"),
        ({"pause_inside": {"after": "那我", "ms": 10}}, "300..5000"),
        ({"backchannel": {"text": "好的好的好的", "at_ms": 900}}, "at most 4 characters"),
        ({"interrupt_after_ms": 5}, "interrupt_after_ms: must be in 50..20000"),
        ({"text": "hello there"}, "Chinese characters"),
        ({"text": ""}, "say needs the text"),
        ({"text": "好" * 130}, "say at most 120"),
        ({"action": "shout"}, "action must be one of"),
        ({"action": "hang_up", "goal": None}, "hang_up needs goal"),
        ({"action": "wait"}, "only answers whether to cut in"),
    ],
)
def test_out_of_bounds_answers_are_refused_with_the_reason(bad, problem):
    with pytest.raises(ValueError, match=problem):
        parse(answer(**bad))


def test_hang_up_and_wait():
    assert parse(answer(action="hang_up", goal="partly", reason="只放了门口")) == CallerDecision(
        "hang_up", goal="partly", reason="只放了门口"
    )
    assert parse(answer(action="wait"), interrupting=True).action == "wait"


def test_not_an_object_is_refused():
    with pytest.raises(ValueError, match="one JSON object"):
        parse(["say"])


def test_the_typed_answer_is_the_schemas_shape() -> None:
    from voice.react import scripted_caller
    from voice.react.decision import CallerAnswer

    assert list(CallerAnswer.__annotations__) == output_schema()["required"]
    assert validate(scripted_caller.say("好的", "x"), output_schema()) == []
    assert validate(scripted_caller.end("yes", "x"), output_schema()) == []
