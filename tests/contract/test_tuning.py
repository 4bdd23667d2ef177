"""``--set KEY=VALUE``: parsed once where it enters into a typed, checked :class:`Tuning`."""

from __future__ import annotations

import pytest

from voice.contract.tuning import TUNABLE, TURN_MODELS, Tuning, TurnSettings, parse_tuning
from voice.errors import ConfigError


def test_pairs_become_typed_values_and_canonical_pairs() -> None:
    tuning = parse_tuning(["vad_stop_secs=0.3", "turn-model=silence", "turn_max_silence_secs = 1.5"])
    assert (tuning.turns.vad_stop_secs, tuning.turns.turn_model) == (0.3, "silence")
    assert tuning.turns.turn_max_silence_secs == 1.5
    assert tuning.pairs() == ("vad_stop_secs=0.3", "turn_model=silence", "turn_max_silence_secs=1.5")
    assert tuning.args("--set") == ["--set", "vad_stop_secs=0.3", "--set", "turn_model=silence",
                                    "--set", "turn_max_silence_secs=1.5"]  # fmt: skip
    assert parse_tuning(tuning.pairs()) == tuning  # what the server reads back is what was parsed
    assert parse_tuning(["hold_after_secs=0", "vad_confidence=0.65"]).pairs() == (
        "hold_after_secs=0", "vad_confidence=0.65",
    )  # fmt: skip  # as typed: a run's fingerprint from before still matches


def test_a_later_pair_wins_and_is_given_once() -> None:
    tuning = parse_tuning(["vad_stop_secs=0.3", "turn_model=silence", "vad_stop_secs=0.5"])
    assert tuning.turns.vad_stop_secs == 0.5
    assert tuning.pairs() == ("turn_model=silence", "vad_stop_secs=0.5")


def test_nothing_given_changes_nothing() -> None:
    assert not parse_tuning([]) and parse_tuning([]) == Tuning() and Tuning().args() == []
    assert Tuning().turns == TurnSettings()
    assert parse_tuning(["turn_model=lexical"])  # given, even if it is the default


def test_the_asr_window_is_seconds_or_full_and_the_prompt_any_text() -> None:
    assert parse_tuning(["asr_audio_context_s=2"]).asr_audio_context_s == 2.0
    full = parse_tuning(["asr_audio_context_s=full"])
    assert full.asr_audio_context_s is None and full.pairs() == ("asr_audio_context_s=full",)
    assert parse_tuning(["asr_audio_context_s=None"]).asr_audio_context_s is None
    assert parse_tuning(["asr_prompt=以下是普通话的句子。"]).asr_prompt == "以下是普通话的句子。"


@pytest.mark.parametrize(
    ("pair", "says"),
    [
        ("vad_stop_secs", "expected KEY=VALUE"),
        ("vad_stop_sec=0.3", r"unknown setting 'vad_stop_sec' \(did you mean vad_stop_secs\?\)$"),
        ("port=1", r"unknown setting 'port' \(one of vad_start_secs,"),
        ("vad_stop_secs=soon", "vad_stop_secs takes a number of seconds"),
        ("vad_confidence=high", "vad_confidence takes a number$"),
        ("vad_stop_secs=9", r"vad_stop_secs=9.0 is not in 0..5 s$"),
        ("turn_model=psychic", "turn_model 'psychic' is not one of running, lexical, silence, smart-turn$"),
        ("turn_max_silence_secs=0", r"turn_max_silence_secs=0.0 is not in 0.1..10 s$"),
        ("asr_audio_context_s=31", r"asr_audio_context_s=31.0 is not in 0..30 s \(or full\)$"),
    ],
)
def test_a_bad_pair_is_one_line_naming_the_option_the_pair_and_what_is_wrong(pair: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        parse_tuning([pair], option="--assistant-set")
    assert str(caught.value).startswith(f"--assistant-set {pair!r}: ") and "\n" not in str(caught.value)
    with pytest.raises(ConfigError) as again:
        parse_tuning([pair])
    assert str(again.value).startswith(f"--set {pair!r}: ")  # serve's name for it


def test_the_turn_group_checks_every_value_and_names_each_one() -> None:
    with pytest.raises(ConfigError, match=r"vad_start_secs=-1 is not in 0..5 s; vad_confidence=1.0"):
        TurnSettings(vad_start_secs=-1, vad_confidence=1.0)
    with pytest.raises(ConfigError, match="turn_stop_timeout_secs must be positive"):
        TurnSettings(turn_stop_timeout_secs=0)
    with pytest.raises(ConfigError, match="turn_model 'psychic'"):
        TurnSettings(turn_model="psychic")  # type: ignore[arg-type]


def test_the_tunable_keys_are_the_trade_off_settings() -> None:
    assert TUNABLE[:2] == ("vad_start_secs", "vad_stop_secs") and TUNABLE[-2:] == (
        "asr_audio_context_s", "asr_prompt",
    )  # fmt: skip
    assert "vad_min_volume" not in TUNABLE and "turn_stop_timeout_secs" not in TUNABLE  # no --set for these
    assert TURN_MODELS == ("running", "lexical", "silence", "smart-turn")
