"""Robustness by caller voice: the assistant's figures per voice and per sex, each with a bootstrap
interval, and the voice on which it does worst.

A bot whose ASR or turn-taking only works for one speaker scores well when every caller is that speaker;
with many voices (:mod:`voice.app.run.caller_voices`) its summary says how much it depends on who calls.
``by_voice`` / ``by_sex`` rows are :func:`voice.metrics.figures.figures` over the group's calls plus
``ci95``: for each of :data:`CI_FIGURES`, the percentile interval of 1,000 bootstrap resamples of the
group's calls (:func:`voice.metrics.bootstrap.bootstrap_interval`; none under two calls with values).

``worst_voice`` holds, for every figure, its worst value over the voices (the highest for latencies and
false starts, the lowest for rates and scores) and in ``of`` the voice it belongs to: a gate
``worst_voice.latency_p90_ms>1500`` breaks when any voice's p90 is over 1.5 s.  ``worst_voice.voice`` names
the voice the assistant does worst on overall: the lowest answered rate, then the highest latency p90,
then the lowest rhythm.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from voice.metrics.bootstrap import bootstrap_interval
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.figures import FIGURES, figures, fmt_figure, unit_values
from voice.metrics.model.call_record import Labels
from voice.metrics.model.summary import Breakdown, FigureRow, Summary, WorstVoice
from voice.text.table import text_table

CI_FIGURES = ("latency_p50_ms", "latency_p90_ms", "answered_rate", "barge_in_success_rate", "rhythm_mean")
CI_RESAMPLES = 1000
HIGHER_IS_WORSE = frozenset({"ms", "count"})  # units; and the false-start rate (see :func:`_worse_high`)
_BY_KEY = {f.key: f for f in FIGURES}


def group_rows(calls: Sequence[CallMetrics], labels: Sequence[Labels], key: str) -> Breakdown:
    """Per value of the label ``key`` (``voice``, ``voice_sex``): the figures and their intervals."""
    groups: dict[str, list[CallMetrics]] = {}
    for c, lab in zip(calls, labels, strict=True):
        groups.setdefault(str(lab.get(key, "?")), []).append(c)
    return {value: _row(group) for value, group in sorted(groups.items())}


def _row(calls: Sequence[CallMetrics]) -> FigureRow:
    ci: dict[str, tuple[float, float] | None] = {}
    for key in CI_FIGURES:
        f = _BY_KEY[key]
        units = [unit_values(c)[f.values] for c in calls]
        interval = bootstrap_interval(units, f.reduce, n_resamples=CI_RESAMPLES)
        ci[key] = None if interval is None else (round(interval[0], 4), round(interval[1], 4))
    return dataclasses.replace(figures(calls), ci95=ci)


def _worse_high(key: str) -> bool:
    return _BY_KEY[key].unit in HIGHER_IS_WORSE or key == "false_start_rate"


def worst_voice(by_voice: Mapping[str, FigureRow]) -> WorstVoice:
    """Each figure's worst value over the voices, whose it is (``of``), and the worst voice overall."""
    worst: dict[str, float | None] = {}
    of: dict[str, str | None] = {}
    for f in FIGURES:
        seen = [(value, voice) for voice, row in by_voice.items() if (value := row.get(f.key)) is not None]
        if not seen:
            worst[f.key], of[f.key] = None, None
            continue
        value, voice = max(seen) if _worse_high(f.key) else min(seen)
        worst[f.key], of[f.key] = value, voice

    def rank(item: tuple[str, FigureRow]) -> tuple[float, float, float]:
        row = item[1]
        answered, p90, rhythm = row.get("answered_rate"), row.get("latency_p90_ms"), row.get("rhythm_mean")
        return (
            1.0 if answered is None else answered,
            -(p90 if p90 is not None else 0.0),
            5.0 if rhythm is None else rhythm,
        )

    name = min(by_voice.items(), key=rank)[0] if by_voice else None
    return WorstVoice(len(by_voice), worst, of, name)


def voice_blocks(calls: Sequence[CallMetrics], labels: Sequence[Labels]) -> dict[str, Breakdown]:
    """``by_voice`` and ``by_sex``, with intervals, of a run whose calls carry voices (else nothing); the
    worst voice is :func:`worst_voice` of the first."""
    if not any("voice" in lab for lab in labels):
        return {}
    return {"by_voice": group_rows(calls, labels, "voice"), "by_sex": group_rows(calls, labels, "voice_sex")}


def voice_table(summary: Summary) -> str:
    """The terminal's by-voice table under a target's summary ("" for a run without voices): per voice its
    sex, calls, answered, latency p50 and p90 with their intervals, barge-in success, rhythm; the worst."""
    by_voice, worst = summary.by_voice, summary.worst_voice
    if not by_voice:
        return ""
    shown = (("answered_rate", "rate"), ("latency_p50_ms", "ms"), ("latency_p90_ms", "ms"))
    rows = []
    for voice, row in by_voice.items():
        cells = [voice, _sex(voice), str(row.calls)]
        for key, unit in shown:
            ci = (row.ci95 or {}).get(key)
            text = fmt_figure(row.get(key), unit)
            cells.append(text + (f" [{fmt_figure(ci[0], unit)}, {fmt_figure(ci[1], unit)}]" if ci else ""))
        cells += [
            fmt_figure(row.get("barge_in_success_rate"), "rate"),
            fmt_figure(row.get("rhythm_mean"), "score"),
        ]
        rows.append(cells)
    header = ["caller voice", "sex", "calls", "answered", "latency p50 ms", "p90 ms", "barge-in", "rhythm"]
    name = worst.voice if worst is not None else None
    voices = worst.voices if worst is not None else None
    line = f"worst voice: {name} (of {voices}; 95 % intervals over each voice's calls)"
    return text_table(header, rows) + ("\n" + line if name else "")


def _sex(voice: str) -> str:
    from voice.speech.voices import CATALOGUE

    v = CATALOGUE.get(voice)
    return (v.sex or "-") if v is not None else "-"
