"""The turn-taking trade-off bench: its dialogues, its rows from a run's results, its table and options."""

from __future__ import annotations

import argparse

import pytest

from voice.app.benchmarks.turns import SETTINGS, format_table, parse_setting, row_from_target, with_cues
from voice.dialogues import bundled_dialogues_path, load_dialogues


def test_the_dialogues_are_those_with_a_pause_a_backchannel_or_a_barge_in() -> None:
    dialogues = load_dialogues(bundled_dialogues_path())
    chosen = with_cues(dialogues)
    assert 0 < len(chosen) <= len(dialogues)
    for d in dialogues:
        cued = any(t.pause_inside or t.backchannel or t.barge_in_ms for t in d.caller_turns)
        assert (d in chosen) is cued


def target(turns: list[dict], **summary: object) -> dict:
    base = {
        "latency_ms": {"p50": 480.0, "p90": 700.0},
        "barge_in": {"n": 2, "success_rate": 1.0, "stop_latency_p50_ms": 290.0},
        "pause_takeover_rate": 0.0,
        "backchannel_carry_on_rate": 0.5,
    }
    return {"summary": base | summary, "calls": [{"turns": turns[:2]}, {"turns": turns[2:]}]}


def test_a_row_counts_the_cues_that_applied_and_takes_the_rates_from_the_summary() -> None:
    turns = [
        {"pause_takeover": False, "backchannel_carried_on": None, "false_starts": 2},
        {"pause_takeover": None, "backchannel_carried_on": True},
        {"pause_takeover": None, "backchannel_carried_on": False},
        {},  # a turn from an older run without the keys
    ]
    row = row_from_target("smart-turn", target(turns))
    assert (row.calls, row.turns, row.pauses, row.backchannels, row.barge_ins) == (2, 4, 1, 2, 2)
    assert (row.latency_p50_ms, row.pause_takeover_rate, row.stop_latency_p50_ms) == (480.0, 0.0, 290.0)
    assert row.false_starts == 2
    table = format_table([row, row_from_target("bare", target([], pause_takeover_rate=None))])
    lines = table.splitlines()
    assert lines[0].split()[:2] == ["setting", "calls"]
    assert "0% (1)" in lines[2] and "50% (2)" in lines[2] and "100% (2)" in lines[2]
    assert lines[2].endswith("2 in 4 turns")
    assert lines[3].split()[4] == "-"  # no pause applied: no rate


def test_settings_are_named_overrides() -> None:
    assert parse_setting("patient=turn_max_silence_secs=3, vad_stop_secs=0.3") == (
        "patient",
        ("turn_max_silence_secs=3", "vad_stop_secs=0.3"),
    )
    assert parse_setting("defaults=") == ("defaults", ())
    with pytest.raises(argparse.ArgumentTypeError):
        parse_setting("no-overrides-sign")
    with pytest.raises(
        argparse.ArgumentTypeError, match=r"^patient 'vad_stp_secs=1': .*did you mean vad_stop_secs\?"
    ):
        parse_setting("patient=vad_stp_secs=1")  # refused before any setting's calls are made
    assert parse_setting("x=turn-model = silence") == ("x", ("turn_model=silence",))
    from voice.contract.tuning import parse_tuning

    for overrides in SETTINGS.values():  # every built-in comparison is a valid setting
        parse_tuning(overrides)
