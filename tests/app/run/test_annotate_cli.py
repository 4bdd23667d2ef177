"""``callsim annotate``: drafts from a model over HTTP (the stand-in LLM), and ``--check`` without one."""

import json
from pathlib import Path

import pytest

from tests.metrics.scoring.test_draft import answer, turn
from tests.records import good
from voice.app.cli import main

pytestmark = pytest.mark.usefixtures("no_openai_env")


@pytest.fixture
def dialogues(tmp_path: Path) -> Path:
    path = tmp_path / "d.jsonl"
    rows = [good(), good("other-01")]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_draft_of_every_dialogue_is_written_marked_draft_and_validates_with_a_warning(
    llm, dialogues, tmp_path, capsys
):
    llm.answer(answer()).answer(answer())
    argv = ["annotate", str(dialogues), "--judge", "openai:drafter-a", "--base-url", llm.url]
    assert main(argv) == 0
    out = dialogues.with_name("d.annotations.draft.jsonl")  # the default --out
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["dialogue"] for r in rows] == ["takeout-regular-01", "other-01"]
    assert all(r["draft"] is True for r in rows) and len(llm.requests) == 2
    said = capsys.readouterr()
    assert f"{out}: 2 draft entries by drafter-a" in said.out and "--check" in said.out
    assert main(["data", "validate", str(dialogues), "--annotations", str(out), "--tts", "espeak"]) == 0
    err = capsys.readouterr().err
    assert "2 entries are unreviewed drafts (takeout-regular-01, other-01)" in err
    assert 'delete its "draft": true' in err


def test_a_malformed_answer_is_a_clear_error_and_nothing_is_written(llm, dialogues, tmp_path, capsys):
    llm.answer(answer())  # the first dialogue is fine
    for _ in range(3):
        llm.answer(answer(turns=[turn(0, [["门口"]]), turn(0, [["门口"]])]))
    out = tmp_path / "draft.jsonl"
    argv = [
        "annotate",
        str(dialogues),
        "--judge",
        "openai:drafter-b",
        "--base-url",
        llm.url,
        "--out",
        str(out),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "callsim: error: other-01: drafter-b's annotations are malformed after 3 attempts" in err
    assert "nothing was written" in err and "Traceback" not in err
    assert not out.exists()


def test_dropped_phrases_are_warned_and_the_rest_written(llm, dialogues, tmp_path, capsys):
    first = turn(0, [["门口"]], must_not=["放门口"], should_end=False)
    llm.answer(answer(turns=[first, *answer()["turns"][1:]])).answer(answer())
    out = tmp_path / "draft.jsonl"
    argv = [
        "annotate",
        str(dialogues),
        "--judge",
        "openai:drafter-c",
        "--base-url",
        llm.url,
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    assert "takeout-regular-01 turn 0: dropped must_not[0] '放门口'" in capsys.readouterr().err
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["turns"][0] == {
        "turn": 0, "key_points": [["门口"]], "should_end": False,
    }  # fmt: skip


def test_options_that_cannot_go_together_are_refused(dialogues, tmp_path, capsys):
    taken = tmp_path / "taken.jsonl"
    taken.write_text("", encoding="utf-8")
    for argv, said in (
        ([], "give --judge openai:MODEL (draft) or --check"),
        (["--check", "--judge", "openai:m"], "one of them"),
        (["--judge", "gpt4"], "--judge: 'gpt4': expected openai:MODEL"),
        (["--judge", "openai:m", "--out", str(taken)], f"--out {taken} exists"),
        (["--judge", "openai:m", "--timeout", "0"], "--timeout must be more than 0"),
    ):
        assert main(["annotate", str(dialogues), *argv]) == 2
        assert said in capsys.readouterr().err


def test_check_lists_each_reference_score_and_the_gaps_and_warns_of_drafts(dialogues, tmp_path, capsys):
    notes = {"dialogue": "takeout-regular-01", "draft": True,
             "turns": [{"turn": 0, "key_points": [["门口"]], "should_end": False}]}  # fmt: skip
    annotations = tmp_path / "a.jsonl"
    annotations.write_text(json.dumps(notes, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["annotate", str(dialogues), "--annotations", str(annotations), "--check"]) == 0
    said = capsys.readouterr()
    assert "takeout-regular-01 turn 0: caller 喂，你好，美团外卖，你的餐到了。" in said.out
    assert "semantic understanding   5  conveys 1 of 1 key points" in said.out
    # the dialogue itself grounds every dimension but understanding where the caller's turn asks nothing
    assert said.out.splitlines()[-1].startswith(
        "gaps: 5 of 8 replies have a dimension with no grounds to judge (semantic understanding 5)"
    )
    assert "1 entry is an unreviewed draft (takeout-regular-01)" in said.err
