"""The judge's label: its blind figures, read from the one file the blind benchmark writes."""

import json

from voice.app.benchmarks import judge_blind as blind
from voice.metrics.scoring import calibration
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.metrics.scoring.judges import make_judge


def result(judge="checklist/9", below=0.5, low=0.25):
    total = {"bad": 4, "below": 2, "not_scored": 1, "bad_below_share": below, "good": 4, "good_low": 1,
             "good_low_share": low}  # fmt: skip
    return {"judge": judge, "dialogues": 3, "total": total, "goal": {"met": False}}


def test_a_recorded_judge_is_labelled_with_its_figures_and_others_say_they_have_none(tmp_path):
    path = tmp_path / "calibration.json"
    calibration.record(result(), "blind", path)
    calibration.record(result("openai:m/3", 0.9375, 0.0), "blind", path)
    assert calibration.judge_label("checklist/9", path) == (
        "checklist/9: blind separation 50 %, paraphrases low 25 % (blind set blind)"
    )
    assert calibration.judge_label("openai:m/3", path).endswith(
        "blind separation 94 %, paraphrases low 0 % (blind set blind)"
    )
    assert "no blind calibration figures" in calibration.judge_label("checklist/1", path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["written_by"] == calibration.WRITTEN_BY and set(doc["judges"]) == {"checklist/9", "openai:m/3"}
    assert set(doc["judges"]["checklist/9"]) == {"blind"}
    assert calibration.read(tmp_path / "missing.json") == {}


def test_with_several_blind_sets_the_label_quotes_the_worst_figure_of_each_kind(tmp_path):
    path = tmp_path / "calibration.json"
    calibration.record(result(below=0.91, low=0.06), "blind", path)
    calibration.record(result(below=0.80, low=0.09), "blind2", path)
    calibration.record(result(below=0.85, low=0.04), "blind2", path)  # a rerun replaces its set's figures
    assert calibration.judge_label("checklist/9", path) == (
        "checklist/9: blind separation 85 %, paraphrases low 6 % (worst of 2 blind sets)"
    )


def test_the_committed_figures_are_what_the_blind_benchmark_measures_now():
    """calibration.json is written by ``scripts/bench_judge --blind [FOLDER] --write-calibration``, never by
    hand: a change to the checklist judge or a blind set that moves its figures must rerun it, for every
    blind set that ships."""
    judge = make_judge("checklist")
    recorded = calibration.read().get(judge.name)
    assert recorded is not None, (
        f"no figures for {judge.name}: run scripts/bench_judge --blind --write-calibration"
    )
    sets = blind.blind_sets()
    assert len(sets) >= 2 and set(recorded) == {folder.name for folder in sets}
    for folder in sets:
        measured = calibration.figures(blind.calibrate(ChecklistJudge(), *blind.load_blind(folder)))
        assert recorded[folder.name] == measured, (
            f"stale: run scripts/bench_judge --blind {folder} --write-calibration and commit the file"
        )
