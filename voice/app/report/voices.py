"""Robustness by caller voice in the reports: per voice and per sex, the assistant's headline figures with
their bootstrap 95 % intervals, the seven CallBench dimensions when the run was scored, and the voice it
does worst on (:mod:`voice.metrics.by_voice`); a run without voices has no such section.

The rows are read from ``results.json`` (``by_voice``, ``by_sex``, ``worst_voice``) and ``scores.json``
(its ``by_voice``/``by_sex`` rows), never recomputed, so the report says what the summary says.
"""

from __future__ import annotations

from voice.app.report.data import RunView, TargetView
from voice.metrics.figures import fmt_figure
from voice.metrics.model.score_files import DimensionRow
from voice.metrics.model.summary import FigureRow
from voice.metrics.scoring.vocabulary import DIMENSIONS

VOICE_BLOCKS = {"by_voice": "caller voice", "by_sex": "caller sex"}  # rendered here, not as plain breakdowns
_FIGURES = (  # (key, header, unit)
    ("answered_rate", "answered", "rate"),
    ("latency_p50_ms", "latency p50", "ms"),
    ("latency_p90_ms", "p90", "ms"),
    ("barge_in_success_rate", "barge-in success", "rate"),
    ("rhythm_mean", "rhythm", "score"),
)


def _value(value: float | None, unit: str) -> str:
    return fmt_figure(value, unit) + (" ms" if unit == "ms" and value is not None else "")


def _cell(row: FigureRow, key: str, unit: str) -> str:
    """A figure of a voice's (or sex's) row, with its interval when it has one."""
    ci = (row.ci95 or {}).get(key)
    return _value(row.get(key), unit) + (
        f" [{fmt_figure(ci[0], unit)}, {fmt_figure(ci[1], unit)}]" if ci else ""
    )


def _dimensions(t: TargetView, block: str) -> dict[str, DimensionRow]:
    """The scores' rows of ``block`` (``by_voice``, ``by_sex``), group → dimension → cell; {} if unscored."""
    return t.scores.breakdowns.get(block, {}) if t.scores else {}


def has_voices(run: RunView) -> bool:
    return any("by_voice" in t.summary.breakdowns for t in run.targets)


def voice_tables(run: RunView) -> list[tuple[str, list[str], list[list[str]]]]:
    """Per block (caller voice, caller sex): its title, header and rows (one per target and group)."""
    out = []
    for block, title in VOICE_BLOCKS.items():
        scored = any(_dimensions(t, block) for t in run.targets)
        header = [title, "target", "calls", *(h for _, h, _ in _FIGURES), *(DIMENSIONS if scored else ())]
        rows = []
        for t in run.targets:
            dims = _dimensions(t, block)
            for group, row in sorted(t.summary.breakdowns.get(block, {}).items(), key=lambda kv: kv[0]):
                cells = [group, t.target, str(row.calls), *(_cell(row, k, u) for k, _, u in _FIGURES)]
                if scored:
                    scores = dims.get(group, {})
                    cells += [
                        fmt_figure(c.mean if (c := scores.get(d)) else None, "score") for d in DIMENSIONS
                    ]
                rows.append(cells)
        if rows:
            out.append((title, header, rows))
    return out


def worst_voices(run: RunView) -> list[tuple[str, str, str, int]]:
    """Per target with voices: (target, the voice it does worst on, that voice's answered / p50 / p90, of
    how many voices)."""
    out = []
    for t in run.targets:
        worst = t.summary.worst_voice
        if worst is None or not worst.voice:
            continue
        row = (t.summary.by_voice or {}).get(worst.voice)
        said = ", ".join(f"{h} {_value(row.get(k) if row else None, u)}" for k, h, u in _FIGURES[:3])
        out.append((t.target, worst.voice, said, worst.voices))
    return out


VOICE_NOTE = (
    "Every figure with its bootstrap 95 % interval over that voice's calls (none under two calls); the seven "
    "dimensions from scores.json when the run was scored. The worst voice: the lowest answered rate, then "
    "the highest latency p90, then the lowest rhythm (results.json's worst_voice, which a --fail-if gate can "
    "name: worst_voice.latency_p90_ms>1500)."
)
