import json

import pytest

from voice.errors import RecordingError
from voice.metrics.measure import BargeIn, CallMetrics, TurnMetrics
from voice.metrics.results import (
    FIGURES,
    METRICS_SCHEMA,
    RESULTS_SCHEMA,
    breakdown,
    call_to_json,
    figures,
    format_table,
    read_results,
    summarize,
    summarize_run,
)


def turn(i, latency, barge=None, pause=None):
    return TurnMetrics(
        turn=i,
        mode="after_reply",
        text="你好",
        caller_start_ms=0.0,
        caller_end_ms=1000.0,
        reply_onset_ms=None if latency is None else 1000.0 + latency,
        latency_ms=latency,
        overlap_ms=0.0,
        barge_in=barge,
        pause_takeover=pause,
    )


def calls():
    ok = BargeIn(at_ms=5.0, active=True, stop_latency_ms=300.0, success=True)
    bad = BargeIn(at_ms=5.0, active=True, stop_latency_ms=None, success=False)
    inactive = BargeIn(at_ms=5.0, active=False, stop_latency_ms=0.0, success=False)
    a = CallMetrics(
        "外卖-1",
        "a",
        "completed",
        False,
        9000.0,
        80.0,
        [turn(0, 1000.0), turn(1, 2000.0, ok), turn(2, None, inactive)],
        3,
    )
    b = CallMetrics("b", "b", "assistant_silent", True, 9000.0, None, [turn(0, 3000.0, bad, pause=True)], 1)
    return [a, b]


def test_summary_pools_turns_across_calls():
    s = summarize(calls())
    assert s["calls"] == 2 and s["calls_failed"] == 1
    assert s["caller_turns"] == 4 and s["caller_turns_spoken"] == 4 and s["turns_completed"] == 3
    assert s["latency_ms"]["p50"] == 2000.0 and s["latency_ms"]["mean"] == 2000.0
    assert s["barge_in"]["n"] == 2 and s["barge_in"]["successes"] == 1  # the inactive one does not count
    assert s["barge_in"]["stop_latency_p50_ms"] == 300.0
    assert s["barge_in"]["never_stopped"] == 1  # the failed call's: no stop latency to pool
    assert s["pause_takeover_rate"] == 1.0


def test_p95_sits_between_p90_and_p99_for_latency_and_stop_latency():
    stops = [BargeIn(5.0, True, float(ms), ms <= 1500) for ms in range(100, 2100, 100)]  # 100..2000 ms
    c = CallMetrics(
        "c", "c", "completed", False, 9e4, None, [turn(i, 100.0 * i, b) for i, b in enumerate(stops)]
    )
    s, f = summarize([c]), figures([c])
    lat = s["latency_ms"]
    assert lat["p90"] < lat["p95"] < lat["p99"] and lat["p95"] == pytest.approx(1805.0)
    assert f["latency_p95_ms"] == lat["p95"]
    b = s["barge_in"]
    assert (b["stop_latency_p50_ms"], b["stop_latency_p90_ms"], b["stop_latency_p95_ms"]) == pytest.approx(
        (1050.0, 1810.0, 1905.0)
    )
    assert [x.key for x in FIGURES][1:4] == ["latency_p90_ms", "latency_p95_ms", "latency_p99_ms"]


def test_table_has_a_row_per_call_and_an_overall_row_aligned_for_cjk():
    text = format_table(calls(), summarize(calls()))
    lines = text.splitlines()
    assert lines[0].startswith("call") and lines[-1].startswith("ALL")
    assert any("外卖-1" in x and "1500" in x for x in lines)  # p50 of 1000 and 2000
    assert "(FAILED)" in text and "1/2" in lines[-1]
    # CJK takes two columns: the outcome column starts at the same display column in every row
    assert len({x.index("completed") + x.count("外") + x.count("卖") for x in lines if "completed" in x}) == 1


def test_call_json_carries_derived_figures():
    d = call_to_json(calls()[0])
    assert d["schema_version"] == METRICS_SCHEMA == "callsim.metrics/1"
    assert d["turns_completed"] == 2 and d["latency_p50_ms"] == 1500.0
    assert d["turns"][1]["barge_in"]["success"] is True


def test_figures_agree_with_the_summary_they_sit_next_to():
    s, f = summarize(calls()), figures(calls())
    assert f["latency_p50_ms"] == s["latency_ms"]["p50"] and f["latency_mean_ms"] == s["latency_ms"]["mean"]
    assert f["barge_in_success_rate"] == s["barge_in"]["success_rate"] == 0.5
    assert f["pause_takeover_rate"] == s["pause_takeover_rate"]
    assert f["answered_rate"] == 3 / 4  # 3 of 4 planned turns answered
    assert f["calls"] == 2 and f["turns"] == 4
    assert {x.key for x in FIGURES} <= set(f)


def test_breakdowns_group_calls_by_their_labels():
    labels = [
        {"scenario": "takeout", "preset_type": "regular", "relation": "conflict"},
        {"scenario": "taxi", "preset_type": "regular", "relation": "alignment"},
    ]
    by = breakdown(calls(), labels, "scenario")
    assert list(by) == ["takeout", "taxi"]
    assert by["takeout"]["calls"] == 1 and by["takeout"]["latency_p50_ms"] == 1500.0
    assert by["taxi"]["barge_in_success_rate"] == 0.0
    s = summarize_run(calls(), labels)
    assert s["by_preset_type"]["regular"]["calls"] == 2
    assert set(s["by_relation"]) == {"conflict", "alignment"}
    assert s["figures"] == figures(calls())


def test_call_json_carries_its_labels():
    d = call_to_json(calls()[0], {"scenario": "takeout", "repeat": 2})
    assert d["scenario"] == "takeout" and d["repeat"] == 2


def test_results_of_a_newer_schema_or_another_kind_are_refused(tmp_path):
    path = tmp_path / "results.json"
    for version in (RESULTS_SCHEMA, None, "callsim.results/0"):  # None: written before versioning
        doc = {"kind": "target", "calls": []} | ({"schema_version": version} if version else {})
        path.write_text(json.dumps(doc))
        assert read_results(tmp_path)["kind"] == "target"
    for version, why in (("callsim.results/2", "upgrade CallSim"), ("callsim.metrics/1", "not a version")):
        path.write_text(json.dumps({"schema_version": version, "kind": "target", "calls": []}))
        with pytest.raises(RecordingError, match=why):
            read_results(tmp_path)
