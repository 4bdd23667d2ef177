"""A summary as results.json holds it: every block typed, figures rows read as mappings, old keys read as
the report read them."""

import json

from tests.metrics.model.old_files import REACTIVE, TARGET, VOICED, doc
from voice.metrics.model.jsonio import Fields, json_bytes
from voice.metrics.model.summary import FigureRow, Summary, summary_from_json, summary_json


def test_an_old_summary_with_every_block_loads_and_writes_back_as_written():
    for folder in (VOICED / TARGET, REACTIVE / TARGET):
        written = doc(folder / "results.json")["summary"]
        summary = Summary.from_json(Fields(written))
        assert json.loads(json_bytes(summary.to_json())) == written
    voiced = Summary.from_json(Fields(doc(VOICED / TARGET / "results.json")["summary"]))
    assert list(voiced.breakdowns) == ["by_scenario", "by_preset_type", "by_relation", "by_voice", "by_sex"]
    assert voiced.by_voice is not None and all(row.ci95 for row in voiced.by_voice.values())
    assert voiced.worst_voice is not None and voiced.worst_voice.voice in voiced.by_voice
    reactive = Summary.from_json(Fields(doc(REACTIVE / TARGET / "results.json")["summary"]))
    assert reactive.goal is not None and reactive.goal.calls == 2 and "by_persona" in reactive.breakdowns


def test_a_figures_row_reads_as_a_mapping_of_its_counts_and_figures():
    row = FigureRow(
        3, 1, 6, {"latency_p50_ms": 800.0, "served_rate": None}, {"latency_p50_ms": (700.0, 900.0)}
    )
    assert list(row) == ["calls", "calls_failed", "turns", "latency_p50_ms", "served_rate"]
    assert row["calls"] == 3 and row["latency_p50_ms"] == 800.0 and row.get("rhythm_mean") is None
    assert row.to_json()["ci95"] == {"latency_p50_ms": [700.0, 900.0]} and "ci95" not in row
    assert FigureRow.from_json(Fields(row.to_json())) == row


def test_a_summary_from_before_a_key_existed_reads_as_the_report_always_read_it():
    old = doc(VOICED / TARGET / "results.json")["summary"]
    for key in (
        "calls_served",
        "caller_turns_of_call",
        "caller_turns_spoken",
        "false_starts",
        "pacing_late_ms",
    ):
        del old[key]
    for key in ("unscripted", "never_stopped"):
        del old["barge_in"][key]
    s = Summary.from_json(Fields(old))
    assert s.caller_turns_spoken == s.caller_turns_of_call == s.caller_turns and s.calls_served == 0
    assert s.false_starts is None and s.pacing_late_ms is None and s.barge_in.unscripted is None
    assert "false_starts" not in s.to_json() and "never_stopped" not in s.to_json()["barge_in"]


def test_no_summary_is_none_and_is_written_as_an_empty_object():
    assert summary_from_json({}) is None and summary_from_json(None) is None and summary_json(None) == {}
