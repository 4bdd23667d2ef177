import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.records import good
from voice import dialogues as dl
from voice.dialogues import (
    AssistantTurn,
    Backchannel,
    CallerTurn,
    Dialogue,
    PauseInside,
    bundled_dialogues_path,
    load_dialogues,
    parse_dialogue,
    validate_file,
)
from voice.dialogues.stats import dialogue_stats
from voice.errors import DialogueError, DialogueProblem

TTS_CHARS_PER_SEC = 4.5  # the speaking rate the sample set is written for


def write(tmp_path: Path, lines: list[Any], name: str = "d.jsonl") -> Path:
    path = tmp_path / name
    text = "\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def problems_of(obj: Any) -> set[tuple[str, str]]:
    """(field, reason) of every problem parse_dialogue finds in one object."""
    with pytest.raises(DialogueError) as info:
        parse_dialogue(obj, "x.jsonl", 1)
    return {(p.field, p.reason) for p in info.value.problems}


def fields_of(obj: Any) -> set[str]:
    return {field for field, _ in problems_of(obj)}


# --- parsing a valid dialogue ----------------------------------------------------------------------------


def test_parse_builds_frozen_records_with_every_cue():
    d = parse_dialogue(good(), "sample.jsonl", 7)
    assert (d.id, d.scenario, d.relation, d.source, d.line) == (
        "takeout-regular-01",
        "takeout",
        "alignment",
        "sample.jsonl",
        7,
    )
    assert d.preset == dl.Preset("regular", "外卖放门口就行，我在开会。")
    assert len(d.turns) == 9 and len(d.caller_turns) == 4 and len(d.assistant_turns) == 5
    assert [t.role for t in d.turns[:3]] == ["assistant", "caller", "assistant"]
    c1, c2, c3, c4 = d.caller_turns
    assert c1.pause_before_ms == 400 and c1.barge_in_ms is None and c1.pause_inside is None
    assert c2.barge_in_ms == 900
    assert c3.pause_inside == PauseInside("我想问一下，", 1500)
    assert c3.segments() == ("我想问一下，", "明天还要不要送？")
    assert c1.segments() == (c1.text,)
    assert c4.backchannel == Backchannel("嗯", 700)
    assert d.previous_assistant(3) == AssistantTurn("好的，麻烦您放门口就行，机主在开会。")
    assert d.previous_assistant(0) is None and d.previous_assistant(2) is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.id = "other"  # type: ignore[misc]
    assert isinstance(d.turns, tuple)


def test_assistant_view_never_contains_the_callers_goal():
    d = parse_dialogue(good())
    view = d.assistant_view()
    assert view == {
        "id": "takeout-regular-01",
        "scenario": "takeout",
        "preset": {"type": "regular", "text": "外卖放门口就行，我在开会。"},
        "owner_goal": "外卖放门口，不被打扰",
    }
    assert d.caller_goal not in json.dumps(view, ensure_ascii=False)


@pytest.mark.parametrize("text", [None, ""])
def test_preset_none_accepts_empty_or_null_text(text):
    obj = good()
    obj["preset"] = {"type": "none", "text": text}
    assert parse_dialogue(obj).preset == dl.Preset("none", "")
    obj["preset"] = {"type": "none"}
    assert parse_dialogue(obj).preset.text == ""


def test_dialogue_may_start_with_the_caller():
    obj = good()
    obj["turns"] = obj["turns"][1:2]
    d = parse_dialogue(obj)
    assert [t.role for t in d.turns] == ["caller"]


# --- schema problems, one at a time ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda o: o.update(id=""), "id"),
        (lambda o: o.update(id="Takeout 01"), "id"),
        (lambda o: o.update(id="-x"), "id"),
        (lambda o: o.update(id=3), "id"),
        (lambda o: o.update(scenario="shopping"), "scenario"),
        (lambda o: o.update(relation="friendship"), "relation"),
        (lambda o: o.update(owner_goal=" "), "owner_goal"),
        (lambda o: o.update(caller_goal=None), "caller_goal"),
        (lambda o: o.pop("caller_goal"), "caller_goal"),
        (lambda o: o.update(preset={"type": "urgent", "text": "我在开会"}), "preset.type"),
        (lambda o: o.update(preset={"type": "none", "text": "我在开会"}), "preset.text"),
        (lambda o: o.update(preset={"type": "regular", "text": ""}), "preset.text"),
        (lambda o: o.update(preset={"type": "emergent"}), "preset.text"),
        (lambda o: o.update(preset={"text": "我在开会"}), "preset.type"),
        (lambda o: o.update(preset="我在开会"), "preset"),
        (lambda o: o.update(turns=[]), "turns"),
        (lambda o: o.update(turns="你好"), "turns"),
        (lambda o: o.update(turns=[{"role": "assistant", "text": "您好，请问有什么事？"}]), "turns"),
        (lambda o: o["turns"].__setitem__(1, "喂"), "turns[1]"),
        (lambda o: o["turns"][1].update(role="owner"), "turns[1].role"),
        (lambda o: o["turns"][1].update(text="hello, takeout"), "turns[1].text"),
        (lambda o: o["turns"][2].update(text=""), "turns[2].text"),
        (lambda o: o["turns"][2].pop("text"), "turns[2].text"),
        (lambda o: o["turns"][2].update(role="caller"), "turns[2].role"),
        (lambda o: o["turns"][2].update(barge_in_ms=500), "turns[2].barge_in_ms"),
        (lambda o: o.update(speaker="x"), "speaker"),
        (lambda o: o["preset"].update(lang="zh"), "preset.lang"),
        (lambda o: o["turns"][3].update(barge_in=900), "turns[3].barge_in"),
        (lambda o: o["turns"][5]["pause_inside"].update(after_ms=3), "turns[5].pause_inside.after_ms"),
        (lambda o: o["turns"][7]["backchannel"].pop("at_ms"), "turns[7].backchannel.at_ms"),
        (lambda o: o["turns"][5].update(pause_inside=[1, 2]), "turns[5].pause_inside"),
    ],
)
def test_each_schema_rule_is_reported_at_its_field(mutate, field):
    obj = good()
    mutate(obj)
    assert field in fields_of(obj)


def test_non_object_is_reported_at_the_root():
    assert fields_of(["id"]) == {"<root>"}


def test_unknown_keys_are_named_with_what_is_allowed():
    obj = good()
    obj["turns"][3]["barge_in"] = 900
    [(field, reason)] = problems_of(obj)
    assert field == "turns[3].barge_in"
    assert "unknown key" in reason and "barge_in_ms" in reason


# --- caller cues -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "path", "lo", "hi"),
    [
        ("pause_before_ms", (), 0, 10_000),
        ("barge_in_ms", (), 50, 20_000),
        ("ms", ("pause_inside",), 300, 5_000),
        ("at_ms", ("backchannel",), 100, 20_000),
    ],
)
def test_cue_ranges_are_inclusive_and_enforced(key, path, lo, hi):
    def with_value(value: Any) -> dict[str, Any]:
        obj = good()
        turn = obj["turns"][3]
        for k in ("barge_in_ms", "pause_before_ms", "backchannel", "pause_inside"):
            turn.pop(k, None)
        turn["text"] = "我想问一下，明天还要不要送？"
        cue = {
            "pause_inside": {"after": "我想问一下，", "ms": 1000},
            "backchannel": {"text": "嗯", "at_ms": 500},
        }
        target = turn
        for part in path:
            turn[part] = cue[part]
            target = turn[part]
        target[key] = value
        return obj

    field = ".".join(["turns[3]", *path, key])
    for ok in (lo, hi):
        parse_dialogue(with_value(ok))
    for bad in (lo - 1, hi + 1, 1.5, "900", True, None):
        assert field in fields_of(with_value(bad)), bad
    assert any("must be in" in reason for _, reason in problems_of(with_value(hi + 1)))


def test_barge_in_and_backchannel_need_a_preceding_assistant_turn():
    obj = good()
    obj["turns"] = [
        {
            "role": "caller",
            "text": "喂，外卖到了。",
            "barge_in_ms": 500,
            "backchannel": {"text": "嗯", "at_ms": 300},
        },
        {"role": "assistant", "text": "好的，放门口吧。"},
    ]
    fields = fields_of(obj)
    assert {"turns[0].barge_in_ms", "turns[0].backchannel"} <= fields


def test_barge_in_cannot_be_combined_with_backchannel_or_pause_before():
    obj = good()
    obj["turns"][3]["backchannel"] = {"text": "嗯", "at_ms": 300}
    obj["turns"][3]["pause_before_ms"] = 200
    reasons = [r for f, r in problems_of(obj) if f == "turns[3].barge_in_ms"]
    assert len(reasons) == 2
    assert any("backchannel" in r for r in reasons) and any("pause_before_ms" in r for r in reasons)


@pytest.mark.parametrize(
    "after", ["明天", "我想问一下，明天还要不要送？", "", "我想问一下，明天还要不要送？？"]
)
def test_pause_inside_after_must_be_a_proper_non_empty_prefix(after):
    obj = good()
    obj["turns"][5]["pause_inside"]["after"] = after
    assert fields_of(obj) == {"turns[5].pause_inside.after"}


@pytest.mark.parametrize("text", ["嗯嗯嗯嗯嗯", "ok", "", "对的对的好"])
def test_backchannel_text_is_short_chinese(text):
    obj = good()
    obj["turns"][7]["backchannel"]["text"] = text
    assert fields_of(obj) == {"turns[7].backchannel.text"}


# --- whole files -----------------------------------------------------------------------------------------


def test_a_malformed_file_reports_every_problem_with_its_line_and_field(tmp_path):
    bad_cue = good("b")
    bad_cue["turns"][3]["barge_in_ms"] = 30
    bad_cue["turns"][5]["pause_inside"]["after"] = "明天"
    bad_roles = good("c")
    bad_roles["turns"][2]["role"] = "caller"
    bad_roles["scenario"] = "shop"
    path = write(
        tmp_path,
        [
            good("a"),  # 1
            "",  # 2: blank lines are skipped but still counted
            bad_cue,  # 3
            '{"id": "x", "scenario": ',  # 4: truncated JSON
            bad_roles,  # 5
            "   ",  # 6
            good("a"),  # 7: duplicate id
            '"just a string"',  # 8
            good("d"),  # 9
        ],
    )
    problems = validate_file(path)
    located = [(p.line, p.field) for p in problems]
    assert located == [
        (3, "turns[3].barge_in_ms"),
        (3, "turns[5].pause_inside.after"),
        (4, "<json>"),
        (5, "scenario"),
        (5, "turns[2].role"),
        (5, "turns[3].role"),  # a caller turn between two caller turns breaks alternation twice
        (7, "id"),
        (8, "<root>"),
    ]
    assert all(p.path == str(path) for p in problems)
    assert "duplicate id 'a' (first on line 1)" in problems[6].reason
    assert problems[2].reason.startswith("invalid JSON")

    with pytest.raises(DialogueError) as info:
        load_dialogues(path)
    assert info.value.problems == problems
    message = str(info.value)
    assert message.count("\n") == len(problems) - 1
    assert f"{path}:3: turns[3].barge_in_ms: must be in 50..20000 ms, got 30" in message.splitlines()


def test_problem_str_is_file_line_field_reason():
    assert str(DialogueProblem("d.jsonl", 4, "turns[3].barge_in_ms", "too small")) == (
        "d.jsonl:4: turns[3].barge_in_ms: too small"
    )


def test_valid_file_loads_in_order_and_tolerates_bom_crlf_and_blank_lines(tmp_path):
    path = tmp_path / "ok.jsonl"
    body = "\r\n".join(json.dumps(good(i), ensure_ascii=False) for i in ("one", "two")) + "\r\n\r\n"
    path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    assert validate_file(path) == []
    loaded = load_dialogues(path)
    assert [(d.id, d.line) for d in loaded] == [("one", 1), ("two", 2)]
    assert loaded[0].source == str(path)


def test_missing_empty_and_undecodable_files_are_problems_not_crashes(tmp_path):
    missing = validate_file(tmp_path / "nope.jsonl")
    assert [(p.line, p.field) for p in missing] == [(0, "<file>")]
    empty = write(tmp_path, ["", ""], "empty.jsonl")
    assert [(p.field, p.reason) for p in validate_file(empty)] == [("<file>", "no dialogues")]
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(json.dumps(good()).encode() + b"\n\xff\xfe{\n")
    assert [(p.line, p.field) for p in validate_file(binary)] == [(2, "<line>")]
    with pytest.raises(DialogueError):
        load_dialogues(tmp_path / "nope.jsonl")


# --- the bundled sample set ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled() -> list[Dialogue]:
    path = bundled_dialogues_path()
    assert path.is_file() and path.name == "callbench_sample.jsonl"
    assert validate_file(path) == []
    return load_dialogues(path)


def test_bundled_set_meets_coverage_quotas(bundled):
    stats = dialogue_stats(bundled)
    assert stats.dialogues >= 24
    for scenario in dl.SCENARIOS:
        for preset in dl.PRESET_TYPES:
            assert stats.scenario_preset.get((scenario, preset), 0) >= 1, (scenario, preset)
    assert min(stats.by_relation.values()) >= 4
    assert stats.barge_ins >= 6 and stats.backchannels >= 6 and stats.pauses_inside >= 6
    # spread across calls, not piled into a few
    for cue in ("barge_in_ms", "backchannel", "pause_inside"):
        assert sum(any(getattr(t, cue) is not None for t in d.caller_turns) for d in bundled) >= 6, cue
    assert len({d.id for d in bundled}) == len(bundled)


def test_bundled_dialogues_are_shaped_like_short_phone_calls(bundled):
    for d in bundled:
        assert re.fullmatch(rf"{d.scenario}-{d.preset.type}-\d\d", d.id), d.id
        assert 2 <= len(d.caller_turns) <= 5, d.id
        assert isinstance(d.turns[0], AssistantTurn) and isinstance(d.turns[-1], AssistantTurn), d.id
        assert all(len(t.text) <= 40 for t in d.assistant_turns), d.id
    lengths = [len(t.text) for d in bundled for t in d.caller_turns]
    assert max(lengths) <= 32
    assert sum(6 <= n <= 30 for n in lengths) >= 0.9 * len(lengths)


def test_bundled_overlap_cues_fall_inside_the_reply_they_overlap(bundled):
    for d in bundled:
        for i, turn in enumerate(d.turns):
            if not isinstance(turn, CallerTurn):
                continue
            prev = d.previous_assistant(i)
            offsets = [turn.barge_in_ms, turn.backchannel.at_ms if turn.backchannel else None]
            for offset in filter(None, offsets):
                assert prev is not None
                assert offset < len(prev.text) / TTS_CHARS_PER_SEC * 1000 - 300, (d.id, i)


def test_bundled_harassment_references_never_leak_private_details(bundled):
    private = re.compile(r"[0-9０-９]|号码|地址是|住在|开会|医院|高铁|出差|门口")
    for d in bundled:
        if d.scenario != "harassment":
            continue
        for t in d.assistant_turns[1:]:
            assert not private.search(t.text), (d.id, t.text)


def test_bundled_file_round_trips_through_json(bundled):
    # every line is a standalone object that parses to the same dialogue
    lines = bundled_dialogues_path().read_text(encoding="utf-8").splitlines()
    for d, line in zip(bundled, lines, strict=True):
        assert parse_dialogue(json.loads(line), d.source, d.line) == d
        assert copy.deepcopy(d) == d


def test_a_pretty_printed_file_is_one_problem_saying_a_dialogue_file_is_jsonl(tmp_path):
    pretty = tmp_path / "pretty.json"
    text = json.dumps(good("one"), ensure_ascii=False, indent=2)
    pretty.write_text(text + "\n", encoding="utf-8")
    [problem] = validate_file(pretty)  # not one "invalid JSON" a line
    n = text.count("\n") + 1
    assert str(problem) == (
        f"{pretty}: JSON written over several lines (an object over lines 1-{n}): a dialogue file is JSONL,"
        f" one dialogue object per line; `jq -c '.' {pretty} > fixed.jsonl` rewrites it so"
    )
    # good lines around one pretty-printed object: they load; the object is the one problem
    mixed = write(tmp_path, [good("a"), text, good("b")], "mixed.jsonl")
    [problem] = validate_file(mixed)
    assert f"an object over lines 2-{n + 1}" in problem.reason and problem.line == 0
    array = tmp_path / "array.json"
    array.write_text(json.dumps([good("a"), good("b")], indent=1), encoding="utf-8")
    [problem] = validate_file(array)
    assert "an array over lines 1-" in problem.reason and "jq -c '.[]'" in problem.reason
    broken = tmp_path / "broken.json"
    broken.write_text(text[:-2] + "\n", encoding="utf-8")  # and not even valid as a whole: where it breaks
    [problem] = validate_file(broken)
    assert str(problem).startswith(f"{broken}: JSON written over several lines, and broken (Expecting")
    assert f"at line {n}, col 1): a dialogue file is JSONL" in problem.reason


def test_problems_of_a_whole_file_are_printed_without_a_line_number(tmp_path):
    assert [str(p) for p in validate_file(write(tmp_path, [""], "empty.jsonl"))] == [
        f"{tmp_path / 'empty.jsonl'}: no dialogues"
    ]
    [missing] = validate_file(tmp_path / "nope.jsonl")
    assert str(missing).startswith(f"{tmp_path / 'nope.jsonl'}: cannot read: ")
