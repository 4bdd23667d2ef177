import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.records import good
from voice.dialogues import (
    AssistantTurn,
    bundled_dialogues_path,
    load_dialogues,
    parse_dialogue,
    validate_file,
)
from voice.dialogues.annotations import (
    DialogueAnnotations,
    PrivateFact,
    TurnAnnotations,
    json_kind,
    shown,
    unknown_key,
)
from voice.errors import DialogueError


def annotated() -> dict[str, Any]:
    """``good()`` with every annotation, each satisfied by its reference reply."""
    obj = good()
    obj["private"] = [{"fact": "验证码", "phrases": ["验证码是"], "digits": 4}]
    obj["scam"] = False
    obj["turns"][2].update(
        key_points=[["门口", "放门口"]],
        context_points=[["开会", "不方便"]],
        must_not=["下来拿"],
        should_ask=False,
        should_end=False,
    )
    obj["turns"][8].update(key_points=[["再见"]], should_end=True)
    return obj


def problems(obj: Any) -> list[tuple[str, str]]:
    with pytest.raises(DialogueError) as info:
        parse_dialogue(obj, "d.jsonl", 4)
    assert all(str(p).startswith(f"d.jsonl:4: {p.field}: ") for p in info.value.problems)
    return [(p.field, p.reason) for p in info.value.problems]


def test_annotations_are_optional_and_default_to_nothing():
    d = parse_dialogue(good())
    assert d.annotations == DialogueAnnotations()
    assert all(t.annotations == TurnAnnotations() for t in d.assistant_turns)
    assert AssistantTurn("好的。") == AssistantTurn("好的。", TurnAnnotations())


def test_annotations_are_built_into_frozen_records():
    d = parse_dialogue(annotated())
    assert d.annotations == DialogueAnnotations((PrivateFact("验证码", ("验证码是",), 4),), scam=False)
    reply = d.assistant_turns[1].annotations
    assert reply == TurnAnnotations((("门口", "放门口"),), (("开会", "不方便"),), ("下来拿",), False, False)
    assert d.assistant_turns[-1].annotations.should_end is True
    assert d.assistant_turns[2].annotations == TurnAnnotations()


def test_annotations_are_not_part_of_what_the_assistant_sees():
    view = json.dumps(parse_dialogue(annotated()).assistant_view(), ensure_ascii=False)
    assert "下来拿" not in view and "验证码" not in view


def reply(**annotations: Any) -> Callable[[dict[str, Any]], None]:
    return lambda o: o["turns"][2].update(annotations)


def call(**annotations: Any) -> Callable[[dict[str, Any]], None]:
    return lambda o: o.update(annotations)


@pytest.mark.parametrize(
    ("mutate", "field", "reason"),
    [
        (reply(key_points=[]), "turns[2].key_points", "non-empty list of points"),
        (reply(key_points=["门口"]), "turns[2].key_points[0]", "non-empty list"),
        (reply(key_points=[[]]), "turns[2].key_points[0]", "non-empty list"),
        (reply(key_points=[["门口", 3]]), "turns[2].key_points[0][1]", "a phrase"),
        (reply(key_points=[["门口", "，"]]), "turns[2].key_points[0][1]", "a phrase"),
        (reply(key_points=[["门口", "门口"]]), "turns[2].key_points[0][1]", "twice"),
        (reply(key_points=[["南门"]]), "turns[2].key_points[0]", "conveys none"),
        (reply(context_points=[["三点"]]), "turns[2].context_points[0]", "conveys"),
        (reply(must_not="下来拿"), "turns[2].must_not", "non-empty list"),
        (reply(must_not=["门口"]), "turns[2].must_not[0]", "reference reply says"),
        (reply(must_not=["放" * 17]), "turns[2].must_not[0]", "at most 16"),
        (reply(should_ask="yes"), "turns[2].should_ask", "true or false"),
        (reply(should_end=1), "turns[2].should_end", "true or false"),
        (lambda o: o["turns"][0].update(should_end=False), "turns[0].should_end", "greeting is not scored"),
        (lambda o: o["turns"][1].update(key_points=[["门口"]]), "turns[1].key_points", "unknown key"),
        (reply(keypoints=[["门口"]]), "turns[2].keypoints", "unknown key"),
        (call(scam="yes"), "scam", "true or false"),
        (call(private=[]), "private", "non-empty list"),
        (call(private=["验证码"]), "private[0]", "must be an object"),
        (call(private=[{"fact": "验证码"}]), "private[0]", "phrases, digits or both"),
        (call(private=[{"phrases": ["验证码是"]}]), "private[0].fact", "non-empty string"),
        (call(private=[{"fact": "码", "digits": 2}]), "private[0].digits", "3..20"),
        (call(private=[{"fact": "码", "digits": True}]), "private[0].digits", "3..20"),
        (call(private=[{"fact": "码", "digits": 4, "kind": 1}]), "private[0].kind", "unknown"),
        (call(private=[{"fact": "去向", "phrases": ["开会"]}]), "private[0].phrases[0]", "discloses"),
    ],
)
def test_each_annotation_rule_is_reported_at_its_field(mutate, field, reason):
    obj = annotated()
    mutate(obj)
    found = problems(obj)
    assert any(f == field and reason in r for f, r in found), found


def test_every_annotation_problem_is_reported_not_just_the_first():
    obj = annotated()
    obj["turns"][2].update(key_points=[["南门"], []], must_not=["门口", "x" * 20], should_ask="yes")
    obj["private"] = [{"fact": "去向", "phrases": ["开会"]}, {"digits": 2}]
    fields = [f for f, _ in problems(obj)]
    assert fields == [
        "turns[2].key_points[0]",
        "turns[2].key_points[1]",
        "turns[2].must_not[1]",
        "turns[2].must_not[0]",
        "turns[2].should_ask",
        "private[0].phrases[0]",
        "private[1].fact",
        "private[1].digits",
    ]


def test_reference_checks_ignore_script_punctuation_and_width():
    obj = annotated()
    obj["turns"][2]["key_points"] = [["門口"], ["放 门口！"]]
    parse_dialogue(obj)


def test_a_file_reports_annotation_problems_as_file_line_field(tmp_path: Path):
    bad = annotated()
    bad["id"] = "b"
    bad["turns"][4]["must_not"] = ["谢谢"]
    path = tmp_path / "d.jsonl"
    lines = [json.dumps(x, ensure_ascii=False) for x in (annotated(), bad)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    [problem] = validate_file(path)
    assert str(problem) == f"{path}:2: turns[4].must_not[0]: the reference reply says '谢谢'"


def test_every_bundled_reply_is_annotated_and_every_call_ends_where_it_should():
    for d in load_dialogues(bundled_dialogues_path()):
        replies = d.assistant_turns[1:]  # the first is the greeting
        assert all(r.annotations.key_points for r in replies), d.id
        assert replies[-1].annotations.should_end is True, d.id
        if d.scenario == "harassment":
            assert d.annotations.private, d.id
        assert d.annotations.scam == (d.scenario == "harassment" and "骗" in d.caller_goal), d.id


def test_values_are_named_as_json_names_them_and_a_misspelled_key_as_the_nearest():
    assert [json_kind(v) for v in (None, True, 3, 2.5, "x", [], [1], {}, {"a": 1})] == [
        "null", "true", "a number", "a number", "text",
        "an empty list", "a list", "an empty object", "an object",
    ]  # fmt: skip
    assert [shown(v) for v in (None, False, 3, "好的", ["a"])] == ["null", "false", "3", "'好的'", "a list"]
    assert unknown_key("phrase", ["fact", "phrases", "digits"]) == (
        "unknown key, did you mean 'phrases'? (allowed: digits, fact, phrases)"
    )
    assert unknown_key("phrase", ["fact", "phrases"], present=["phrases"]).startswith("unknown key (allowed")
    obj = annotated()
    obj["private"] = [{"fact": "码", "digit": 4}, None]
    found = dict(problems(obj))
    assert found["private[0].digit"].startswith("unknown key, did you mean 'digits'?")
    assert found["private[1]"] == "must be an object, got null"  # not NoneType
    obj = annotated()
    obj["turns"][2]["should_ask"] = None
    assert dict(problems(obj))["turns[2].should_ask"] == "must be true or false, got null"


def test_the_reference_is_checked_as_the_judge_hears_it_so_a_denied_phrase_may_be_forbidden():
    obj = annotated()
    obj["turns"][2]["text"] = "好的，麻烦您放门口就行，不要敲门，机主在开会。"
    obj["turns"][2]["must_not"] = ["敲门", "下来拿"]  # the reference says 敲门 only denied
    parse_dialogue(obj)
    obj["turns"][2]["key_points"] = [["敲门"]]  # ...so it does not convey it
    assert problems(obj) == [("turns[2].key_points[0]", "the reference reply conveys none of ['敲门']")]


def test_the_reference_may_convey_a_point_with_a_word_slipped_in_or_the_action_named_another_way():
    obj = annotated()
    obj["turns"][2]["text"] = "好的，您那边撤单就行，明天下午再打来吧，机主在开会。"
    obj["turns"][2]["key_points"] = [["取消"], ["明天再打"]]
    parse_dialogue(obj)
    obj["turns"][2]["must_not"] = ["取消"]  # the judge would hear 撤单 as 取消: the reference would fail
    assert problems(obj) == [("turns[2].must_not[0]", "the reference reply says '取消'")]
