"""The judge's label: its blind figures, read from the one file the blind benchmark writes."""

import json

from voice.benchmarks import judge_blind as blind
from voice.metrics.scoring import calibration
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.metrics.scoring.judges import make_judge


def result(judge="checklist/9", below=0.5, low=0.25):
    total = {"bad": 4, "below": 2, "not_scored": 1, "bad_below_share": below, "good": 4, "good_low": 1,
             "good_low_share": low}  # fmt: skip
    return {"judge": judge, "dialogues": 3, "total": total, "goal": {"met": False}}


def test_a_recorded_judge_is_labelled_with_its_figures_and_others_say_they_have_none(tmp_path):
    path = tmp_path / "calibration.json"
    calibration.record(result(), "somewhere/blind", path)
    calibration.record(result("openai:m/3", 0.9375, 0.0), "somewhere/blind", path)
    assert calibration.judge_label("checklist/9", path) == (
        "checklist/9: blind separation 50 %, paraphrases low 25 %"
    )
    assert calibration.judge_label("openai:m/3", path).endswith("blind separation 94 %, paraphrases low 0 %")
    assert "no blind calibration figures" in calibration.judge_label("checklist/1", path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["written_by"] == calibration.WRITTEN_BY and set(doc["judges"]) == {"checklist/9", "openai:m/3"}
    assert doc["judges"]["checklist/9"]["set"] == "somewhere/blind"
    assert calibration.read(tmp_path / "missing.json") == {}


def test_the_committed_figures_are_what_the_blind_benchmark_measures_now():
    """calibration.json is written by ``scripts/bench_judge --blind --write-calibration``, never by hand:
    a change to the checklist judge or the blind set that moves its figures must rerun it."""
    judge = make_judge("checklist")
    recorded = calibration.read().get(judge.name)
    assert recorded is not None, (
        f"no figures for {judge.name}: run scripts/bench_judge --blind --write-calibration"
    )
    measured = calibration.figures(blind.calibrate(ChecklistJudge(), *blind.load_blind(blind.blind_folder())))
    assert {k: v for k, v in recorded.items() if k != "set"} == measured, (
        "stale: run scripts/bench_judge --blind --write-calibration and commit the file"
    )
