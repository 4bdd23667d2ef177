"""Pure parts of scripts/bench_stages (the benchmark prints figures)."""

from __future__ import annotations

from typing import Any

import pytest

from voice.app.benchmarks.stages import decompose, format_report, summarize
from voice.core import events as ev
from voice.metrics.call_metrics import CallMetrics, TurnMetrics


def log(t: int, **payload: Any) -> ev.ControlReceived:
    return ev.ControlReceived(t, "log", payload)


def turn(i: int, start: float, end: float, onset: float | None) -> TurnMetrics:
    latency = onset - end if onset is not None else None
    return TurnMetrics(i, "after_reply", "", start, end, onset, latency, 0.0)


def test_a_turn_is_split_into_stages_on_the_callers_timeline_with_the_remainder_as_transport():
    metrics = CallMetrics(
        "c", "d", "completed", False, 20_000.0, 800.0,
        turns=[turn(0, 1000, 3000, 4500), turn(1, 6000, 8000, 9000), turn(2, 11_000, 12_000, None)],
    )  # fmt: skip
    events = [
        log(100, kind="greeting", text="您好", end_call=False),
        log(57_900, kind="caller", text="喂"),
        log(57_950, kind="reply", text="好的", end_call=False),  # the policy's own logs come first
        log(
            58_000,
            kind="turn",
            vad_stop_at_ms=3420.0,
            turn_end_at_ms=3900.0,
            answer_at_ms=3910.0,
            asr_wait_ms=0.0,
            policy_ms=0.5,
            asr=[{"audio_secs": 0.5, "asr_secs": 0.1}, {"audio_secs": 2.0, "asr_secs": 0.3}],
        ),
        log(62_000, kind="tts", text="好的", at_ms=3910.5, first_audio_ms=300.0, first_audio_at_ms=4060.0),
        log(66_000, kind="speaking", at_ms=4150.0),
        # turn 1: the assistant ended "its" turn inside the caller's speech (a pause): not decomposable
        log(119_900, kind="caller", text="x"),
        log(120_000, kind="turn", turn_end_at_ms=7000.0, asr_wait_ms=0.0, policy_ms=0.1),
        ev.AudioReceived(130_000, samples=320, arrival=130_000, start=130_000),
    ]
    (row,) = decompose("c", events, metrics)
    assert (row.turn, row.latency, row.turn_end, row.vad_stop, row.asr) == (0, 1500.0, 900.0, 420.0, 300.0)
    assert row.asr_wait == pytest.approx(3910 - 3900)
    assert (row.policy, row.tts_first_audio, row.asr_all) == (0.5, 300.0, pytest.approx(400.0))
    assert row.transport == pytest.approx(1500 - (3910 - 3000) - 0.5 - 300)
    stages = [row.turn_end, row.asr_wait, row.policy, row.tts_first_audio, row.transport]
    assert sum(stages) == pytest.approx(row.latency)  # the stages add up to what the caller measured
    assert (row.answer_to_sent, row.sent_to_heard) == (240.0, 350.0)
    summary = summarize([row, row])
    assert summary["turn_end"] == {"p50": 900.0, "p90": 900.0, "n": 2.0}
    text = format_report([row], summary)
    assert "transport+" in text and "p90" in text


def test_a_turn_without_tts_or_speaking_logs_has_no_remainder():
    metrics = CallMetrics("c", "d", "completed", False, 9000.0, None, turns=[turn(0, 0, 2000, 3000)])
    events = [log(40_000, kind="turn", turn_end_at_ms=2600.0, vad_stop_at_ms=1500.0, policy_ms=1.0)]
    (row,) = decompose("c", events, metrics)
    assert row.tts_first_audio is None and row.transport is None and row.sent_to_heard is None
    assert row.vad_stop is None  # the only VAD stop came before the caller's speech ended
    assert (row.turn_end, row.asr_wait) == (600.0, 0.0)
    assert summarize([row])["transport"] == {"p50": None, "p90": None, "n": 0.0}


def test_a_slower_machine_adds_the_compute_that_no_longer_fits_before_the_turn_end():
    from voice.app.benchmarks.stages import TurnStages

    base = {"call_id": "c", "turn": 0, "latency": 400.0, "turn_end": 330.0, "vad_stop": 240.0, "policy": 1.0}
    more = {"answer_to_sent": 5.0, "sent_to_heard": 12.0, "asr_all": 300.0, "transport": 49.0}
    hidden = TurnStages(**base, **more, asr=100.0, asr_wait=0.0, tts_first_audio=20.0, asr_slack=60.0)
    # ×2: 100 ms more ASR, 60 of it still before the turn's end; policy and TTS twice as long
    assert hidden.scaled(2.0) == pytest.approx(400 + 40 + 1 + 20)
    waited = TurnStages(**base, **more, asr=100.0, asr_wait=30.0, tts_first_audio=20.0, asr_slack=-30.0)
    assert waited.scaled(2.0) == pytest.approx(400 + 100 + 21)  # on the critical path: all of it
    assert summarize([hidden, waited], 2.0)["scaled"]["p50"] == pytest.approx((461 + 521) / 2)
