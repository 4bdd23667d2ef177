"""The CallBench dimensions in the reports: each target's seven-dimension table, and each call's turn scores.

Read from what ``callsim score`` wrote (``scores.json`` per target, ``<call>.scores.json`` per call); a run
not scored yet shows a line saying how to score it.  Versions: *heard* (the transcript of what the caller
heard, with timing tags), *text* (what the built-in assistant meant to say, from its own log) and
*reference* (the dataset's reference replies: the ceiling).

Under each target's table, the judge's verdicts on the calls (was the caller's goal met, was the preset
respected: :mod:`voice.metrics.scoring.verdicts`): the counts and rates, then each call's verdict with its
reason, because a rate alone does not say which calls to listen to.  Each call's own section repeats its
verdict above its turn scores.
"""

from __future__ import annotations

from html import escape

from voice.app.report.data import RunView, TargetView
from voice.app.run.score import heard_minus_text, score_cell
from voice.metrics.model.score_files import CallScores, ScoresSummary
from voice.metrics.scoring.calibration import judge_label
from voice.metrics.scoring.coverage import NOT_COVERED
from voice.metrics.scoring.verdicts import NOT_JUDGED, GoalSummary, goal_lines, percent, verdict_text
from voice.metrics.scoring.vocabulary import DIMENSIONS, GOAL_MET, PRESET_RESPECTED

VERSIONS = ("heard", "text", "reference")


def dimension_rows(summary: ScoresSummary) -> tuple[list[str], list[list[str]]]:
    """Header and rows of one target's seven-dimension table."""
    versions = [v for v in VERSIONS if v in summary.dimensions]
    compared = summary.text_vs_heard is not None
    header = ["dimension", *versions] + (["heard − text (95% CI)"] if compared else [])
    rows = []
    for dim in DIMENSIONS:
        row = [dim.replace("_", " "), *(score_cell(summary.cell(v, dim), "(n={})") for v in versions)]
        if compared:
            row.append(heard_minus_text(summary, dim))
        rows.append(row)
    return header, rows


def goal_rows(block: GoalSummary) -> tuple[list[str], list[list[str]]]:
    """Header and rows of one target's verdict counts (``scores.json``'s ``goal``): the caller's goal, then
    the preset."""
    answers = list(dict.fromkeys((*GOAL_MET, *PRESET_RESPECTED, NOT_JUDGED)))
    header = ["verdict (judge)", *(a.replace("_", " ") for a in answers), "rate"]
    met_rate = f"{percent(block['met_rate'])} met, {percent(block['met_or_partly_rate'])} met or partly"
    kept_rate = f"{percent(block['preset_respected_rate'])} respected"
    rows = []
    for label, counts, rate in (
        ("caller's goal met", block["caller_goal_met"], met_rate),
        ("preset respected", block["preset_respected"], kept_rate),
    ):
        rows.append([label, *(str(counts[a]) if a in counts else "-" for a in answers), rate])
    return header, rows


def call_verdicts(t: TargetView) -> list[list[str]]:
    """Per call of the target: its id, the goal verdict and the preset verdict, each with its reason."""
    rows = []
    for c in t.calls:
        scores = t.call_scores.get(c.metrics.call_id)
        if scores is not None and scores.goal is not None:
            rows.append([c.metrics.call_id, *verdict_text(scores.goal)])
    return rows


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _goal_html(t: TargetView, summary: ScoresSummary) -> str:
    if summary.goal is None:
        return ""
    per_call = call_verdicts(t)
    calls = (
        f"<details><summary>each call's verdict ({len(per_call)})</summary>"
        + _html_table(["call", "caller's goal met", "preset respected"], per_call)
        + "</details>"
        if per_call
        else ""
    )
    return _html_table(*goal_rows(summary.goal)) + calls


def scores_html(run: RunView) -> str:
    parts = []
    for t in run.targets:
        summary = t.scores
        if summary is None:
            parts.append(f'<p class="meta">{escape(t.target)}: not scored yet (callsim score FOLDER)</p>')
            continue
        header, rows = dimension_rows(summary)
        head = "".join(f"<th>{escape(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
        parts.append(
            f"<h3>{escape(t.target)} · judge {escape(judge_label(summary.judge))} · "
            f"{summary.calls} calls</h3><table><tr>{head}</tr>{body}</table>" + _goal_html(t, summary)
        )
    note = (
        '<p class="meta">1-5 per assistant turn, mean over the turns a judge could score (n); "not scored" '
        'where it could not decide, "not covered by annotations" where the dialogue\'s annotations give the '
        "checklist judge nothing to check (the judge's blind figures: scripts/bench_judge --blind). Heard: "
        "what the caller heard (transcribed, with timing tags); text: what "
        "the assistant meant to say (its own log); reference: the dataset's replies. Dialogue rhythm is the "
        "measured timing score. Verdicts: the judge's, per call as heard; rates over the calls it judged "
        "(the checklist judge cannot judge a goal). Rubric: docs/scoring.md.</p>"
    )
    return "".join(parts) + note


def scores_md(run: RunView) -> list[str]:
    out: list[str] = []
    for t in run.targets:
        summary = t.scores
        if summary is None:
            continue
        header, rows = dimension_rows(summary)
        label = judge_label(summary.judge)
        out += ["", f"### {t.target} (judge {label}; {summary.calls} calls)", ""]
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
        out += ["| " + " | ".join(r) + " |" for r in rows]
        if summary.goal is not None:
            out += ["", *(f"- {line}" for line in goal_lines(summary.goal))]
            per_call = call_verdicts(t)
            if per_call:
                out += [
                    "",
                    "| call | caller's goal met (judge) | preset respected (judge) |",
                    "|---|---|---|",
                ]
                out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in per_call]
    return out


def _md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def call_scores_html(t: TargetView, call_id: str) -> str:
    """One call's heard turns, scored: a row per turn, each dimension's score with its reason on hover."""
    scores = t.call_scores.get(call_id)
    if scores is None or t.scores is None:
        return ""
    head = "<th>turn</th>" + "".join(f"<th>{escape(d.replace('_', ' '))}</th>" for d in DIMENSIONS)
    rows = []
    for turn in scores.versions.get("heard", []):
        cells = []
        for d in DIMENSIONS:
            s = turn.scores.get(d)
            reason = s.reason.strip() if s else ""  # a tooltip only where there is one to show
            value = str(s.score) if s and s.score is not None else "n/g" if _uncovered(reason) else "–"
            cells.append(f'<td title="{escape(reason)}">{value}</td>' if reason else f"<td>{value}</td>")
        rows.append(f"<tr><td>T{turn.turn + 1}</td>{''.join(cells)}</tr>")
    judge = escape(t.scores.judge)  # the judge of every call's scores kept (load_run's)
    return (
        _call_verdict_html(scores)
        + f'<p class="meta">scores by {judge} (hover a score for its reason; – not scored; '
        f"n/g {NOT_COVERED})</p>"
        f"<table>{head}{''.join(rows)}</table>"
    )


def _uncovered(reason: str) -> bool:
    return reason.startswith(NOT_COVERED)


def _call_verdict_html(scores: CallScores) -> str:
    """The judge's verdict on one call, each answer with its reason (nothing if none was recorded)."""
    if scores.goal is None:
        return ""
    goal, preset = verdict_text(scores.goal)
    return (
        f"<p class=\"meta\">judge's verdict: caller's goal met: {escape(goal)}<br>"
        f"preset respected: {escape(preset)}</p>"
    )
