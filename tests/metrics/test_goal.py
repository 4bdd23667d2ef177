"""The reactive caller's goal from the event log: verdict, time and turns to it, its waits, its fallbacks."""

import dataclasses

import pytest

from tests.reactive_runs import S, decided, goal_recording
from voice.core import events as ev
from voice.metrics.goal import (
    CallerGoal,
    caller_goal,
    goal_from_json,
    goal_line,
    goal_summary,
    goal_values,
)
from voice.metrics.measure import measure


def goal_of(length_ms, extra):
    rec = goal_recording(length_ms, extra)
    return caller_goal(rec.events, len(rec.assistant), rec.sample_rate)


def test_a_scripted_call_has_no_goal():
    assert goal_of(3000, []) is None
    assert measure(goal_recording(3000, [])).goal is None


def test_the_verdict_its_time_turns_and_the_callers_own_troubles_come_from_the_events():
    extra = [
        ev.TurnRequested(S(1500), 1, "reply_ended", S(1400)),
        decided(900, 0, text="喂，你好", heard=""),
        ev.CallerLate(S(2600), 1, due=S(2100), late=S(500)),
        decided(2600, 1, text="放门口吧", heard="助理：您好 [停顿]", rejected="not JSON"),
        ev.CallerLate(S(4300), 2, due=S(4000), late=S(300)),
        decided(4300, 2, "say", "fallback_script", text="好的", reason="the model timed out"),
        decided(6000, 3, "hang_up", "llm", goal="partly", reason="没说什么时候送"),
        ev.GoalReported(S(6000), "partly", "没说什么时候送", 3),
    ]
    g = goal_of(7000, extra)
    assert g is not None and g.met == "partly" and g.has_verdict
    assert (g.reason, g.turns, g.time_ms) == ("没说什么时候送", 3, 6000.0)
    assert g.caller_late_ms == 800.0  # 500 + 300 ms: the simulator's gaps
    assert (g.caller_fallbacks, g.caller_rejected) == (1, 1)
    assert [d.action for d in g.decisions] == ["say", "say", "say", "hang_up"]
    assert g.decisions[1].heard == "助理：您好 [停顿]" and g.decisions[1].rejected == "not JSON"
    assert g.decisions[2].source == "fallback_script" and g.decisions[2].at_ms == 4300.0
    assert [(w.turn, w.due_ms, w.late_ms) for w in g.waits] == [(1, 2100.0, 500.0), (2, 4000.0, 300.0)]
    assert measure(goal_recording(7000, extra)).goal == g  # measure keeps it with the call's metrics


def test_a_verdict_asked_for_after_the_call_is_timed_at_the_calls_end():
    g = goal_of(5000, [decided(800, 0), ev.GoalReported(S(5400), "yes", "办完了", 1)])
    assert g is not None and g.time_ms == 5000.0 and g.turns == 1


def test_a_reactive_call_without_a_report_has_no_verdict_and_the_last_report_counts():
    g = goal_of(4000, [decided(800, 0), ev.CallerLate(S(1000), 0, S(900), S(100))])
    assert g is not None and g.met is None and g.turns is None and g.time_ms is None
    assert g.caller_late_ms == 100.0 and not g.has_verdict
    twice = [ev.GoalReported(S(1000), "no", "a", 1), ev.GoalReported(S(2000), "yes", "b", 2)]
    last = goal_of(4000, twice)
    assert last is not None and (last.met, last.reason, last.turns, last.time_ms) == ("yes", "b", 2, 2000.0)


def test_the_json_form_round_trips_and_ignores_keys_it_does_not_know():
    g = goal_of(7000, [decided(900, 0, text="喂"), ev.CallerLate(S(2600), 1, S(2100), S(500))])
    assert g is not None
    d = dataclasses.asdict(g)
    d["from_a_newer_writer"] = 1
    d["decisions"][0]["also_new"] = True
    assert goal_from_json(d) == g


def test_rates_count_verdicts_only_and_times_every_report():
    assert goal_values(None) == {k: [] for k in goal_values(CallerGoal(None))}
    assert goal_values(CallerGoal("yes", turns=3, time_ms=9000.0)) == {
        "goal_met": [1.0],
        "goal_met_or_partly": [1.0],
        "goal_time_ms": [9000.0],
        "goal_turns": [3.0],
        "caller_late_ms": [0.0],
    }
    partly = goal_values(CallerGoal("partly", turns=2, time_ms=1.0))
    assert partly["goal_met"] == [0.0] and partly["goal_met_or_partly"] == [1.0]
    unknown = goal_values(CallerGoal("unknown", turns=4, time_ms=5.0, caller_late_ms=70.0))
    assert (
        unknown["goal_met"] == [] and unknown["goal_time_ms"] == [5.0] and unknown["caller_late_ms"] == [70.0]
    )


def test_the_summary_block_counts_verdicts_and_pools_times_turns_and_waits():
    goals = [
        CallerGoal("yes", turns=2, time_ms=10000.0, caller_late_ms=200.0, caller_fallbacks=1),
        CallerGoal("partly", turns=4, time_ms=20000.0, caller_rejected=2),
        CallerGoal("no", turns=6, time_ms=30000.0),
        CallerGoal("unknown", turns=3, time_ms=40000.0),
        CallerGoal(None, caller_late_ms=600.0),
        None,  # a scripted call: left out
    ]
    block = goal_summary(goals)
    b = block.to_json()
    assert b["calls"] == 5 and b["calls_with_verdict"] == 3
    assert b["verdicts"] == {"yes": 1, "partly": 1, "no": 1, "unknown": 2}
    assert b["goal_met_rate"] == pytest.approx(1 / 3) and b["goal_met_or_partly_rate"] == pytest.approx(2 / 3)
    assert b["turns_mean"] == 3.75 and b["turns_p50"] == 3.5
    assert b["time_p50_ms"] == 25000.0 and b["time_p90_ms"] == pytest.approx(37000.0)
    assert b["caller_late_ms_total"] == 800.0 and b["caller_late_p90_ms"] == pytest.approx(440.0)
    assert (b["caller_fallbacks"], b["caller_rejected"], b["caller_late_waits"]) == (1, 2, 0)
    empty_block = goal_summary([])
    empty = empty_block.to_json()
    assert empty["calls"] == 0 and empty["goal_met_rate"] is None and empty["time_p50_ms"] is None
    line = goal_line(block)
    assert "met 1/3 (33%)" in line and "unknown 2" in line and "25.0 s p50" in line
    assert "0.8 s late" in line and "not counted against the assistant" in line
    assert "met 0/0 (-)" in goal_line(empty_block)
