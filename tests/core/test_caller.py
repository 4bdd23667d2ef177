"""The caller plan's types (voice.core.caller): think times, their settings, the seeded generator."""

import random

import pytest

from voice.core.audio import ms_to_samples
from voice.core.caller import CallerTiming, PlannedTurn, caller_rng
from voice.errors import ConfigError


def test_lognormal_think_times_centre_on_the_median_and_respect_the_clip():
    timing = CallerTiming(think_median_ms=400, think_sigma=0.4, think_min_ms=150, think_max_ms=1500)
    rng = random.Random(0)
    values = sorted(timing.sample_think_ms(rng) for _ in range(4001))
    assert 370 < values[2000] < 430
    assert values[0] >= 150 and values[-1] <= 1500


def test_bad_timing_settings_are_config_errors():
    with pytest.raises(ConfigError):
        CallerTiming(think_distribution="gamma")
    with pytest.raises(ConfigError):
        CallerTiming(think_min_ms=900, think_max_ms=100)


def test_the_timing_generator_is_the_same_for_a_dialogue_and_seed_and_differs_otherwise():
    draws = [caller_rng(d, seed).random() for d, seed in (("a", 1), ("a", 1), ("a", 2), ("b", 1))]
    assert draws[0] == draws[1] and len(set(draws)) == 3


def test_a_planned_turn_writes_its_timing_decisions_to_the_event_log():
    import numpy as np

    audio = np.zeros(ms_to_samples(600), dtype=np.int16)
    turn = PlannedTurn(
        index=1,
        turn_index=3,
        text="好的",
        audio=audio,
        speech_start=ms_to_samples(100),
        speech_end=ms_to_samples(500),
        think=ms_to_samples(250),
        think_source="script",
        barge_in=ms_to_samples(900),
        backchannel_text="嗯",
        backchannel_at=ms_to_samples(300),
    )
    event = turn.planned("放门口就行。")
    assert (event.dialogue_turn, event.audio_samples, event.think_source) == (3, len(audio), "script")
    assert event.barge_in == ms_to_samples(900) and event.reference == "放门口就行。"
    assert event.backchannel is not None and event.backchannel.at == ms_to_samples(300)
