"""What ``callsim compare`` finds, as the document it writes (``--json``) and as the table it prints.

The document is a JSON output read by other tools, so its keys are fixed and typed here, one ``TypedDict``
per object: the two sides, the bootstrap's settings, how the conditions differ, the machines' speed indices,
the figures overall and per group of ``--by``, the CallBench dimensions and the judge's verdict rates when
both sides were scored, and the warnings.  :mod:`voice.app.report.compare` fills it; the text table is
read from it alone, so what is printed is what is written.
"""

from __future__ import annotations

import functools
from typing import NotRequired, TypedDict

from voice.app.report.machine import SpeedComparison
from voice.metrics.bootstrap import Difference, interval_text
from voice.metrics.figures import fmt_figure
from voice.text.table import text_table


class SideName(TypedDict):
    """A side: its name and the folder its ``results.json`` was read from."""

    name: str
    folder: str


class FigureDiff(TypedDict):
    """A headline figure of both sides, B - A, its interval and the calls on each side with values."""

    key: str
    label: str
    unit: str
    a: float | None
    b: float | None
    diff: float | None
    ci: list[float | None]  # [lo, hi]
    significant: bool  # the interval excludes 0, and the block is not under --min-n
    n_calls_with_values: list[int]  # [A, B]


class Block(TypedDict):
    """The figures over some calls (overall, or a group of ``--by``)."""

    calls: list[int]  # [A, B]
    paired: bool  # the same call ids on both sides: the bootstrap resamples them together
    small_n: bool  # a side under --min-n calls: shown, never starred
    figures: list[FigureDiff]


class DiffRow(TypedDict):
    """A CallBench dimension's mean, or a judge's verdict rate, on both sides with B - A."""

    a: float | None
    b: float | None
    diff: float | None
    lo: float | None
    hi: float | None
    significant: bool
    n_a: int
    n_b: int


class ComparisonHead(TypedDict):
    """The comparison without its warnings (which are read from it)."""

    a: SideName
    b: SideName
    resamples: int
    seed: int
    level: float
    min_n: int
    mismatch: list[str]  # how the two sides' conditions differ, one line each
    simulator_failures: list[int]  # the calls CallSim failed on, left out: [A, B]
    speed_index: SpeedComparison
    overall: Block
    by: NotRequired[str]  # with --by: the label grouped by, and each group's block
    groups: NotRequired[dict[str, Block]]
    dimensions: NotRequired[dict[str, DiffRow]]  # both sides scored (callsim score)
    judge_goals: NotRequired[dict[str, DiffRow]]  # both sides scored with a judge that gives verdicts


class Comparison(ComparisonHead):
    """The document ``callsim compare --json`` writes, key for key in this order."""

    warnings: list[str]


def diff_row(d: Difference) -> DiffRow:
    return {
        "a": d.a,
        "b": d.b,
        "diff": d.diff,
        "lo": d.lo,
        "hi": d.hi,
        "significant": d.significant,
        "n_a": d.n_a,
        "n_b": d.n_b,
    }


JUDGE_GOAL_LABELS = {
    "met_rate": "judge: caller goal met",
    "met_or_partly_rate": "judge: goal met or partly",
    "preset_respected_rate": "judge: preset respected",
}


def judge_goal_rows(doc: ComparisonHead) -> list[list[str]]:
    """The text rows of the judge's verdict rates (the judge's verdicts, not the caller's own)."""
    rows = []
    for rate, d in doc.get("judge_goals", {}).items():
        ci = interval_text(d["lo"], d["hi"], _n(d), lambda x: _signed(x, "rate"))
        cells = [fmt_figure(d["a"], "rate"), fmt_figure(d["b"], "rate")]
        delta = _signed(d["diff"], "rate") + (" *" if d["significant"] else "")
        rows.append([JUDGE_GOAL_LABELS.get(rate, rate), *cells, delta, ci])
    return rows


def small_n_warnings(doc: ComparisonHead) -> list[str]:
    """One line per block under the minimum number of calls a side (shown, not starred)."""
    blocks = [("overall", doc["overall"])]
    blocks += [(f"{doc.get('by')}={v}", block) for v, block in doc.get("groups", {}).items()]
    return [
        f"{name}: {block['calls'][0]} vs {block['calls'][1]} calls, under --min-n {doc['min_n']}: not starred"
        for name, block in blocks
        if block["small_n"]
    ]


def _n(d: DiffRow) -> int:
    """The smaller side's calls with values (``n=1``: no interval)."""
    return min(d["n_a"], d["n_b"])


def _signed(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    text = fmt_figure(abs(value), unit) if unit != "rate" else f"{100 * abs(value):.0f}pp"
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def _rows(block: Block, prefix: str = "") -> list[list[str]]:
    rows = []
    for r in block["figures"]:
        lo, hi = r["ci"]
        ci = interval_text(lo, hi, min(r["n_calls_with_values"]), functools.partial(_signed, unit=r["unit"]))
        ci += " (small n)" if block["small_n"] and lo is not None else ""
        rows.append(
            [
                prefix + r["label"] + (" (ms)" if r["unit"] == "ms" else ""),
                fmt_figure(r["a"], r["unit"]),
                fmt_figure(r["b"], r["unit"]),
                _signed(r["diff"], r["unit"]),
                ci + (" *" if r["significant"] else ""),
            ]
        )
    return rows


def format_comparison(doc: Comparison) -> str:
    """The comparison as a text table; ``*`` marks intervals that exclude 0."""
    overall = doc["overall"]
    pct = f"{100 * doc['level']:.0f}%"
    head = [
        f"A = {doc['a']['name']}  ({overall['calls'][0]} calls, {doc['a']['folder']})",
        f"B = {doc['b']['name']}  ({overall['calls'][1]} calls, {doc['b']['folder']})",
        f"bootstrap over calls: {doc['resamples']} resamples, seed {doc['seed']}, "
        + ("paired (same calls on both sides)" if overall["paired"] else "independent samples"),
        "",
    ]
    rows = _rows(overall)
    for value, block in doc.get("groups", {}).items():
        rows += _rows(block, f"{doc.get('by')}={value}: ")
    for dim, d in doc.get("dimensions", {}).items():
        ci = interval_text(d["lo"], d["hi"], _n(d), lambda x: f"{x:+.2f}")
        cells = ["-" if x is None else f"{x:.2f}" for x in (d["a"], d["b"])]
        delta = "-" if d["diff"] is None else f"{d['diff']:+.2f}" + (" *" if d["significant"] else "")
        rows.append([f"score: {dim.replace('_', ' ')}", *cells, delta, ci])
    rows += judge_goal_rows(doc)
    table = text_table(["figure", "A", "B", "B − A", f"{pct} CI"], rows)
    tail = [f"* the {pct} interval excludes 0; pp = percentage points"]
    tail += [f"small n: {w}" for w in doc["warnings"]]
    if warning := doc["speed_index"]["warning"]:
        tail += [f"WARNING: {warning}"]
    if doc["mismatch"]:
        tail += ["WARNING: the two sides were not run under the same conditions:"]
        tail += [f"  {m}" for m in doc["mismatch"]]
    return "\n".join([*head, table, "", *tail])
