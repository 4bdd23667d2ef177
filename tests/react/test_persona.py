"""Personas: by name, or seeded per call; harassment callers are scammers."""

import pytest

from voice.errors import ConfigError
from voice.react.persona import CALM, PERSONAS, choose_persona


def test_a_named_persona_is_that_one_and_an_unknown_name_is_refused():
    assert choose_persona("terse", "d", "takeout", 0) is PERSONAS["terse"]
    with pytest.raises(ConfigError, match="unknown persona"):
        choose_persona("grumpy", "d", "takeout", 0)


def test_random_is_seeded_by_dialogue_and_seed_and_varies():
    picks = {choose_persona("random", f"d-{i}", "delivery", 0).name for i in range(40)}
    assert picks == set(CALM)
    assert choose_persona("random", "d-1", "taxi", 5) == choose_persona("random", "d-1", "taxi", 5)


def test_harassment_callers_insist():
    assert choose_persona("random", "h-1", "harassment", 3).name == "scammer"
    assert PERSONAS["impatient"].interrupt_after_ms is not None
