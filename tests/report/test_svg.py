"""The report's inline SVG charts."""

from voice.report.svg import cdf, histogram, nice_step


def test_charts_handle_empty_and_single_values():
    assert "no data" in histogram([("a", [])], title="t", xlabel="ms")
    assert "<polyline" in cdf([("a", [500.0])], title="t", xlabel="ms")
    assert "<rect" in histogram([("a", [-120.0, 80.0]), ("b", [3000.0])], title="t", xlabel="ms")
    assert nice_step(1000, 5) == 200


def test_one_value_still_gets_a_readable_axis():
    import re

    for chart in (
        histogram([("a", [220.0])], title="t", xlabel="ms"),
        cdf([("a", [220.0])], title="t", xlabel="ms"),
    ):
        labels = re.findall(r'text-anchor="middle">(\d+)</text>', chart)
        assert len(labels) >= 3 and len(set(labels)) == len(labels), labels  # 220, 225, 230...
    assert ">barge-ins<" in histogram([("a", [1.0])], title="t", xlabel="ms", ylabel="barge-ins")
