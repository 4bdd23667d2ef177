import pytest

from voice.metrics.scoring.vocabulary import DIMENSIONS, JUDGED, DimensionScore, not_scored


def test_the_seven_dimensions_in_callbench_order_and_rhythm_is_measured_not_judged():
    assert DIMENSIONS == (
        "semantic_understanding",
        "context_use",
        "active_guidance",
        "response_quality",
        "preset_compliance",
        "dialogue_rhythm",
        "safety",
    )
    assert "dialogue_rhythm" not in JUDGED and len(JUDGED) == 6


def test_a_score_is_one_to_five_or_not_scored_with_a_reason():
    assert DimensionScore(5, "conveys every key point").score == 5
    assert not_scored("no annotation for this turn") == DimensionScore(None, "no annotation for this turn")
    for bad in (0, 6):
        with pytest.raises(ValueError, match="1-5"):
            DimensionScore(bad, "made up")
