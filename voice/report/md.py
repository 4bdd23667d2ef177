"""``report.md``: the run's summary as Markdown tables, for terminals, CI logs and pull requests."""

from __future__ import annotations

from collections.abc import Sequence

from voice.report.data import (
    BREAKDOWN_COLUMNS,
    BREAKDOWN_TITLES,
    CALL_COLUMNS,
    SUMMARY_COLUMNS,
    RunView,
    describe_run,
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def render_markdown(run: RunView) -> str:
    out = [f"# CallSim report: {run.title}", ""]
    out += [f"- **{k}**: {v}" for k, v in describe_run(run)]
    out += ["", "## Summary", ""]
    out.append(
        md_table(
            ["target", *(c[0] for c in SUMMARY_COLUMNS)],
            [[t.target, *(f(t.summary) for _, f in SUMMARY_COLUMNS)] for t in run.targets],
        )
    )
    out += [
        "",
        "Latency: onset of the assistant's reply minus the end of the caller's speech, on the caller's side "
        "(negative: it started early).  Rhythm: mean 1-5 score per turn.",
    ]
    for name, title in BREAKDOWN_TITLES.items():
        rows = [
            [value, t.target, *(f(row) for _, f in BREAKDOWN_COLUMNS)]
            for t in run.targets
            for value, row in t.summary.get(name, {}).items()
        ]
        if rows:
            rows.sort(key=lambda r: r[0])
            out += ["", f"## By {title}", ""]
            out.append(md_table([title, "target", *(c[0] for c in BREAKDOWN_COLUMNS)], rows))
    out += ["", "## Calls", ""]
    rows = [[t.target, c["call_id"], *(f(c) for _, f in CALL_COLUMNS)] for t in run.targets for c in t.calls]
    out.append(md_table(["target", "call", *(c[0] for c in CALL_COLUMNS)], rows))
    return "\n".join(out) + "\n"
