import json
from pathlib import Path

import pytest

from tests.records import good
from voice.app.benchmarks import judge as bj
from voice.dialogues import CallerTurn, load_dialogues, parse_dialogue
from voice.errors import DialogueError
from voice.metrics.scoring.vocabulary import (
    JUDGED,
    CallJudgement,
    DimensionScore,
    GoalVerdict,
    ScoringInput,
    TurnScore,
    not_scored,
)


def dialogue():
    return parse_dialogue({**good(), "id": "t"}, "t.jsonl", 1)


def write(tmp_path: Path, rows: list, name: str = "bad.jsonl") -> Path:
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(**changes: object) -> dict:
    return {"dialogue": "t", "turn": 0, "reply": "好的。", "fails": "safety", "why": "x", **changes}


class LengthJudge:
    """Any Judge will do: this one scores safety only, 5 up to 10 characters, else 1."""

    name = "length/0"

    def judge_call(self, call: ScoringInput) -> CallJudgement:
        out = []
        for t in call.turns:
            scores = {d: not_scored("no") for d in JUDGED}
            scores["safety"] = DimensionScore(5 if len(t.heard) <= 10 else 1, "length")
            out.append(TurnScore(t.turn, self.name, scores))
        return CallJudgement(out, GoalVerdict(None, "not judged", None, "not judged"))


def test_reference_call_hears_every_reference_reply_and_with_reply_swaps_one():
    d = dialogue()
    call = bj.reference_call(d)
    assert [t.heard for t in call.turns] == [t.text for t in d.assistant_turns[1:]]
    assert [t.dialogue_turn for t in call.turns] == [
        i for i, t in enumerate(d.turns) if isinstance(t, CallerTurn)
    ]
    assert call.greeting == d.turns[0].text and all(t.reference == t.heard for t in call.turns)
    swapped = bj.with_reply(call, 1, "不行。")
    assert [t.heard for t in swapped.turns][:2] == [call.turns[0].heard, "不行。"]
    assert swapped.turns[1].reference == call.turns[1].reference and swapped.call_id != call.call_id


def test_bad_replies_load_and_every_problem_is_file_line_field(tmp_path):
    d = dialogue()
    ok = bj.load_bad_replies(write(tmp_path, [row(), "", row(turn=3, fails="context_use")]), [d])
    assert [(b.line, b.turn, b.fails) for b in ok] == [(1, 0, "safety"), (3, 3, "context_use")]
    path = write(
        tmp_path,
        [
            row(dialogue="nope"),
            row(turn=4),
            row(turn=-1),
            row(fails="dialogue_rhythm"),
            row(reply=""),
            {k: v for k, v in row(extra=1).items() if k != "why"},
            "[1]",
            "{",
        ],
    )
    with pytest.raises(DialogueError) as info:
        bj.load_bad_replies(path, [d])
    assert [(p.line, p.field) for p in info.value.problems] == [
        (1, "dialogue"),
        (2, "turn"),
        (3, "turn"),
        (4, "fails"),
        (5, "reply"),
        (6, "extra"),
        (6, "why"),
        (7, "<root>"),
        (8, "<json>"),
    ]
    assert str(info.value).splitlines()[1] == f"{path}:2: turn: t has 4 caller turns, got 4"


def test_separation_compares_references_with_bad_replies_for_any_judge():
    d = dialogue()
    bad = [
        bj.BadReply("t", 1, "好的好的好的好的，谢谢您谢谢您。", "safety", "long: below its reference"),
        bj.BadReply("t", 3, "嗯。", "safety", "short: level with its reference"),
        bj.BadReply("t", 2, "好的。", "context_use", "not scored by this judge"),
    ]
    result = bj.separation(LengthJudge(), [d], bad)
    assert (result["judge"], result["dialogues"], result["reference_turns"], result["bad_replies"]) == (
        "length/0",
        1,
        4,
        3,
    )
    safety = result["dimensions"]["safety"]
    assert safety["reference_scored"] == 4 and safety["bad_scored"] == 2
    assert safety["bad_mean"] == 3.0 and safety["bad_above_reference"] == 0
    assert safety["bad_level_with_reference"] == 1
    context = result["dimensions"]["context_use"]
    assert (context["reference_scored"], context["bad_replies"], context["bad_scored"]) == (0, 1, 0)
    assert context["bad_mean"] is None
    text = bj.render(result, verbose=True)
    assert text.splitlines()[0] == "judge length/0: 1 dialogues, 4 reference turns, 3 bad replies"
    assert "dialogue_rhythm" in text and "t turn 3 safety: 5 (reference 5)" in text


def test_the_bundled_calibration_data_loads():
    dialogues = load_dialogues(bj.calibration_dialogues_path())
    assert {d.id for d in dialogues} == {"life-none-wrong-01", "work-regular-wrong-01"}
    all_dialogues = [*load_dialogues(bj.bundled_dialogues_path()), *dialogues]
    assert len(bj.load_bad_replies(bj.bad_replies_path(), all_dialogues)) >= 20


def test_main_prints_the_table_or_json_and_reports_bad_data(tmp_path, capsys):
    assert bj.main([]) == 0
    provenance, table = capsys.readouterr().out.split("\n", 1)
    assert provenance.startswith("provenance: CallSim ")  # where the figures came from, first
    assert table.startswith("judge checklist/5: 32 dialogues")
    assert all(dim in table for dim in JUDGED)
    assert bj.main(["--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["dimensions"]) == set(JUDGED) and result["bad"][0]["reason"]
    assert result["provenance"]["machine"]["cpus"] >= 1 and result["provenance"]["speed_index"] is None
    assert bj.main(["--bad-replies", str(write(tmp_path, [row(dialogue="nope")]))]) == 1
    assert "bad.jsonl:1: dialogue: no dialogue 'nope'" in capsys.readouterr().err
    assert bj.main(["--judge", "nope"]) == 1
