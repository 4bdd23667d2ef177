"""The report's inline SVG charts."""

import re

from voice.app.report.svg import cdf, grouped_bars, histogram, nice_step


def test_charts_handle_empty_and_single_values():
    assert "no data" in histogram([("a", [])], title="t", xlabel="ms")
    assert "<polyline" in cdf([("a", [500.0])], title="t", xlabel="ms")
    assert "<rect" in histogram([("a", [-120.0, 80.0]), ("b", [3000.0])], title="t", xlabel="ms")
    assert nice_step(1000, 5) == 200


def test_one_value_still_gets_a_readable_axis():
    for chart in (
        histogram([("a", [220.0])], title="t", xlabel="ms"),
        cdf([("a", [220.0])], title="t", xlabel="ms"),
    ):
        labels = re.findall(r'text-anchor="middle">(\d+)</text>', chart)
        assert len(labels) >= 3 and len(set(labels)) == len(labels), labels  # 220, 225, 230...
    assert ">barge-ins<" in histogram([("a", [1.0])], title="t", xlabel="ms", ylabel="barge-ins")


def test_each_bars_tooltip_says_what_it_counts_and_where():
    bars = histogram([("bot", [310.0, 310.0])], title="t", xlabel="ms", ylabel="turns", bins=4)
    assert re.search(r"<title>bot: 2 turns in \[\d+, \d+\) ms</title>", bars)
    rhythm = grouped_bars(["1", "2"], [("bot", [0.0, 3.0])], title="t", xlabel="score", ylabel="turns")
    assert (
        "<title>bot: 3 turns at score 2</title>" in rhythm
        and "<title>bot: 0 turns at score 1</title>" in rhythm
    )
