"""Robustness by caller voice: the assistant's figures per voice and per sex, each with a bootstrap
interval, and the voice on which it does worst.

A bot whose ASR or turn-taking only works for one speaker scores well when every caller is that speaker;
with many voices (:mod:`voice.app.run.caller_voices`) its summary says how much it depends on who calls.
``by_voice`` / ``by_sex`` rows are :func:`voice.metrics.results.figures` over the group's calls plus
``ci95``: for each of :data:`CI_FIGURES`, the percentile interval of 1,000 bootstrap resamples of the
group's calls (:func:`voice.metrics.bootstrap.bootstrap_interval`; none under two calls with values).

``worst_voice`` holds, for every figure, its worst value over the voices (the highest for latencies and
false starts, the lowest for rates and scores) and in ``of`` the voice it belongs to: a gate
``worst_voice.latency_p90_ms>1500`` breaks when any voice's p90 is over 1.5 s.  ``worst_voice.voice`` names
the voice the assistant does worst on overall: the lowest answered rate, then the highest latency p90,
then the lowest rhythm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from voice.metrics.bootstrap import bootstrap_interval
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.results import FIGURES, figures, fmt_figure, unit_values
from voice.text.table import text_table

CI_FIGURES = ("latency_p50_ms", "latency_p90_ms", "answered_rate", "barge_in_success_rate", "rhythm_mean")
CI_RESAMPLES = 1000
HIGHER_IS_WORSE = frozenset({"ms", "count"})  # units; and the false-start rate (see :func:`_worse_high`)
_BY_KEY = {f.key: f for f in FIGURES}


def group_rows(calls: Sequence[CallMetrics], labels: Sequence[Mapping[str, Any]], key: str) -> dict[str, Any]:
    """Per value of the label ``key`` (``voice``, ``voice_sex``): the figures and their intervals."""
    groups: dict[str, list[CallMetrics]] = {}
    for c, lab in zip(calls, labels, strict=True):
        groups.setdefault(str(lab.get(key, "?")), []).append(c)
    return {value: _row(group) for value, group in sorted(groups.items())}


def _row(calls: Sequence[CallMetrics]) -> dict[str, Any]:
    row = figures(calls)
    ci: dict[str, list[float] | None] = {}
    for key in CI_FIGURES:
        f = _BY_KEY[key]
        units = [unit_values(c)[f.values] for c in calls]
        interval = bootstrap_interval(units, f.reduce, n_resamples=CI_RESAMPLES)
        ci[key] = None if interval is None else [round(interval[0], 4), round(interval[1], 4)]
    row["ci95"] = ci
    return row


def _worse_high(key: str) -> bool:
    return _BY_KEY[key].unit in HIGHER_IS_WORSE or key == "false_start_rate"


def worst_voice(by_voice: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Each figure's worst value over the voices, whose it is (``of``), and the worst voice overall."""
    out: dict[str, Any] = {"voices": len(by_voice)}
    of: dict[str, str | None] = {}
    for f in FIGURES:
        seen = [(row[f.key], voice) for voice, row in by_voice.items() if row.get(f.key) is not None]
        if not seen:
            out[f.key], of[f.key] = None, None
            continue
        value, voice = max(seen) if _worse_high(f.key) else min(seen)
        out[f.key], of[f.key] = value, voice
    out["of"] = of

    def rank(item: tuple[str, Mapping[str, Any]]) -> tuple[float, float, float]:
        row = item[1]
        answered, p90, rhythm = row.get("answered_rate"), row.get("latency_p90_ms"), row.get("rhythm_mean")
        return (
            1.0 if answered is None else answered,
            -(p90 if p90 is not None else 0.0),
            5.0 if rhythm is None else rhythm,
        )

    out["voice"] = min(by_voice.items(), key=rank)[0] if by_voice else None
    return out


def voice_blocks(calls: Sequence[CallMetrics], labels: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``by_voice``, ``by_sex`` and ``worst_voice`` of a run whose calls carry voices (else nothing)."""
    if not any("voice" in lab for lab in labels):
        return {}
    by_voice = group_rows(calls, labels, "voice")
    return {
        "by_voice": by_voice,
        "by_sex": group_rows(calls, labels, "voice_sex"),
        "worst_voice": worst_voice(by_voice),
    }


def voice_table(summary: Mapping[str, Any]) -> str:
    """The terminal's by-voice table under a target's summary ("" for a run without voices): per voice its
    sex, calls, answered, latency p50 and p90 with their intervals, barge-in success, rhythm; the worst."""
    by_voice, worst = summary.get("by_voice"), summary.get("worst_voice") or {}
    if not by_voice:
        return ""
    shown = (("answered_rate", "rate"), ("latency_p50_ms", "ms"), ("latency_p90_ms", "ms"))
    rows = []
    for voice, row in by_voice.items():
        cells = [voice, _sex(voice), str(row["calls"])]
        for key, unit in shown:
            ci = (row.get("ci95") or {}).get(key)
            text = fmt_figure(row.get(key), unit)
            cells.append(text + (f" [{fmt_figure(ci[0], unit)}, {fmt_figure(ci[1], unit)}]" if ci else ""))
        cells += [
            fmt_figure(row.get("barge_in_success_rate"), "rate"),
            fmt_figure(row.get("rhythm_mean"), "score"),
        ]
        rows.append(cells)
    header = ["caller voice", "sex", "calls", "answered", "latency p50 ms", "p90 ms", "barge-in", "rhythm"]
    name = worst.get("voice")
    line = f"worst voice: {name} (of {worst.get('voices')}; 95 % intervals over each voice's calls)"
    return text_table(header, rows) + ("\n" + line if name else "")


def _sex(voice: str) -> str:
    from voice.speech.voices import CATALOGUE

    v = CATALOGUE.get(voice)
    return (v.sex or "-") if v is not None else "-"
