"""The headline figures: which per-call values each pools and how it reduces them, a figures row over some
calls, and how every table shows a figure.

Every pooled figure (summary, breakdown row, by-voice row, comparison) is computed from the same per-call
value lists (:func:`unit_values`), so the summary in ``results.json``, the report and ``callsim compare``
can never disagree on what a figure means.  The call is the unit: a comparison resamples calls, not turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from voice.metrics.call_metrics import CallMetrics
from voice.metrics.goal import goal_values
from voice.metrics.model.summary import FigureRow
from voice.metrics.reduce import reduce


@dataclass(frozen=True)
class Figure:
    """One headline figure: which per-call values it pools and how it reduces them."""

    key: str  # key in a breakdown row / comparison
    label: str  # for tables
    values: str  # key of :func:`unit_values`
    reduce: str  # "mean", "p50", "p90", "p95" or "p99" over the pooled values
    unit: str  # "ms", "rate" (0-1), "score" (1-5) or "count"
    goal: bool = False  # the reactive caller's goal: no value in a scripted run, shown only where it has one


FIGURES: tuple[Figure, ...] = (
    Figure("latency_p50_ms", "latency p50", "latency_ms", "p50", "ms"),
    Figure("latency_p90_ms", "latency p90", "latency_ms", "p90", "ms"),
    Figure("latency_p95_ms", "latency p95", "latency_ms", "p95", "ms"),
    Figure("latency_p99_ms", "latency p99", "latency_ms", "p99", "ms"),
    Figure("latency_mean_ms", "latency mean", "latency_ms", "mean", "ms"),
    Figure("barge_in_success_rate", "barge-in success", "barge_in_success", "mean", "rate"),
    Figure("pause_takeover_rate", "pause takeover", "pause_takeover", "mean", "rate"),
    Figure("backchannel_carry_on_rate", "backchannel carry-on", "backchannel_carry_on", "mean", "rate"),
    Figure("rhythm_mean", "rhythm", "rhythm", "mean", "score"),
    Figure("answered_rate", "turns answered", "answered", "mean", "rate"),
    Figure("false_start_rate", "false starts", "false_start", "mean", "rate"),
    Figure("served_rate", "calls served", "served", "mean", "rate"),
    # the reactive caller's own verdict on its goal (``goal_values``); a judge's verdict is another figure
    Figure("goal_met_rate", "caller: goal met", "goal_met", "mean", "rate", goal=True),
    Figure(
        "goal_met_or_partly_rate", "caller: met or partly", "goal_met_or_partly", "mean", "rate", goal=True
    ),
    Figure("goal_time_p50_ms", "caller: time to outcome p50", "goal_time_ms", "p50", "ms", goal=True),
    Figure("goal_turns_mean", "caller: turns to outcome", "goal_turns", "mean", "count", goal=True),
)


def unit_values(c: CallMetrics) -> dict[str, list[float]]:
    """One call's contribution to every pooled figure (booleans as 0/1)."""
    return {
        "latency_ms": c.latencies_ms,
        "barge_in_success": [float(b.success) for b in c.barge_ins],
        "pause_takeover": [float(t.pause_takeover) for t in c.turns if t.pause_takeover is not None],
        "backchannel_carry_on": [
            float(t.backchannel_carried_on) for t in c.turns if t.backchannel_carried_on is not None
        ],
        "rhythm": [float(t.rhythm) for t in c.turns if t.rhythm is not None],
        # turns a failed call never reached count as unanswered; turns after a proper hang-up do not count
        "answered": [1.0] * c.turns_completed + [0.0] * max(0, c.turns_of_call - c.turns_completed),
        "false_start": [float(t.false_starts > 0) for t in c.turns],  # turns with at least one
        "served": [float(c.served)],
        **goal_values(c.goal),  # the reactive caller's verdict, time and turns to it, its own waits
    }


def pooled(calls: Sequence[CallMetrics], key: str) -> list[float]:
    return [x for c in calls for x in unit_values(c)[key]]


def figures(calls: Sequence[CallMetrics]) -> FigureRow:
    """A row of every headline figure over ``calls`` (a breakdown row, a report table row)."""
    return FigureRow(
        calls=len(calls),
        calls_failed=sum(1 for c in calls if c.failed),
        turns=sum(c.caller_turns_planned for c in calls),
        figures={f.key: reduce(pooled(calls, f.values), f.reduce) for f in FIGURES},
    )


def fmt_ms(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.0f}{unit}"


def fmt_score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def fmt_count(k: int, n: int) -> str:
    return "-" if n == 0 else f"{k}/{n}"


def fmt_figure(value: float | None, unit: str) -> str:
    """A figure as shown in every table: ms rounded, rates in percent, scores to 2 decimals."""
    return {"ms": fmt_ms, "rate": fmt_rate}.get(unit, fmt_score)(value)
