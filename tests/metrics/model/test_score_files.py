"""The scores callsim score writes, typed: a call's and a target's, as old files hold them."""

import json

from tests.metrics.model.old_files import SCORED, TARGET, doc
from voice.metrics.model.jsonio import Fields, json_bytes
from voice.metrics.model.score_files import (
    CallScores,
    DimensionCell,
    ScoresSummary,
    TextVsHeard,
    TranscriberFacts,
)


def test_an_old_call_scores_file_loads_and_writes_back_the_same_bytes():
    path = SCORED / TARGET / "takeout-regular-01.scores.json"
    written = doc(path)
    scores = CallScores.from_json(Fields(written), "takeout-regular-01")
    assert set(scores.versions) >= {"heard"} and scores.label("scenario") == "takeout"
    assert scores.goal is not None and scores.goal.caller_goal_met is None  # the checklist cannot say
    assert json_bytes(scores.to_json(written["judge"], written["transcriber"])) == path.read_bytes()


def test_an_old_scores_summary_loads_and_writes_back_the_same_bytes():
    path = SCORED / TARGET / "scores.json"
    summary = ScoresSummary.from_json(Fields(doc(path)))
    assert summary.judge == "checklist/5" and summary.calls == 2 and "by_scenario" in summary.breakdowns
    cell = summary.cell("heard", "safety")
    assert isinstance(cell, DimensionCell) and cell.scored + cell.not_scored > 0
    assert summary.transcriber == TranscriberFacts("memory (scripted)") and summary.goal is not None
    assert json_bytes(summary.to_json()) == path.read_bytes()


def test_heard_against_text_keeps_an_interval_that_has_no_bounds():
    d = TextVsHeard(-2.0, (None, None), 1)
    assert d.to_json() == {"heard_minus_text": -2.0, "ci95": [None, None], "n_calls": 1}
    assert TextVsHeard.from_json(Fields(json.loads(json.dumps(d.to_json())))) == d
