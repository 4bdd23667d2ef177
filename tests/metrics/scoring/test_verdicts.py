"""The judge's call verdicts on disk and in sum: a call's ``goal`` object, a target's ``goal`` block."""

import pytest

from voice.metrics.scoring.verdicts import (
    goal_from_json,
    goal_lines,
    goal_to_json,
    summarize_goals,
    verdict_text,
    verdict_units,
)
from voice.metrics.scoring.vocabulary import GoalVerdict

MET = GoalVerdict("yes", "the rider left it at the gate", "yes", "held the emergent preset")
PARTLY = GoalVerdict("partly", "a message was taken", "no", "promised a call back the owner declined")
NO_PRESET = GoalVerdict("no", "refused", "not_applicable", "no preset")
UNJUDGED = GoalVerdict(None, "needs an LLM judge", None, "nothing checked")


def test_a_verdict_round_trips_through_its_json_object():
    doc = goal_to_json(PARTLY)
    assert doc == {
        "caller_goal_met": "partly",
        "reason": "a message was taken",
        "preset_respected": "no",
        "preset_reason": "promised a call back the owner declined",
    }
    assert goal_from_json(doc) == PARTLY
    assert goal_to_json(None) is None and goal_from_json(None) is None
    assert goal_from_json(goal_to_json(UNJUDGED)) == UNJUDGED


def test_a_malformed_verdict_is_refused():
    with pytest.raises(ValueError, match="lacks 'preset_reason'"):
        goal_from_json({"caller_goal_met": "yes", "reason": "r", "preset_respected": "yes"})
    with pytest.raises(ValueError, match="caller_goal_met is one of"):
        goal_from_json({**goal_to_json(MET), "caller_goal_met": "mostly"})
    with pytest.raises(ValueError, match="an object or null"):
        goal_from_json(["yes"])


def test_the_summary_counts_each_answer_and_rates_only_the_judged_calls():
    block = summarize_goals([MET, PARTLY, NO_PRESET, UNJUDGED, None])
    assert block["calls"] == 5
    assert block["caller_goal_met"] == {"yes": 1, "partly": 1, "no": 1, "not_judged": 2}
    assert block["preset_respected"] == {"yes": 1, "no": 1, "not_applicable": 1, "not_judged": 2}
    assert block["met_rate"] == pytest.approx(1 / 3, abs=1e-4)  # of the 3 judged; partly is not met
    assert block["met_or_partly_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert block["preset_respected_rate"] == 0.5  # yes of yes + no: without a preset there was none to keep


def test_nothing_judged_is_no_rate_not_zero():
    block = summarize_goals([UNJUDGED, UNJUDGED])
    assert block["met_rate"] is None and block["preset_respected_rate"] is None
    assert summarize_goals([])["calls"] == 0


def test_each_call_is_one_unit_of_a_rate_or_none_when_it_does_not_count():
    calls = [MET, PARTLY, NO_PRESET, UNJUDGED, None]
    assert verdict_units(calls, "met_rate") == [[1.0], [0.0], [0.0], [], []]
    assert verdict_units(calls, "met_or_partly_rate") == [[1.0], [1.0], [0.0], [], []]
    assert verdict_units(calls, "preset_respected_rate") == [[1.0], [0.0], [], [], []]


def test_the_verdicts_read_as_text():
    assert goal_lines(summarize_goals([MET, PARTLY])) == [
        "caller's goal met (judge): yes 1, partly 1, no 0, not judged 0; met rate 50%, met or partly 100%",
        "preset respected (judge): yes 1, no 1, not applicable 0, not judged 0; respected rate 50%",
    ]
    assert verdict_text(UNJUDGED) == ("not judged: needs an LLM judge", "not judged: nothing checked")
    assert verdict_text(NO_PRESET) == ("no: refused", "not applicable: no preset")


def test_the_typed_blocks_name_exactly_the_keys_written() -> None:
    from voice.metrics.scoring.verdicts import RATES, GoalJson, GoalSummary

    summary = summarize_goals([MET, PARTLY, None])
    assert list(summary) == list(GoalSummary.__annotations__) and set(RATES) <= set(summary)
    assert list(goal_to_json(MET) or {}) == list(GoalJson.__annotations__)
