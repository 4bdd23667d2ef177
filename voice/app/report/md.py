"""``report.md``: the run's settings and summary as Markdown tables, for terminals, CI logs and pull requests.

First, when CallSim itself failed on calls, one banner: what failed, on which calls, and the command that
redoes them (:mod:`voice.metrics.simulator`); when the assistant failed calls, they follow, by outcome, each
kind with what to do (:mod:`voice.metrics.failed_calls`).  Then settings, the summary and cue tables (latency
p50/p90/p95/p99, barge-in stop latency p50/p90/p95, false starts, calls ran and served), a reactive caller's
goals, the breakdowns, one row per call (with why it ended), when an assistant logged what it heard, its
own ASR next to what the caller said, and a reactive caller's verdict and decisions per call.
"""

from __future__ import annotations

from collections.abc import Sequence

from voice.app.report.data import (
    BREAKDOWN_COLUMNS,
    BREAKDOWN_TITLES,
    CALL_COLUMNS,
    CUE_COLUMNS,
    PACING_NOTE,
    SUMMARY_COLUMNS,
    TURNS_NOTE,
    Column,
    RunView,
    banner,
    describe_run,
    failed,
    heard_by_assistant,
    run_settings,
)
from voice.app.report.goals import (
    DECISION_HEADER,
    GOAL_COLUMNS,
    GROUP_COLUMNS,
    NOTE,
    VERDICT_HEADER,
    decision_rows,
    goal_targets,
    group_tables,
    summary_rows,
    verdict_cells,
    verdict_line,
    wait_lines,
)
from voice.app.report.scores import scores_md
from voice.app.report.voices import VOICE_BLOCKS, VOICE_NOTE, has_voices, voice_tables, worst_voices
from voice.metrics.model.summary import Summary


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _per_target(run: RunView, columns: tuple[Column[Summary], ...]) -> str:
    return md_table(
        ["target", *(c[0] for c in columns)],
        [[t.target, *(f(t.summary) for _, f in columns)] for t in run.targets],
    )


def goals_md(run: RunView) -> list[str]:
    """The Caller goals section: per target, then per group (empty for a scripted run)."""
    rows = summary_rows(run)
    if not rows:
        return []
    out = ["", "## Caller goals", ""]
    out.append(
        md_table(["target", *(c[0] for c in GOAL_COLUMNS)], [[run.targets[i].target, *r] for i, r in rows])
    )
    out += ["", NOTE]
    for title, group in group_tables(run):
        out += ["", f"### Caller goals by {title}", ""]
        header = [title, "target", *(c[0] for c in GROUP_COLUMNS)]
        out.append(md_table(header, [[v, run.targets[i].target, *r] for v, i, r in group]))
    calls = [
        [t.target, c.metrics.call_id, *v]
        for _, t in goal_targets(run)
        for c in t.calls
        if (v := verdict_cells(c))
    ]
    out += ["", "### Each call's verdict", "", md_table(["target", "call", *VERDICT_HEADER], calls)]
    return out


def decisions_md(run: RunView) -> list[str]:
    """Each reactive call's verdict, decisions and waits (empty for a scripted run)."""
    out = []
    for _, t in goal_targets(run):
        for c in t.calls:
            line = verdict_line(c)
            if line is None:
                continue
            out += ["", f"### {t.target} · {c.metrics.call_id}", "", line + "."]
            if rows := decision_rows(c):
                out += ["", md_table(DECISION_HEADER, rows)]
            if waits := wait_lines(c):
                out += [
                    "",
                    "Caller late (the simulator's wait, not the assistant's): " + "; ".join(waits) + ".",
                ]
    return ["", "## Caller decisions", *out] if out else []


def failed_md(run: RunView) -> list[str]:
    """The assistant's failed calls as a quote block: per outcome its calls, one call's words, what to do."""
    head, groups = failed(run)
    if not groups:
        return []
    out = [f"> **{head}**", ">"]
    for g in groups:
        out.append(f"> - {g.line()}")
        out += [f">   - e.g. {g.example}"] if g.example else []
        out.append(f">   - what to do: {g.fix}")
    return [*out, ""]


SUMMARY_NOTE = (
    "Calls ran: did not fail; served: ran and every caller turn of the call was answered.  "
    + TURNS_NOTE
    + "  Latency: onset of the assistant's reply minus the end of the caller's speech, on the caller's side "
    "(negative: it started early).  False starts: assistant speech begun and abandoned while the caller was "
    "still talking.  Rhythm: mean 1-5 score per turn.  " + PACING_NOTE
)


def render_markdown(run: RunView) -> str:
    out = [f"# CallSim report: {run.title}", ""]
    if lines := banner(run):  # CallSim's own failures first: a quote block, the redo command as code
        head, *rest = lines
        redo = rest.pop()  # "  redo them: <command>"
        label, _, command = redo.strip().partition(": ")
        out += [f"> **{head}**", ">", *(f"> - {line.strip()}" for line in rest)]
        shown = f"`{command}`" if command.startswith("callsim ") else command  # else: what to rerun
        out += [f"> - {label}: {shown}", ""]
    out += failed_md(run)
    out += [f"- **{k}**: {v}" for k, v in describe_run(run)]
    out += ["", "## Settings", ""]
    out.append(md_table(["setting", "value"], run_settings(run)))
    out += ["", "## Summary", "", _per_target(run, SUMMARY_COLUMNS)]
    out += [
        "",
        SUMMARY_NOTE,
        "",
        "## Barge-ins, pauses and backchannels",
        "",
        _per_target(run, CUE_COLUMNS),
        "",
        "Stop latency: from the caller's first sound to the end of the assistant's speech, over the "
        "barge-ins it stopped for; success: it stopped within 1.5 s.",
    ]
    out += goals_md(run)
    dims = scores_md(run)
    if dims:
        out += ["", "## CallBench dimensions", *dims]
    if has_voices(run):
        out += ["", "## Robustness by caller voice", "", VOICE_NOTE, ""]
        out += [f"- {t}: worst on **{v}** ({said}), of {n} voices" for t, v, said, n in worst_voices(run)]
        for title, header, rows in voice_tables(run):
            out += ["", f"### By {title}", "", md_table(header, rows)]
    for name, title in BREAKDOWN_TITLES.items():
        if name in VOICE_BLOCKS:
            continue
        rows = [
            [value, t.target, *(f(row) for _, f in BREAKDOWN_COLUMNS)]
            for t in run.targets
            for value, row in t.summary.breakdowns.get(name, {}).items()
        ]
        if rows:
            rows.sort(key=lambda r: r[0])
            out += ["", f"## By {title}", ""]
            out.append(md_table([title, "target", *(c[0] for c in BREAKDOWN_COLUMNS)], rows))
    out += ["", "## Calls", ""]
    rows = [
        [t.target, c.metrics.call_id, *(f(c) for _, f in CALL_COLUMNS)] for t in run.targets for c in t.calls
    ]
    out.append(md_table(["target", "call", *(c[0] for c in CALL_COLUMNS)], rows))
    heard = [(t.target, *h) for t in run.targets for h in heard_by_assistant(t)]
    if heard:
        out += ["", "## What the assistant heard", ""]
        out.append("Its own ASR, from the `log` messages it sent, next to what the caller said.")
        out += [""]
        header = ["target", "call", "turn", "caller said", "assistant heard"]
        out.append(md_table(header, [[t, c, str(i + 1), said, got] for t, c, i, said, got in heard]))
    out += decisions_md(run)
    return "\n".join(out) + "\n"
