import json
from pathlib import Path
from typing import Any

import pytest

from tests.records import good
from voice.app.cli import main
from voice.dialogues import AssistantTurn, load_dialogues, validate_file
from voice.dialogues.annotation_file import apply_annotations
from voice.errors import DialogueError


def write(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def entry(**changes: Any) -> dict[str, Any]:
    """Annotations for ``good()``: caller turn 0 is answered by turns[2], caller turn 3 by turns[8]."""
    return {
        "dialogue": "takeout-regular-01",
        "private": [{"fact": "手机号", "phrases": ["手机号是"], "digits": 7}],
        "turns": [
            {"turn": 0, "key_points": [["门口"]], "must_not": ["下来拿"], "should_end": False},
            {"turn": 3, "key_points": [["再见"]], "should_end": True},
        ],
        **changes,
    }


@pytest.fixture
def dialogues(tmp_path: Path) -> Path:
    return write(tmp_path / "d.jsonl", [good(), {**good(), "id": "other"}])


def test_annotations_go_on_the_reply_answering_each_caller_turn_and_on_the_dialogue(tmp_path, dialogues):
    [d, other] = load_dialogues(dialogues, annotations=write(tmp_path / "a.jsonl", [entry()]))
    replies = [t for t in d.turns if isinstance(t, AssistantTurn)]
    assert replies[1].annotations.key_points == (("门口",),)
    assert replies[1].annotations.must_not == ("下来拿",)
    assert replies[1].annotations.should_end is False and replies[4].annotations.should_end is True
    assert replies[2].annotations.key_points == ()  # caller turn 1 is not annotated
    assert d.annotations.private[0].digits == 7 and not d.annotations.scam
    assert other == load_dialogues(dialogues)[1]  # a dialogue the file does not name is left as it was


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (entry(dialogue="nope"), "dialogue", "no dialogue 'nope' in the dialogues loaded"),
        (entry(colour=1), "colour", "unknown key"),
        (entry(turns=[{"turn": 9}]), "turns[0].turn", "must be a caller turn index (0..3"),
        (entry(turns=[{"turn": 0, "key_points": [["南门"]]}]), "turns[0].key_points[0]",
         "the reference reply conveys none of ['南门']"),
        (entry(turns=[{"turn": 0, "must_not": ["门口"]}]), "turns[0].must_not[0]",
         "reference reply says '门口'"),
        (entry(turns=[{"turn": 0, "should_ask": "yes"}]), "turns[0].should_ask", "must be true or false"),
        (entry(turns=[{"turn": 0}, {"turn": 0}]), "turns[1].turn", "annotated twice"),
        (entry(turns=[{"turn": 0, "colour": 1}]), "turns[0].colour", "unknown key"),
        (entry(private=[{"fact": "x", "phrases": ["门口"]}]), "private[0].phrases[0]",
         "a reference reply discloses"),
        (entry(scam="no"), "scam", "must be true or false"),
        ("{not json", "<json>", "invalid JSON"),
    ],
)  # fmt: skip
def test_every_problem_is_annotation_file_line_field_reason(tmp_path, dialogues, row, field, reason):
    path = write(tmp_path / "a.jsonl", ["", row])
    problems = validate_file(dialogues, annotations=path)
    assert [p.field for p in problems] == [field]
    assert str(problems[0]).startswith(f"{path}:2: {field}: ") and reason in problems[0].reason
    with pytest.raises(DialogueError):
        load_dialogues(dialogues, annotations=path)


def test_one_place_says_what_a_reply_is_judged_on(tmp_path):
    inline = good()
    inline["turns"][2]["key_points"] = [["门口"]]
    inline["scam"] = True
    d = load_dialogues(write(tmp_path / "d.jsonl", [inline]))
    _, problems = apply_annotations(write(tmp_path / "a.jsonl", [entry(), entry()]), d)
    assert [(p.line, p.field) for p in problems] == [(1, "dialogue"), (1, "turns[0].turn"), (2, "dialogue")]
    assert "already" in problems[0].reason and "annotated twice (first on line 1)" in problems[2].reason


def test_a_caller_turn_without_a_reply_after_it_cannot_be_annotated(tmp_path):
    obj = good()
    obj["turns"] = obj["turns"][:-1]  # the caller has the last word
    d = load_dialogues(write(tmp_path / "d.jsonl", [obj]))
    _, [problem] = apply_annotations(write(tmp_path / "a.jsonl", [entry(turns=[{"turn": 3}])]), d)
    assert problem.field == "turns[0].turn" and "no reference reply after it" in problem.reason


def test_data_validate_takes_the_annotations_file(tmp_path, dialogues, capsys):
    ok = write(tmp_path / "a.jsonl", [entry()])
    assert main(["data", "validate", str(dialogues), "--annotations", str(ok)]) == 0
    bad = write(tmp_path / "b.jsonl", [entry(dialogue="nope")])
    assert main(["data", "validate", str(dialogues), "--annotations", str(bad)]) == 1
    assert f"{bad}:1: dialogue: no dialogue 'nope'" in capsys.readouterr().out
    assert main(["data", "validate", str(dialogues), "--annotations", str(tmp_path / "missing.jsonl")]) == 2


def test_a_draft_is_valid_and_counted_and_its_flag_must_be_true_or_false(tmp_path, dialogues, capsys):
    from voice.dialogues.annotation_file import drafts, drafts_warning

    rows = [entry(draft=True), {"dialogue": "other", "draft": False, "turns": []}]
    path = write(tmp_path / "a.jsonl", rows)
    assert apply_annotations(path, load_dialogues(dialogues))[1] == []
    assert drafts(path) == ["takeout-regular-01"]
    assert drafts_warning(path) == (
        f"{path}: 1 entry is an unreviewed draft (takeout-regular-01): "
        'review each and delete its "draft": true'
    )
    assert drafts_warning(write(tmp_path / "b.jsonl", [entry()])) is None
    [problem] = apply_annotations(
        write(tmp_path / "c.jsonl", [entry(draft="yes")]), load_dialogues(dialogues)
    )[1]
    assert (problem.field, problem.reason) == (
        "draft",
        "must be true (a draft not yet reviewed) or left out, got 'yes'",
    )
