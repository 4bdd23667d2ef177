"""Scoring fidelity calls: each figure next to its truth, delivery split from measurement, the statistics."""

import numpy as np
import pytest

from server.assistants.behaviour import ReferenceBehaviour, reply_voice
from voice.app.benchmarks.fidelity.score import (
    DELIVERY,
    CallResult,
    Case,
    Pair,
    Summary,
    compare,
    format_summary,
    format_transports,
    summarize,
)
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.core.events import CallEvent
from voice.recording import Recording

S = ms_to_samples
BEHAVIOUR = ReferenceBehaviour(600, None, True, False, greeting_ms=300, reply_len_ms=1000)
CASE = Case(BEHAVIOUR, 0, 0)


def reply(arrival_ms: float, heard_at_ms: float) -> list[CallEvent]:
    """A reply's first chunk arriving, then the reference's report of when it was to be heard."""
    log = {"ref": "reply", "heard_at": S(heard_at_ms), "chunk_at": S(heard_at_ms)}
    at = S(arrival_ms)
    return [ev.AudioReceived(at, samples=320, arrival=at, start=at), ev.ControlReceived(at, "log", log)]


def call(*extra: CallEvent, outcome: str = "completed", failed: bool = False) -> CallResult:
    """The greeting heard on time at 300 ms; one caller turn 2000-3000 ms; its reply due at 3600 ms (D 600)
    but arriving, and so heard, 2 ms late."""
    heard = np.zeros(S(6000), np.int16)
    voice = reply_voice(BEHAVIOUR.reply_len_ms)
    heard[S(300) : S(300) + len(voice)] = voice
    heard[S(3602) : S(3602) + len(voice)] = voice
    turn = ev.CallerSpoke(S(2000), 0, "after_reply", S(2000), speech_start=S(2000), speech_end=S(3000))
    events = [*reply(300, 300), turn, *reply(3602, 3600), *extra, ev.CallEnded(S(6000), outcome, failed)]
    rec = Recording("x", np.zeros_like(heard), heard, events)
    return CallResult(CASE, rec, outcome, failed, 1.5)


def rows(pairs: list[Pair]) -> list[tuple[str, int | None, object, object]]:
    return [(p.metric, p.turn, p.measured, p.truth) for p in pairs]


def test_a_late_arrival_is_the_deliverys_error_and_measure_alone_has_none():
    assert rows(compare(call())) == [
        ("first word", None, 300.0, 300.0),
        ("first word (vs arrival)", None, 300.0, 300.0),
        ("response latency", 0, 602.0, 600.0),  # 2 ms off the truth ...
        ("response latency (vs arrival)", 0, 602.0, 602.0),  # ... all of it the arrival's
        ("answered", 0, True, True),
        ("false starts", 0, 0, 0),
        ("reply arrival - due", None, 300.0, 300.0),
        ("reference schedule - spec", None, 300.0, 300.0),
        ("reply arrival - due", None, 3602.0, 3600.0),
        ("reference schedule - spec", None, 3600.0, 3600.0),
    ]
    assert {p.case for p in compare(call())} == {CASE.name}


def test_a_clear_is_compared_with_when_it_was_due_and_a_held_reply_not_with_the_spec():
    held = ev.ControlReceived(S(4990), "log", {"ref": "stop", "why": "caller_resumed", "at": S(5000)})
    cleared = ev.ControlReceived(S(5003), "log", {"ref": "clear", "at": S(5000)})
    extra = [held, *reply(5000, 5000), ev.PlayoutCleared(S(5003)), cleared]
    delivery = [r for r in rows(compare(call(*extra))) if r[0] in DELIVERY]
    assert delivery == [
        ("reply arrival - due", None, 300.0, 300.0),
        ("reference schedule - spec", None, 300.0, 300.0),
        ("reply arrival - due", None, 3602.0, 3600.0),
        ("reference schedule - spec", None, 3600.0, 3600.0),
        ("reply arrival - due", None, 5000.0, 5000.0),  # held at 5000: no schedule row
        ("clear arrival - due", None, 5003.0, 5000.0),
    ]


def pair(metric: str, measured: object, truth: object, case: str = "c") -> Pair:
    return Pair(metric, case, 0, measured, truth)


def test_numeric_figures_are_absolute_error_percentiles_with_a_signed_bias():
    pairs = [
        pair("response latency", m, t)
        for m, t in ((602, 600), (597, 600), (610, 600), (None, None), (None, 600))
    ]
    r = Summary(1, [], [], 0.0, pairs).numeric("response latency")
    assert r == {
        "n": 3,
        "p50": 3.0,
        "p99": pytest.approx(9.86),
        "max": 10.0,
        "bias": 2.0,
        "one_sided_none": 1,
    }
    assert Summary(0, [], [], 0.0).numeric("response latency")["p50"] is None


def test_a_classification_is_right_only_on_exact_agreement_and_none_is_a_value_of_its_own():
    pairs = [pair("answered", m, t) for m, t in ((True, True), (False, True), (None, None), (None, False))]
    r = Summary(1, [], [], 0.0, pairs).boolean("answered")
    assert (r["n"], r["correct"], r["accuracy"]) == (4, 2, 0.5)
    assert dict(r["wrong"]) == {"True->False": 1, "False->None": 1}


def test_the_worst_errors_put_misclassifications_first_and_leave_out_exact_figures_and_delivery():
    pairs = [pair("response latency", 603, 600, "a"), pair("answered", False, True, "b"),
             pair("first word", 300, 300, "c"), pair("reply arrival - due", 3700, 3600, "d"),
             pair("barge-in stop latency", None, 120, "e"), pair("first word", 310, 300, "f")]  # fmt: skip
    worst = Summary(6, [], [], 0.0, pairs, {"b": 12.34}).worst()
    assert [w["case"] for w in worst] == ["b", "e", "f", "a"]  # a tie keeps the pairs' order
    assert next(w for w in worst if w["case"] == "b")["caller_late_ms"] == 12.3


def test_the_summary_counts_failed_calls_and_prints_and_serializes_every_metric():
    s = summarize([call(), call(outcome="assistant_silent", failed=True)], ["D=250: too soon"], wall_s=12.0)
    assert (s.calls, s.failed, s.skipped) == (2, [f"{CASE.name}: assistant_silent"], ["D=250: too soon"])
    assert s.stalls == {CASE.name: 1.5}
    j = s.to_json()
    assert j["classification"]["answered"]["correct"] == 2 and j["caller_pacing_max_late_ms"] == 1.5
    assert set(j["abs_error_ms"]) == {"first word", "response latency", "barge-in stop latency",
                                      "first word (vs arrival)", "response latency (vs arrival)"}  # fmt: skip
    assert set(j["delivery_ms"]) == set(DELIVERY)
    text = format_summary(s)
    assert text.startswith("transport: pcm; calls: 2, failed: 1, infeasible behaviours skipped: 1, wall 12 s")
    for line in (
        "response latency                   2     2.00",
        "answered                           2        2",
    ):
        assert line in text, text
    assert text.endswith(f"failed calls:\n  {CASE.name}: assistant_silent")


def test_a_transport_constant_is_taken_out_before_the_error_after_it():
    """Every reply 240 ms late but one at 250 (a constant, and jitter): constant 240, error 0-10."""
    late = [Pair("response latency", f"c{i}", 1, 840.0 + (10 if i == 4 else 0), 600.0) for i in range(5)]
    s = Summary(5, [], [], 1.0, late, transport="webrtc")
    row = s.after_constant("response latency")
    assert (row["n"], row["constant"], row["p50"], row["max"]) == (5, 240.0, 0.0, 10.0)
    assert s.to_json()["after_constant_ms"]["response latency"] == row
    assert s.after_constant("first word")["constant"] is None
    table = format_transports([s])
    assert "webrtc    response latency            5     240.0     0.0" in table, table
