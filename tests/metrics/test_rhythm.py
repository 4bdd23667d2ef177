import pytest

from voice.metrics.call_metrics import BargeIn, TurnMetrics
from voice.metrics.rhythm import score_turn


def t(latency, overlap=0.0, barge=None, pause=None, bc=None):
    return TurnMetrics(
        turn=0,
        mode="after_reply",
        text="",
        caller_start_ms=0,
        caller_end_ms=1000,
        reply_onset_ms=None if latency is None else 1000 + latency,
        latency_ms=latency,
        overlap_ms=overlap,
        barge_in=barge,
        pause_takeover=pause,
        backchannel_carried_on=bc,
    )


@pytest.mark.parametrize(
    ("latency", "score"),
    [(200, 5), (500, 5), (501, 4), (1000, 4), (1800, 3), (3999, 2), (4001, 1), (None, 1)],
)
def test_gap_bands(latency, score):
    assert score_turn(t(latency)).score == score


def test_talk_over_penalties():
    assert score_turn(t(-100, overlap=100)).score == 2
    assert score_turn(t(-800, overlap=800)).score == 1


@pytest.mark.parametrize(("stop", "score"), [(250, 5), (550, 4), (900, 3), (1400, 2), (1600, 1), (None, 1)])
def test_yielding_to_barge_ins_is_rewarded(stop, score):
    b = BargeIn(at_ms=0, active=True, stop_latency_ms=stop, success=stop is not None and stop <= 1500)
    assert score_turn(t(300, barge=b)).score == score


def test_an_inactive_barge_in_does_not_cap_the_score():
    b = BargeIn(at_ms=0, active=False, stop_latency_ms=0.0, success=False)
    assert score_turn(t(300, barge=b)).score == 5


def test_pause_and_backchannel_penalties_floor_at_one():
    assert score_turn(t(300, pause=True)).score == 3
    assert score_turn(t(300, bc=False)).score == 4
    r = score_turn(t(3000, pause=True, bc=False))
    assert r.score == 1 and len(r.reasons) == 3
    assert score_turn(t(300, pause=False, bc=None)).reasons == ()
