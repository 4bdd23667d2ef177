"""The reactive caller's goals in the reports: what to show, as plain text rows for both renderers.

A run made with ``--caller openai:MODEL`` has, per target, a summary ``goal`` block and, per call, a ``goal``
object (``docs/results.md``).  The report shows the verdict counts and rates, when the outcome came, the
simulator's own waits (so a slow caller model is not mistaken for a slow assistant), the goal figures per
scenario, preset type, relation and persona, then each call's verdict and the decisions that led to it:
a rate does not say which calls to listen to, and the decisions say why the caller did what it did.
Everything is read from ``results.json``; the HTML and Markdown renderers escape and lay the rows out.
A scripted run has none of this, and its reports show no such section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voice.app.report.data import BREAKDOWN_TITLES, Column, RunView, TargetView
from voice.metrics.goal import COUNTED
from voice.metrics.results import FIGURES, Figure, fmt_count, fmt_figure, fmt_ms, fmt_rate

Row = Mapping[str, Any]

NOTE = (
    "The caller's own verdict on its goal (yes, partly, no; unknown: it gave none), asked when it hung up "
    "or after the call.  Rates count the calls with a verdict.  Outcome after: pick-up to the verdict (at "
    "most the call's length).  Caller late: how long the caller's turns came later than its think time "
    "because its model or voice was slow: the simulator's gap, not the assistant's latency.  Fallbacks: "
    "turns the model did not decide (the script's line, or hanging up); rejected: model answers refused."
)


def _verdicts(g: Row) -> str:
    return " · ".join(f"{k} {g['verdicts'].get(k, 0)}" for k in COUNTED)


def _late(g: Row) -> str:
    waits = g.get("caller_late_waits", 0)
    return f"{fmt_ms(g['caller_late_ms_total'], ' ms')} in {waits} wait{'' if waits == 1 else 's'}"


def _turns(g: Row) -> str:
    mean, p50 = g.get("turns_mean"), g.get("turns_p50")
    return "-" if mean is None else f"{mean:.1f} / {p50:g}"


def _met(g: Row) -> str:
    return f"{fmt_count(g['verdicts']['yes'], g['calls_with_verdict'])} ({fmt_rate(g['goal_met_rate'])})"


GOAL_COLUMNS: tuple[Column, ...] = (
    ("calls", lambda g: str(g["calls"])),
    ("verdicts", _verdicts),
    ("goal met", _met),
    ("met or partly", lambda g: fmt_rate(g["goal_met_or_partly_rate"])),
    ("outcome after p50", lambda g: fmt_ms(g["time_p50_ms"], " ms")),
    ("p90", lambda g: fmt_ms(g["time_p90_ms"], " ms")),
    ("turns mean / p50", _turns),
    ("caller late", _late),
    ("late p90 per call", lambda g: fmt_ms(g["caller_late_p90_ms"], " ms")),
    ("fallbacks", lambda g: str(g["caller_fallbacks"])),
    ("rejected", lambda g: str(g["caller_rejected"])),
)


def _figure(f: Figure) -> Column:
    """A goal figure of a figures row, labelled without the ``caller:`` prefix (the section says whose)."""
    suffix = " ms" if f.unit == "ms" else ""

    def cell(r: Row) -> str:
        value = r.get(f.key)
        return "-" if value is None else fmt_figure(value, f.unit) + suffix

    return f.label.removeprefix("caller: "), cell


GROUP_COLUMNS: tuple[Column, ...] = (
    ("calls", lambda r: str(r["calls"])),
    *(_figure(f) for f in FIGURES if f.goal),
)


def has_goals(run: RunView) -> bool:
    """Whether any target of the run had a reactive caller (then the reports have a Caller goals section)."""
    return any("goal" in t.summary for t in run.targets)


def goal_targets(run: RunView) -> list[tuple[int, TargetView]]:
    """The targets (with their index, for colours and anchors) whose summary has a ``goal`` block."""
    return [(i, t) for i, t in enumerate(run.targets) if "goal" in t.summary]


def summary_rows(run: RunView) -> list[tuple[int, list[str]]]:
    """Per target with goals: its index and the cells of :data:`GOAL_COLUMNS`."""
    return [(i, [f(t.summary["goal"]) for _, f in GOAL_COLUMNS]) for i, t in goal_targets(run)]


def group_tables(run: RunView) -> list[tuple[str, list[tuple[str, int, list[str]]]]]:
    """Per breakdown (scenario, preset type, relation, persona): its title and rows ``(value, target index,
    cells of GROUP_COLUMNS)``, sorted by value; breakdowns with no rows left out."""
    out = []
    for name, title in BREAKDOWN_TITLES.items():
        rows = [
            (value, i, [f(row) for _, f in GROUP_COLUMNS])
            for i, t in goal_targets(run)
            for value, row in t.summary.get(name, {}).items()
        ]
        if rows:
            out.append((title, sorted(rows, key=lambda r: r[0])))
    return out


VERDICT_HEADER = [
    "persona",
    "verdict",
    "reason",
    "turns",
    "outcome after",
    "caller late",
    "fallbacks",
    "rejected",
]


def verdict_cells(c: Row) -> list[str] | None:
    """One call's verdict as the cells of :data:`VERDICT_HEADER`, or None (a scripted call)."""
    g = c.get("goal")
    if not g:
        return None
    waits = len(g.get("waits", []))
    return [
        str(c.get("persona", "-")),
        str(g.get("met") or "none"),
        str(g.get("reason") or "-"),
        "-" if g.get("turns") is None else str(g["turns"]),
        fmt_ms(g.get("time_ms"), " ms"),
        "-" if not waits else f"{fmt_ms(g.get('caller_late_ms'), ' ms')} ({waits})",
        str(g.get("caller_fallbacks", 0)),
        str(g.get("caller_rejected", 0)),
    ]


def verdict_line(c: Row) -> str | None:
    """The call's verdict in a sentence (None: a scripted call)."""
    g = c.get("goal")
    if not g:
        return None
    met = g.get("met")
    head = f"The caller's verdict on its goal: {met}" if met else "The caller gave no verdict on its goal"
    when = []
    if g.get("turns") is not None:
        when.append(f"after {g['turns']} turn{'' if g['turns'] == 1 else 's'}")
    if g.get("time_ms") is not None:
        when.append(f"at {g['time_ms'] / 1000:.1f} s")
    persona = f" (persona {c['persona']})" if c.get("persona") else ""
    reason = f": {g['reason']}" if g.get("reason") else ""
    return head + (" " + ", ".join(when) if when else "") + persona + reason


DECISION_HEADER = ["turn", "at", "action", "source", "said", "heard", "goal / why", "rejected"]


def decision_rows(c: Row) -> list[list[str]]:
    """The caller's decisions of one call, as the cells of :data:`DECISION_HEADER`."""
    g = c.get("goal") or {}
    rows = []
    for d in g.get("decisions", []):
        why = " · ".join(x for x in (d.get("goal", ""), d.get("reason", "")) if x)
        rows.append(
            [
                str(d["turn"] + 1),
                fmt_ms(d.get("at_ms"), " ms"),
                str(d.get("action", "")),
                str(d.get("source", "")),
                str(d.get("text") or "-"),
                str(d.get("heard") or "-"),
                why or "-",
                str(d.get("rejected") or "-"),
            ]
        )
    return rows


def wait_lines(c: Row) -> list[str]:
    """Each time the caller's turn was not ready, in words: the simulator's wait, not the assistant's."""
    g = c.get("goal") or {}
    return [
        f"turn {w['turn'] + 1}: due at {fmt_ms(w['due_ms'], ' ms')}, "
        f"started {fmt_ms(w['late_ms'], ' ms')} late"
        for w in g.get("waits", [])
    ]
