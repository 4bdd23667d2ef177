from voice.measure import BargeIn, CallMetrics, TurnMetrics
from voice.results import call_to_json, format_table, summarize


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
    assert s["pause_takeover_rate"] == 1.0


def test_table_has_a_row_per_call_and_an_overall_row_aligned_for_cjk():
    text = format_table(calls(), summarize(calls()))
    lines = text.splitlines()
    assert lines[0].startswith("dialogue") and lines[-1].startswith("ALL")
    assert any("外卖-1" in x and "1500" in x for x in lines)  # p50 of 1000 and 2000
    assert "(FAILED)" in text and "1/2" in lines[-1]
    # CJK takes two columns: the outcome column starts at the same display column in every row
    assert len({x.index("completed") + x.count("外") + x.count("卖") for x in lines if "completed" in x}) == 1


def test_call_json_carries_derived_figures():
    d = call_to_json(calls()[0])
    assert d["turns_completed"] == 2 and d["latency_p50_ms"] == 1500.0
    assert d["turns"][1]["barge_in"]["success"] is True
