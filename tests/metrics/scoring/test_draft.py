"""Annotations drafted by a model, against a real local HTTP server playing it (the stand-in LLM)."""

import pytest

from tests.llm_fake import FakeLLM
from tests.records import good
from voice.dialogues import parse_dialogue
from voice.dialogues.annotation_file import check_entry
from voice.errors import EngineError, EngineOutputError
from voice.llm.client import LLMClient
from voice.llm.settings import LLMSettings
from voice.metrics.scoring.draft import (
    PROMPT_VERSION,
    check_answer,
    draft_entry,
    output_schema,
    render_dialogue,
    scored_turns,
)

pytestmark = pytest.mark.usefixtures("no_openai_env")
DIALOGUE = parse_dialogue(good())


def turn(n, key_points=(), context_points=(), must_not=(), should_ask=None, should_end=None):
    return {"turn": n, "key_points": [list(p) for p in key_points],
            "context_points": [list(p) for p in context_points], "must_not": list(must_not),
            "should_ask": should_ask, "should_end": should_end}  # fmt: skip


def answer(**changes):
    """A well-formed draft of ``good()``'s four replies."""
    turns = [
        turn(0, [["门口", "放门口"]], [["开会", "在开会"]], ["下来拿", "马上下来"], should_end=False),
        turn(1, [["谢谢"]]),
        turn(2, [["转告", "记下来"]], should_end=False),
        turn(3, [["再见", "拜拜"]], should_end=True),
    ]
    return {"private": [], "scam": False, "turns": turns, **changes}


def client(llm, **settings):
    return LLMClient(LLMSettings("drafter", base_url=llm.url, cache="off", **settings))


def test_a_draft_is_an_annotations_entry_marked_draft_that_validates(llm):
    llm.answer(answer())
    warnings = []
    entry = draft_entry(client(llm), DIALOGUE, warnings.append)
    assert warnings == []
    assert entry["dialogue"] == DIALOGUE.id and entry["draft"] is True
    assert entry["turns"][1] == {"turn": 1, "key_points": [["谢谢"]]}  # empty lists and nulls left out
    assert "private" not in entry and "scam" not in entry
    assert check_entry(entry, DIALOGUE) == []


def test_the_request_asks_for_every_scored_reply_with_the_schema_at_temperature_0(llm):
    llm.answer(answer())
    draft_entry(client(llm), DIALOGUE, print)
    (seen,) = llm.requests
    body = seen.body
    assert body["temperature"] == 0 and body["response_format"]["json_schema"]["schema"] == output_schema()
    system, user = body["messages"]
    assert "affirmative form" in system["content"] and "Chinese numerals" in system["content"]
    assert user["content"] == render_dialogue(DIALOGUE)
    assert "reference reply to caller turn 0: 好的，麻烦您放门口就行，机主在开会。" in user["content"]
    assert user["content"].endswith("Annotate the replies to caller turns 0, 1, 2, 3, in that order.")
    assert scored_turns(DIALOGUE) == [0, 1, 2, 3] and PROMPT_VERSION >= 1


def test_what_fails_validation_is_dropped_with_a_warning_naming_turn_and_phrase(llm):
    first = turn(0, [["门口"], ["楼下等"]], must_not=["放门口", "下来拿"], should_end=False)  # says 放门口
    private = [{"fact": "手机号", "phrases": ["机主在开会"], "digits": None}]  # a reference says it
    llm.answer(answer(turns=[first, *answer()["turns"][1:]], private=private))
    warnings = []
    entry = draft_entry(client(llm), DIALOGUE, warnings.append)
    assert entry["turns"][0] == {
        "turn": 0,
        "key_points": [["门口"]],
        "must_not": ["下来拿"],
        "should_end": False,
    }
    assert "private" not in entry  # its only phrase went, and with it the fact
    assert check_entry(entry, DIALOGUE) == []
    said = "\n".join(warnings)
    assert (
        "takeout-regular-01 turn 0: dropped must_not[0] '放门口': the reference reply says '放门口'" in said
    )
    assert (
        "takeout-regular-01 turn 0: dropped key_points[1] ['楼下等']: the reference reply conveys none"
        in said
    )
    assert (
        "takeout-regular-01: dropped private[0].phrases[0] '机主在开会': a reference reply discloses it"
        in said
    )


def test_a_malformed_answer_is_asked_again_then_an_error_naming_the_dialogue_and_turn(llm):
    wrong = answer(turns=answer()["turns"][:2])  # turns 2 and 3 missing
    bad_type = answer()
    bad_type["turns"][2]["key_points"] = "转告"
    llm.answer(wrong).answer("not json").answer(bad_type)
    with pytest.raises(EngineOutputError) as caught:
        draft_entry(client(llm), DIALOGUE, print)
    message = str(caught.value)
    assert message.startswith("takeout-regular-01: drafter's annotations are malformed after 3 attempts:")
    assert "turn 2.key_points: expected array" in message and "nothing was written" in message
    assert len(llm.requests) == 3
    with pytest.raises(ValueError, match=r"annotates turns \[0, 1\]; expected exactly \[0, 1, 2, 3\]"):
        check_answer(wrong, [0, 1, 2, 3])


def test_every_request_has_a_timeout():
    with FakeLLM() as slow:
        slow.answer(answer(), delay_s=2.0)
        with pytest.raises(EngineError, match=r"did not answer in 0.3 s"):
            draft_entry(client(slow, timeout_s=0.3, attempts=1), DIALOGUE, print)


def test_the_typed_answer_is_the_schemas_shape_and_the_entry_keys_are_the_files() -> None:
    from voice.dialogues.annotation_file import ENTRY_KEYS, TURN_ENTRY_KEYS
    from voice.metrics.scoring.draft import AnnotationAnswer, DraftEntry, DraftTurn, FactAnswer, TurnAnswer

    schema = output_schema()
    assert list(AnnotationAnswer.__annotations__) == schema["required"]
    assert list(TurnAnswer.__annotations__) == schema["properties"]["turns"]["items"]["required"]
    assert list(FactAnswer.__annotations__) == schema["properties"]["private"]["items"]["required"]
    assert set(DraftEntry.__annotations__) <= ENTRY_KEYS and set(DraftTurn.__annotations__) <= TURN_ENTRY_KEYS
