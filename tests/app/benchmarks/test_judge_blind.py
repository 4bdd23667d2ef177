import json
from pathlib import Path
from typing import Any

import pytest

from tests.records import good
from voice.app.benchmarks import judge as bj
from voice.app.benchmarks import judge_blind as blind
from voice.errors import DialogueError
from voice.metrics.scoring.checklist import ChecklistJudge


def write(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def reply(kind: str, text: str, fails: str | None = None, turn: int = 0) -> dict[str, Any]:
    row = {"dialogue": "t", "turn": turn, "kind": kind, "reply": text, "why": "x"}
    return {**row, "fails": fails} if fails else row


BAD_BELOW = reply("bad", "好的，谢谢您。", "semantic_understanding")  # misses 门口
# 放哪都行 against 放门口 said in words no rule knows: the judge misses it
BAD_LEVEL = reply("bad", "好的，麻烦您放门口，您看放哪方便就放哪吧。", "preset_compliance")
# caller turn 1 (我放门口了啊) has no key points and asks nothing: no grounds to judge understanding
BAD_UNSCORED = reply("bad", "好的。", "semantic_understanding", turn=1)
GOOD = reply("good", "行，您就放门口吧，机主在开会呢。")
GOOD_LOW = reply("good", "嗯嗯，知道了。")  # called good, but misses the point: low on understanding


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A blind folder of one dialogue: the three files apart, as the real one keeps them."""
    write(tmp_path / "dialogues.jsonl", [{**good(), "id": "t"}])
    notes = {"dialogue": "t", "turns": [{"turn": 0, "key_points": [["门口"]], "must_not": ["下来拿"]}]}
    write(tmp_path / "annotations.jsonl", [notes])
    write(tmp_path / "replies.jsonl", [BAD_BELOW, BAD_LEVEL, BAD_UNSCORED, GOOD, GOOD_LOW])
    return tmp_path


def test_bad_replies_below_good_paraphrases_low_and_not_scored_are_counted_per_dimension(folder):
    result = blind.calibrate(ChecklistJudge(), *blind.load_blind(folder))
    dims = result["dimensions"]
    su = dims["semantic_understanding"]
    assert (su["bad"], su["below"], su["not_scored"], dims["preset_compliance"]["level"]) == (2, 1, 1, 1)
    understanding = dims["semantic_understanding"]
    assert (understanding["good_low"], understanding["good_scored"]) == (1, 2)
    t = result["total"]
    assert (t["bad"], t["below"], t["not_scored"], t["good"], t["good_low"]) == (3, 1, 1, 2, 1)
    assert t["bad_below_share"] == pytest.approx(1 / 3) and not result["goal"]["met"]
    failing = {(f["kind"], f["dimension"], f["outcome"]) for f in result["failures"]}
    assert ("bad", "preset_compliance", "level") in failing
    assert ("good", "semantic_understanding", "low") in failing
    assert all(f["kind"] != "bad" or f["outcome"] != "below" for f in result["failures"])


def test_the_goal_is_met_when_bad_replies_fall_below_and_paraphrases_hold(folder):
    write(folder / "replies.jsonl", [BAD_BELOW, GOOD])
    result = blind.calibrate(ChecklistJudge(), *blind.load_blind(folder))
    assert result["total"]["bad_below_share"] == 1.0 and result["total"]["good_low_share"] == 0.0
    assert result["goal"]["met"] and "goal: bad below >= 90%, good low <= 10%: met" in blind.render(result)


def test_a_replies_file_is_checked_line_by_line(folder):
    write(folder / "replies.jsonl", [
        reply("bad", "x"), reply("good", "好", "safety"), reply("meh", "好"), {**GOOD, "dialogue": "n"},
        {**GOOD, "turn": 9},
    ])  # fmt: skip
    with pytest.raises(DialogueError) as info:
        blind.load_blind(folder)
    found = [(p.line, p.field) for p in info.value.problems]
    assert found == [(1, "fails"), (2, "fails"), (3, "kind"), (4, "dialogue"), (5, "turn")]


def test_bench_judge_blind_prints_the_table_json_or_every_failure(folder, capsys):
    assert bj.main(["--blind", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "on the blind set: 1 dialogues, 3 bad replies, 2 good paraphrases" in out
    assert "total: bad replies below their reference 1/3 (33%, 1 not scored)" in out and "not met" in out
    assert bj.main(["--blind", str(folder), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["total"]["good_low"] == 1 and doc["provenance"]
    assert bj.main(["--blind", str(folder), "--verbose"]) == 0
    assert "t turn 0 bad preset_compliance level: 5 (reference 5)" in capsys.readouterr().out
    assert bj.main(["--blind", str(folder / "nowhere")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_bench_judge_takes_annotations_from_a_file_of_their_own(folder, tmp_path, capsys):
    bad = write(tmp_path / "bad.jsonl", [{k: v for k, v in BAD_BELOW.items() if k != "kind"}])
    args = ["--dialogues", str(folder / "dialogues.jsonl"), "--bad-replies", str(bad)]
    assert bj.main([*args, "--annotations", str(folder / "annotations.jsonl")]) == 0
    assert "semantic_understanding" in capsys.readouterr().out
    broken = write(tmp_path / "a.jsonl", [{"dialogue": "nope"}])
    assert bj.main([*args, "--annotations", str(broken)]) == 1
    assert f"{broken}:1: dialogue: no dialogue 'nope'" in capsys.readouterr().err


def test_bench_judge_blind_records_the_judges_figures_where_the_labels_read_them(
    folder, tmp_path, monkeypatch, capsys
):
    from voice.metrics.scoring import calibration

    monkeypatch.setattr(calibration, "CALIBRATION_PATH", tmp_path / "calibration.json")
    assert bj.main(["--blind", str(folder), "--write-calibration"]) == 1  # not a set that ships
    assert "records the blind sets that ship" in capsys.readouterr().err
    assert not (tmp_path / "calibration.json").exists()
    monkeypatch.setattr(blind, "blind_sets", lambda: [folder])
    assert bj.main(["--blind", str(folder), "--write-calibration"]) == 0
    assert f"recorded in {tmp_path / 'calibration.json'}" in capsys.readouterr().out
    assert calibration.judge_label(ChecklistJudge().name).endswith(
        f"blind separation 33 %, paraphrases low 50 % (blind set {folder.name})"
    )
    with pytest.raises(SystemExit):
        bj.main(["--write-calibration"])  # only the blind set's figures are recorded
    assert "--write-calibration goes with --blind" in capsys.readouterr().err


def test_without_a_folder_every_shipped_set_is_measured_and_the_worst_is_quoted(
    folder, tmp_path, monkeypatch, capsys
):
    other = tmp_path / "second"
    other.mkdir()
    for name in ("dialogues.jsonl", "annotations.jsonl"):
        (other / name).write_text((folder / name).read_text(encoding="utf-8"), encoding="utf-8")
    write(other / "replies.jsonl", [BAD_BELOW, GOOD])  # this set does better: 1/1 below, nothing low
    monkeypatch.setattr(blind, "blind_sets", lambda: [folder, other])
    assert bj.main(["--blind"]) == 0
    out = capsys.readouterr().out
    assert f"[{folder.name}] judge" in out and "[second] judge" in out
    assert f"worst of 2 blind sets ({', '.join(sorted([folder.name, 'second']))})" in out
    assert f"total: bad replies below their reference 33% ({folder.name}); good paraphrases low 50%" in out
    assert bj.main(["--blind", "--json"]) == 0
    worst = json.loads(capsys.readouterr().out)["worst"]
    assert worst["bad_below"] == {"share": 1 / 3, "of": folder.name} and not worst["goal_met"]
    assert worst["dimensions"]["semantic_understanding"]["bad_below"]["share"] == 0.5
