"""``--caller``: scripted means none; openai:MODEL a run-wide reactive caller with its settings."""

import pytest

from tests.records import short_delivery
from voice.app.run.jobs import CallJob
from voice.app.run.runner import RunSettings
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError
from voice.react.caller import MIN_TURNS, parse_caller


def test_scripted_is_no_reactive_caller_and_a_bad_spec_says_what_is_expected():
    assert parse_caller("scripted") is None
    with pytest.raises(ConfigError, match=r"scripted \(the default\) or openai:MODEL"):
        parse_caller("gpt-4")
    with pytest.raises(ConfigError, match="unknown persona"):
        parse_caller("openai:m", persona="grumpy")
    for early in (10, 700):  # under a frame, or not before the reply is taken as over
        with pytest.raises(ConfigError, match="early_ms must be 20 ms"):
            parse_caller("openai:m", early_ms=early)


def test_the_caller_is_part_of_the_fingerprint_and_of_each_calls_labels(tmp_path):
    caller = parse_caller("openai:m", base_url="http://127.0.0.1:9/v1", persona="terse")
    assert caller is not None and caller.llm.timeout_s == 15.0 and caller.llm.output_attempts == 2
    d = parse_dialogue(short_delivery("d-1"), "mem", 1)
    settings = RunSettings(tmp_path, "memory", "memory", caller=caller)
    fp = settings.fingerprint()
    assert fp["caller"] == "openai:m" and fp["persona"] == "terse" and fp["caller_prompt"]
    labels = settings.labels(CallJob("d-1", d))
    assert labels["caller"] == "openai:m" and labels["persona"] == "terse"
    assert "caller" not in RunSettings(tmp_path, "memory", "memory").fingerprint()
    assert caller.turns_for(d) == MIN_TURNS
