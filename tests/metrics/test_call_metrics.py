"""The measured figures as records (``voice/metrics/call_metrics.py``): what a call's properties derive."""

from __future__ import annotations

from typing import Any

from voice.metrics.call_metrics import BargeIn, CallMetrics, TurnMetrics
from voice.metrics.goal import CallerGoal


def turn(n: int, onset: float | None, rhythm: int | None, barge: BargeIn | None = None) -> TurnMetrics:
    latency = None if onset is None else onset - 1000.0 * n - 500.0
    return TurnMetrics(
        n, "normal", "x", 1000.0 * n, 1000.0 * n + 500, onset, latency, 0.0, barge, rhythm=rhythm
    )


def call(turns: list[TurnMetrics], *, planned: int, failed: bool = False, **kw: Any) -> CallMetrics:
    return CallMetrics("c", "d", "completed", failed, 9000.0, 300.0, turns, planned, **kw)


def test_a_call_is_served_when_every_owed_turn_got_a_reply() -> None:
    m = call([turn(0, 800.0, 5), turn(1, 1900.0, 3)], planned=2)
    assert m.served and m.turns_completed == 2 and m.turns_of_call == 2
    assert m.rhythm == 4.0 and m.latencies_ms == [300.0, 400.0]
    unanswered = call([turn(0, 800.0, 5), turn(1, None, 1)], planned=2)
    assert not unanswered.served and unanswered.turns_completed == 1


def test_a_failed_call_owes_the_turns_it_never_reached_but_not_those_the_assistant_cut() -> None:
    assert call([turn(0, 800.0, 5)], planned=3, failed=True).turns_of_call == 3
    assert call([turn(0, 800.0, 5)], planned=3, failed=True, caller_turns_cut=2).turns_of_call == 1
    assert call([turn(0, 800.0, 5)], planned=3).turns_of_call == 1  # a call that ran owes what was said
    assert not call([], planned=0).served  # answered nothing: served no one


def test_only_active_barge_ins_count_and_a_goal_read_back_from_json_is_typed() -> None:
    active = BargeIn(1200.0, True, 250.0, True)
    idle = BargeIn(1300.0, False, None, False)
    m = call([turn(0, 800.0, 4, active), turn(1, 1900.0, None, idle)], planned=2, goal={"met": "yes"})
    assert m.barge_ins == [active] and m.rhythm == 4.0
    assert isinstance(m.goal, CallerGoal) and m.goal.met == "yes"
