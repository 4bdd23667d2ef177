"""The report's inline SVG charts."""

from voice.report.svg import cdf, histogram, nice_step


def test_charts_handle_empty_and_single_values():
    assert "no data" in histogram([("a", [])], title="t", xlabel="ms")
    assert "<polyline" in cdf([("a", [500.0])], title="t", xlabel="ms")
    assert "<rect" in histogram([("a", [-120.0, 80.0]), ("b", [3000.0])], title="t", xlabel="ms")
    assert nice_step(1000, 5) == 200
