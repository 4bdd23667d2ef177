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

from voice.app.report.data import BREAKDOWN_TITLES, Column, RunView, TargetView
from voice.metrics.figures import FIGURES, Figure, fmt_count, fmt_figure, fmt_ms, fmt_rate
from voice.metrics.goal import COUNTED
from voice.metrics.model.blocks import GoalBlock
from voice.metrics.model.call_record import CallRecord
from voice.metrics.model.summary import FigureRow

NOTE = (
    "The caller's own verdict on its goal (yes, partly, no; unknown: it gave none), asked when it hung up "
    "or after the call.  Rates count the calls with a verdict.  Outcome after: pick-up to the verdict (at "
    "most the call's length).  Caller late: how long the caller's turns came later than its think time "
    "because its model or voice was slow: the simulator's gap, not the assistant's latency.  Fallbacks: "
    "turns the model did not decide (the script's line, or hanging up); rejected: model answers refused."
)


def _verdicts(g: GoalBlock) -> str:
    return " · ".join(f"{k} {g.verdicts.get(k, 0)}" for k in COUNTED)


def _late(g: GoalBlock) -> str:
    waits = g.caller_late_waits
    return f"{fmt_ms(g.caller_late_ms_total, ' ms')} in {waits} wait{'' if waits == 1 else 's'}"


def _turns(g: GoalBlock) -> str:
    mean, p50 = g.turns_mean, g.turns_p50
    return "-" if mean is None else f"{mean:.1f} / {p50:g}"


def _met(g: GoalBlock) -> str:
    return f"{fmt_count(g.verdicts['yes'], g.calls_with_verdict)} ({fmt_rate(g.goal_met_rate)})"


GOAL_COLUMNS: tuple[Column[GoalBlock], ...] = (
    ("calls", lambda g: str(g.calls)),
    ("verdicts", _verdicts),
    ("goal met", _met),
    ("met or partly", lambda g: fmt_rate(g.goal_met_or_partly_rate)),
    ("outcome after p50", lambda g: fmt_ms(g.time_p50_ms, " ms")),
    ("p90", lambda g: fmt_ms(g.time_p90_ms, " ms")),
    ("turns mean / p50", _turns),
    ("caller late", _late),
    ("late p90 per call", lambda g: fmt_ms(g.caller_late_p90_ms, " ms")),
    ("fallbacks", lambda g: str(g.caller_fallbacks)),
    ("rejected", lambda g: str(g.caller_rejected)),
)


def _figure(f: Figure) -> Column[FigureRow]:
    """A goal figure of a figures row, labelled without the ``caller:`` prefix (the section says whose)."""
    suffix = " ms" if f.unit == "ms" else ""

    def cell(r: FigureRow) -> str:
        value = r.get(f.key)
        return "-" if value is None else fmt_figure(value, f.unit) + suffix

    return f.label.removeprefix("caller: "), cell


GROUP_COLUMNS: tuple[Column[FigureRow], ...] = (
    ("calls", lambda r: str(r.calls)),
    *(_figure(f) for f in FIGURES if f.goal),
)


def has_goals(run: RunView) -> bool:
    """Whether any target of the run had a reactive caller (then the reports have a Caller goals section)."""
    return bool(goal_targets(run))


def _goals(run: RunView) -> list[tuple[int, TargetView, GoalBlock]]:
    return [(i, t, g) for i, t in enumerate(run.targets) if (g := t.summary.goal) is not None]


def goal_targets(run: RunView) -> list[tuple[int, TargetView]]:
    """The targets (with their index, for colours and anchors) whose summary has a ``goal`` block."""
    return [(i, t) for i, t, _ in _goals(run)]


def summary_rows(run: RunView) -> list[tuple[int, list[str]]]:
    """Per target with goals: its index and the cells of :data:`GOAL_COLUMNS`."""
    return [(i, [f(g) for _, f in GOAL_COLUMNS]) for i, _, g in _goals(run)]


def group_tables(run: RunView) -> list[tuple[str, list[tuple[str, int, list[str]]]]]:
    """Per breakdown (scenario, preset type, relation, persona): its title and rows ``(value, target index,
    cells of GROUP_COLUMNS)``, sorted by value; breakdowns with no rows left out."""
    out = []
    for name, title in BREAKDOWN_TITLES.items():
        rows = [
            (value, i, [f(row) for _, f in GROUP_COLUMNS])
            for i, t in goal_targets(run)
            for value, row in t.summary.breakdowns.get(name, {}).items()
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


def verdict_cells(c: CallRecord) -> list[str] | None:
    """One call's verdict as the cells of :data:`VERDICT_HEADER`, or None (a scripted call)."""
    g = c.metrics.goal
    if g is None:
        return None
    waits = len(g.waits)
    return [
        c.label("persona", "-"),
        g.met or "none",
        g.reason or "-",
        "-" if g.turns is None else str(g.turns),
        fmt_ms(g.time_ms, " ms"),
        "-" if not waits else f"{fmt_ms(g.caller_late_ms, ' ms')} ({waits})",
        str(g.caller_fallbacks),
        str(g.caller_rejected),
    ]


def verdict_line(c: CallRecord) -> str | None:
    """The call's verdict in a sentence (None: a scripted call)."""
    g = c.metrics.goal
    if g is None:
        return None
    met = g.met
    head = f"The caller's verdict on its goal: {met}" if met else "The caller gave no verdict on its goal"
    when = []
    if g.turns is not None:
        when.append(f"after {g.turns} turn{'' if g.turns == 1 else 's'}")
    if g.time_ms is not None:
        when.append(f"at {g.time_ms / 1000:.1f} s")
    persona = c.labels.get("persona")
    return (
        head
        + (" " + ", ".join(when) if when else "")
        + (f" (persona {persona})" if persona else "")
        + (f": {g.reason}" if g.reason else "")
    )


DECISION_HEADER = ["turn", "at", "action", "source", "said", "heard", "goal / why", "rejected"]


def decision_rows(c: CallRecord) -> list[list[str]]:
    """The caller's decisions of one call, as the cells of :data:`DECISION_HEADER`."""
    rows = []
    for d in c.metrics.goal.decisions if c.metrics.goal else []:
        why = " · ".join(x for x in (d.goal, d.reason) if x)
        rows.append(
            [
                str(d.turn + 1),
                fmt_ms(d.at_ms, " ms"),
                d.action,
                d.source,
                d.text or "-",
                d.heard or "-",
                why or "-",
                d.rejected or "-",
            ]
        )
    return rows


def wait_lines(c: CallRecord) -> list[str]:
    """Each time the caller's turn was not ready, in words: the simulator's wait, not the assistant's."""
    return [
        f"turn {w.turn + 1}: due at {fmt_ms(w.due_ms, ' ms')}, started {fmt_ms(w.late_ms, ' ms')} late"
        for w in (c.metrics.goal.waits if c.metrics.goal else [])
    ]
