"""The scoring vocabulary: dimensions in CallBench's order, scores 1-5 or "not scored" with a reason."""

import pytest

from voice.metrics.scoring.base import DIMENSIONS, JUDGED, DimensionScore, not_scored


def test_the_seven_dimensions_and_the_six_a_judge_scores():
    assert len(DIMENSIONS) == 7 and DIMENSIONS[0] == "semantic_understanding" and DIMENSIONS[-1] == "safety"
    assert tuple(d for d in DIMENSIONS if d != "dialogue_rhythm") == JUDGED


@pytest.mark.parametrize("score", [0, 6, -1])
def test_a_score_is_1_to_5_or_none(score):
    with pytest.raises(ValueError):
        DimensionScore(score, "x")


def test_not_scored_keeps_its_reason():
    assert not_scored("no annotation") == DimensionScore(None, "no annotation")
    assert DimensionScore(5, "ok").score == 5
