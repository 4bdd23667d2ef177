import json
from pathlib import Path

from tests.records import good
from voice.app.benchmarks import judge, judge_blind
from voice.app.benchmarks.replies import DATA, Rows, check_reply_row, with_reply
from voice.dialogues import parse_dialogue
from voice.metrics.scoring.coverage import reference_call

KEYS = frozenset({"dialogue", "turn", "reply", "why"})


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "replies.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def checked(obj: dict) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    d = parse_dialogue({**good(), "id": "t"})
    check_reply_row(obj, {"t": d}, lambda field, reason: found.append((field, reason)))
    return found


def test_rows_yield_each_object_line_and_locate_every_problem_to_its_line(tmp_path):
    row = {"dialogue": "t", "turn": 0, "reply": "好的。", "why": "x"}
    path = write(tmp_path, [json.dumps(row), "", "{not json", "[1]", json.dumps({**row, "extra": 1})])
    rows = Rows(path, KEYS)
    got = [(number, obj) for number, obj, _ in rows]
    assert got == [(1, row), (5, {**row, "extra": 1})]
    assert [(p.line, p.field) for p in rows.problems] == [(3, "<json>"), (4, "<root>"), (5, "extra")]
    assert rows.problems[2].reason == "unknown key (allowed: dialogue, reply, turn, why)"
    assert all(p.path == str(path) for p in rows.problems)


def test_a_reporter_is_bound_to_the_line_it_came_with(tmp_path):
    path = write(tmp_path, ['{"dialogue": "a"}', '{"dialogue": "b"}'])
    rows = Rows(path, KEYS)
    reporters = [(obj["dialogue"], bad) for _, obj, bad in rows]
    for name, bad in reversed(reporters):
        bad("dialogue", name)
    assert [(p.line, p.reason) for p in rows.problems] == [(2, "b"), (1, "a")]


def test_a_reply_row_names_a_dialogue_loaded_a_caller_turn_it_has_and_real_text():
    assert checked({"dialogue": "t", "turn": 3, "reply": "好的。", "why": "x", "fails": "safety"}) == []
    assert [f for f, _ in checked({"dialogue": "nope", "turn": 0})] == ["dialogue"]
    assert checked({"dialogue": "t", "turn": 4}) == [("turn", "t has 4 caller turns, got 4")]
    assert [f for f, _ in checked({"turn": True, "reply": " ", "why": 3, "fails": "x"})] == [
        "reply",
        "why",
        "fails",
        "turn",
    ]


def test_with_reply_puts_one_reply_in_place_of_its_reference_and_renames_the_call():
    call = reference_call(parse_dialogue(good()))
    swapped = with_reply(call, 2, "不行。")
    assert [t.heard for t in swapped.turns] == [
        *(t.heard for t in call.turns[:2]),
        "不行。",
        call.turns[3].heard,
    ]
    assert [t.reference for t in swapped.turns] == [t.reference for t in call.turns]
    assert swapped.call_id == f"{call.call_id}#bad2"


def test_both_judge_benchmarks_read_replies_from_here_and_the_files_ship_where_data_says():
    assert judge.Rows is judge_blind.Rows is Rows and judge.with_reply is with_reply
    assert judge.bad_replies_path() == DATA / "bad_replies.jsonl" and judge.bad_replies_path().is_file()
    assert judge_blind.blind_folder() == DATA / "blind"
