"""The headline figures: each pooled from every call's values, a row of them, and how tables show them."""

from voice.metrics.call_metrics import CallMetrics, TurnMetrics
from voice.metrics.figures import FIGURES, figures, fmt_figure, pooled, unit_values


def call(cid, latency, failed=False):
    turn = TurnMetrics(0, "after_reply", "喂", 0.0, 1000.0, 1000.0 + latency, latency, 0.0, rhythm=4)
    return CallMetrics(
        cid, cid, "assistant_error" if failed else "completed", failed, 5000.0, None, [turn], 2
    )


def test_a_row_holds_the_counts_and_every_figure_in_order():
    row = figures([call("a", 400.0), call("b", 800.0, failed=True)])
    assert (row.calls, row.calls_failed, row.turns) == (2, 1, 4)
    assert list(row)[3:] == [f.key for f in FIGURES] and row["latency_p50_ms"] == 600.0
    assert row["served_rate"] == 0.5 and row["goal_met_rate"] is None  # a scripted run: no goal figures
    assert pooled([call("a", 400.0)], "latency_ms") == unit_values(call("a", 400.0))["latency_ms"] == [400.0]


def test_every_table_shows_a_figure_by_its_unit():
    assert [fmt_figure(812.4, "ms"), fmt_figure(0.5, "rate"), fmt_figure(4.125, "score")] == [
        "812",
        "50%",
        "4.12",
    ]
    assert fmt_figure(None, "ms") == "-"
