"""Metrics from recordings of calls against a ground-truth assistant (virtual time, exact figures)."""

import dataclasses
import json

import numpy as np
import pytest

from tests.fakes import ReferenceBot, plan, reference, turn
from voice.core import events as ev
from voice.core.call import AssistantControl, CallCore
from voice.metrics.measure import (
    CallMetrics,
    TurnMetrics,
    heard_span,
    measure,
    merge_segments,
    overlap,
    reply_spans_ms,
)
from voice.recording import Recording


def record(core: CallCore, bot: ReferenceBot, **meta) -> Recording:
    caller, heard = [], []
    bot.start()
    while True:
        for at, item in bot.due(core.now, core.now + 320):
            core.receive(item, at)
        tick = core.tick()
        caller.append(tick.caller)
        heard.append(tick.heard)
        bot.frame(tick.caller)
        if tick.done:
            break
    return Recording(
        "c",
        np.concatenate(caller),
        np.concatenate(heard),
        list(core.events),
        dict(meta),
    )


@pytest.mark.parametrize("reply_ms", [350.0, 612.5, 1500.0])
def test_response_latency_matches_the_ground_truth(reply_ms):
    rec = record(CallCore(plan(turn(0), turn(1))), reference(reply_ms=reply_ms, greeting_ms=250))
    m = measure(rec)
    assert [t.latency_ms for t in m.turns] == [pytest.approx(reply_ms, abs=1.0)] * 2
    assert m.first_word_ms == pytest.approx(250, abs=1.0)
    assert m.turns_completed == 2 and m.outcome == "completed" and not m.failed
    assert all(t.overlap_ms == 0 for t in m.turns)
    assert m.turns[0].reference == "ref 0"  # the plan's reference, logged by the core


@pytest.mark.parametrize("stop_ms", [120.0, 400.0])
def test_barge_in_stop_latency_matches_the_ground_truth(stop_ms):
    rec = record(
        CallCore(plan(turn(0), turn(1, barge_in_ms=700))),
        reference(reply_len_ms=4000, stop_ms=stop_ms),
    )
    m = measure(rec)
    b = m.turns[1].barge_in
    assert b is not None and b.active and b.success
    assert b.stop_latency_ms == pytest.approx(stop_ms, abs=1.0)
    assert m.turns[1].overlap_ms == pytest.approx(stop_ms, abs=1.0)  # talk-over until it stopped
    assert m.turns[1].latency_ms is not None and m.turns[1].latency_ms > 0  # then it answered


def test_an_assistant_that_never_stops_fails_the_barge_in():
    rec = record(
        CallCore(plan(turn(0), turn(1, barge_in_ms=500))), reference(reply_len_ms=6000, stop_ms=None)
    )
    b = measure(rec).turns[1].barge_in
    assert b is not None and b.active and not b.success
    assert b.stop_latency_ms is not None and b.stop_latency_ms > 1500


def test_no_reply_gives_no_latency_and_a_failed_call():
    rec = record(
        CallCore(plan(turn(0), turn(1), response_timeout_ms=1500)),
        reference(greeting_ms=None, reply_ms=10**9),
    )
    m = measure(rec)
    assert m.failed and m.outcome == "assistant_silent"
    assert m.first_word_ms is None and all(t.latency_ms is None for t in m.turns)


def test_pause_takeover_is_detected_only_when_the_assistant_talks_into_the_pause():
    # endpoint 300 ms < pause 1500 ms: this assistant takes the turn inside the pause
    eager = record(CallCore(plan(turn(0, 2000, pause=(800, 1500)))), reference(endpoint_ms=300, reply_ms=350))
    patient = record(
        CallCore(plan(turn(0, 2000, pause=(800, 1500)))), reference(endpoint_ms=1800, reply_ms=1900)
    )
    assert measure(eager).turns[0].pause_takeover is True
    assert measure(patient).turns[0].pause_takeover is False


def test_every_late_piece_of_a_streamed_turn_is_a_pause_of_the_caller_not_only_the_longest():
    """A reactive turn voiced clause by clause keeps one gap as its ``pause``; the others are its
    ``caller_late`` events inside it, and they are the caller's silence just the same."""
    eager = record(CallCore(plan(turn(0, 2000, pause=(800, 1500)))), reference(endpoint_ms=300, reply_ms=350))
    [spoke] = [e for e in eager.events if isinstance(e, ev.CallerSpoke)]
    assert spoke.pause is not None
    p0, p1 = spoke.pause
    unpaused = dataclasses.replace(spoke, pause=None)
    late = ev.CallerLate(p1, 0, p0, p1 - p0)  # the same gap, as a late piece would log it
    as_late = dataclasses.replace(
        eager, events=[unpaused if e is spoke else e for e in eager.events] + [late]
    )
    no_gap = dataclasses.replace(eager, events=[unpaused if e is spoke else e for e in eager.events])
    with_late, without = measure(as_late), measure(no_gap)
    assert with_late.turns[0].pause_takeover is True and without.turns[0].pause_takeover is None
    assert with_late.overlap_ms < without.overlap_ms  # the assistant spoke in the caller's silence
    assert with_late.overlap_ms == measure(eager).overlap_ms  # as if the gap were the turn's pause


def test_what_the_assistant_logs_hearing_is_kept_per_caller_turn():
    # its "ASR" of the eager turn: the half said before the pause, then the rest, both in turn 0
    rec = record(
        CallCore(plan(turn(0, 2000, pause=(800, 1500)), turn(1))),
        reference(endpoint_ms=300, reply_ms=350, heard_texts=("快递到了，", "放哪里？", "好的")),
    )
    m = measure(rec)
    assert [t.assistant_asr_text for t in m.turns] == ["快递到了， / 放哪里？", "好的"]
    silent = measure(record(CallCore(plan(turn(0))), reference()))
    assert silent.turns[0].assistant_asr_text is None  # it sent no log: nothing claimed


def test_the_reason_a_call_ended_is_kept_in_words():
    rec = record(
        CallCore(plan(turn(0), turn(1), response_timeout_ms=1500)),
        reference(greeting_ms=None, reply_ms=10**9),
    )
    m = measure(rec)
    assert m.outcome == "assistant_silent" and m.detail == "2 replies in a row never came"


def test_the_records_a_bot_sent_over_the_cap_are_counted_in_the_metrics():
    core = CallCore(plan(turn(0)))
    for _ in range(1200):
        core.receive(AssistantControl("clear"), at=0)
    rec = record(core, reference())
    assert measure(rec).records_capped == {
        "clear": {"received": 1200, "kept": 1000},
        "control:clear": {"received": 1200, "kept": 1000},
    }
    assert measure(record(CallCore(plan(turn(0))), reference())).records_capped == {}


def test_helpers():
    assert merge_segments([(0, 10), (15, 20), (40, 50)], gap=6) == [(0, 20), (40, 50)]
    assert overlap([(0, 10), (20, 30)], 5, 25) == 10


def test_a_reply_is_heard_from_its_onset_to_the_last_speech_that_starts_before_the_next_turn():
    m = CallMetrics(
        "c", "d", "completed", False, 10_000.0, None,
        turns=[
            TurnMetrics(0, "after_reply", "", 1000.0, 2000.0, 2400.0, 400.0, 0.0),
            TurnMetrics(1, "after_reply", "", 5000.0, 6000.0, None, None, 0.0),
            TurnMetrics(2, "after_reply", "", 8000.0, 8500.0, 8800.0, 300.0, 0.0),
        ],
        assistant_speech_ms=[(2400.0, 3000.0), (3300.0, 4100.0), (4990.0, 5200.0), (8800.0, 9900.0)],
    )  # fmt: skip
    assert reply_spans_ms(m) == [(2400.0, 5200.0), None, (8800.0, 9900.0)]
    assert heard_span(m.assistant_speech_ms, None, 5000.0) is None
    assert reply_spans_ms(CallMetrics("c", "d", "assistant_hangup", False, 900.0, 80.0)) == []


def test_a_reactive_calls_goal_survives_its_json_form():
    """Resumed runs, reports and compare rebuild metrics from JSON: the goal comes back as a CallerGoal."""
    from tests.reactive_runs import S, decided, goal_recording
    from voice.core import events as ev
    from voice.metrics.goal import CallerGoal
    from voice.metrics.model.call_record import call_to_json, metrics_from_json

    extra = [decided(900, 0, text="喂"), ev.CallerLate(S(2000), 1, S(1900), S(100))]
    m = measure(goal_recording(4000, [*extra, ev.GoalReported(S(3000), "no", "打错了", 1)]))
    back = metrics_from_json(json.loads(json.dumps(call_to_json(m, {"scenario": "x"}))))
    assert isinstance(back.goal, CallerGoal) and back.goal.met == "no" and back == m
    assert metrics_from_json(call_to_json(measure(goal_recording(4000, [])))).goal is None
