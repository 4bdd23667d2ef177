"""Metrics → JSON-ready dicts, run summaries with breakdowns, and the printed table.

Every pooled figure (summary, breakdown row, comparison) is computed from the same per-call value lists
(:func:`unit_values`), so the summary in ``results.json``, the report and ``callsim compare`` can never
disagree on what a figure means.  The call is the unit: a comparison resamples calls, not turns.

The files are versioned (``schema_version``; every key, its unit and meaning: ``docs/results.md``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice.errors import RecordingError
from voice.files import atomic_write_bytes
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.goal import goal_line, goal_summary, goal_values
from voice.metrics.reduce import percentile, reduce
from voice.metrics.simulator import assistant_calls, outcome_words, simulator_block
from voice.text.table import display_width, text_table  # noqa: F401 (the tables' home; imported from here too)

# The versions of the files written here: ``results.json`` (run and target) and ``<call>.metrics.json``.
# Adding a key keeps the version; removing or renaming one, or changing its unit or meaning, raises it.
RESULTS_SCHEMA = "callsim.results/1"
METRICS_SCHEMA = "callsim.metrics/1"

# Per-call labels a run is broken down by (stored in every call's JSON next to its metrics).
BREAKDOWNS: tuple[tuple[str, str], ...] = (
    ("scenario", "by_scenario"),
    ("preset_type", "by_preset_type"),
    ("relation", "by_relation"),
)
# Labels only some runs have (a reactive caller's persona): broken down by only when a call carries one.
OPTIONAL_BREAKDOWNS: tuple[tuple[str, str], ...] = (
    ("persona", "by_persona"),
    (
        "voice",
        "by_voice",
    ),  # the caller's voice and its sex (voice.metrics.by_voice: with bootstrap intervals)
    ("voice_sex", "by_sex"),
)
# CallSim's frame pacing: a call whose frames went out later than this (p99) has suspect timings.
PACING_BOUND_MS = 5.0


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


def figures(calls: Sequence[CallMetrics]) -> dict[str, Any]:
    """A flat row of every headline figure over ``calls`` (a breakdown row, a report table row)."""
    row: dict[str, Any] = {
        "calls": len(calls),
        "calls_failed": sum(1 for c in calls if c.failed),
        "turns": sum(c.caller_turns_planned for c in calls),
    }
    for f in FIGURES:
        row[f.key] = reduce(pooled(calls, f.values), f.reduce)
    return row


def call_to_json(m: CallMetrics, labels: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A call's metrics with derived figures and its labels (scenario, preset type, relation, repeat...).

    The object of ``<call>.metrics.json``, and of each of ``calls`` in a target's ``results.json``.
    """
    d = {"schema_version": METRICS_SCHEMA, **dataclasses.asdict(m)}
    d["turns_completed"] = m.turns_completed
    d["turns_of_call"] = m.turns_of_call
    d["served"] = m.served
    d["false_starts"] = m.false_starts
    d["latency_p50_ms"] = percentile(m.latencies_ms, 50)
    d["latency_p90_ms"] = percentile(m.latencies_ms, 90)
    d["rhythm"] = m.rhythm
    if labels:
        d.update(labels)
    return d


def summarize(calls: Sequence[CallMetrics]) -> dict[str, Any]:
    """Overall figures across calls: latency percentiles over every replied turn, barge-in success, …"""
    lat = pooled(calls, "latency_ms")
    barge = [b for c in calls for b in c.barge_ins]
    stops = [b.stop_latency_ms for b in barge if b.stop_latency_ms is not None]
    firsts = [c.first_word_ms for c in calls if c.first_word_ms is not None]
    rhythm = [int(x) for x in pooled(calls, "rhythm")]
    silences = [c.longest_silence_ms for c in calls if c.longest_silence_ms is not None]
    return {
        "calls": len(calls),
        "calls_failed": sum(1 for c in calls if c.failed),
        "calls_served": sum(1 for c in calls if c.served),
        "caller_turns": sum(c.caller_turns_planned for c in calls),
        "caller_turns_of_call": sum(c.turns_of_call for c in calls),
        "caller_turns_cut_by_hangup": sum(c.caller_turns_cut for c in calls),
        "false_starts": sum(c.false_starts for c in calls),
        "caller_turns_spoken": sum(len(c.turns) for c in calls),
        "turns_completed": sum(c.turns_completed for c in calls),
        "latency_ms": {
            "n": len(lat),
            "p50": reduce(lat, "p50"),
            "p90": reduce(lat, "p90"),
            "p95": reduce(lat, "p95"),
            "p99": reduce(lat, "p99"),
            "mean": reduce(lat, "mean"),
        },
        "barge_in": {
            "n": len(barge),
            "successes": sum(1 for b in barge if b.success),
            "unscripted": sum(1 for b in barge if not b.scripted),
            "success_rate": reduce(pooled(calls, "barge_in_success"), "mean"),
            "never_stopped": sum(1 for b in barge if b.stop_latency_ms is None),
            "stop_latency_p50_ms": percentile(stops, 50),
            "stop_latency_p90_ms": percentile(stops, 90),
            "stop_latency_p95_ms": percentile(stops, 95),
        },
        "pause_takeover_rate": reduce(pooled(calls, "pause_takeover"), "mean"),
        "backchannel_carry_on_rate": reduce(pooled(calls, "backchannel_carry_on"), "mean"),
        "first_word_p50_ms": percentile(firsts, 50),
        "rhythm_mean": reduce(rhythm, "mean"),
        "rhythm_histogram": {str(k): rhythm.count(k) for k in range(1, 6)},
        "overlap_ms_total": sum(c.overlap_ms for c in calls),
        "longest_silence_ms_max": max(silences) if silences else None,
        "pacing_late_ms": pacing_summary(calls),
        # the reactive caller's goal: only when a call had one (a scripted run's summary is unchanged)
        **({"goal": goal_summary([c.goal for c in calls])} if any(c.goal for c in calls) else {}),
    }


def pacing_summary(calls: Sequence[CallMetrics]) -> dict[str, Any]:
    """CallSim's own lateness sending the caller's frames, over the calls that measured it: the worst
    call's p99, the latest frame of all, and how many calls were over :data:`PACING_BOUND_MS` (p99)."""
    p99s = [c.pacing_late_ms["p99"] for c in calls if c.pacing_late_ms]
    late = [c.pacing_late_ms["max"] for c in calls if c.pacing_late_ms]
    over = sum(1 for x in p99s if x > PACING_BOUND_MS)
    return {"p99_worst": max(p99s, default=None), "max": max(late, default=None), "calls_over_bound": over}


def pacing_text(p: Mapping[str, Any] | None) -> str:
    """``p99 0.3 ms, max 93 ms`` (flagged over the bound), or ``-`` for calls that did not measure it."""
    if not p or p.get("p99_worst") is None:
        return "-"
    flag = f" (FLAGGED: p99 over {PACING_BOUND_MS:g} ms in {p['calls_over_bound']} call(s))"
    return f"p99 {p['p99_worst']:.1f} ms, max {p['max']:.0f} ms" + (flag if p.get("calls_over_bound") else "")


PACING_NOTE = (
    "caller pacing (how late CallSim itself sent the caller's audio: the simulator's, not the assistant's)"
)


def turns_reached(reached: int, planned: int) -> str:
    """The caller turns of a call (or calls): ``3`` when every planned one was said, else ``1 reached of 3
    planned`` (the assistant hung up, or the call failed, before the others)."""
    return str(planned) if reached >= planned else f"{reached} reached of {planned} planned"


def breakdown(
    calls: Sequence[CallMetrics], labels: Sequence[Mapping[str, Any]], key: str
) -> dict[str, dict[str, Any]]:
    """:func:`figures` per value of one label (e.g. per scenario), in first-seen order."""
    groups: dict[str, list[CallMetrics]] = {}
    for c, lab in zip(calls, labels, strict=True):
        groups.setdefault(str(lab.get(key, "?")), []).append(c)
    return {value: figures(group) for value, group in groups.items()}


def summarize_run(
    calls: Sequence[CallMetrics], labels: Sequence[Mapping[str, Any]], redo: str = ""
) -> dict[str, Any]:
    """:func:`summarize` plus the headline figures and their breakdowns by scenario, preset type, relation,
    by persona when the calls have one (a reactive caller's), and by caller voice and sex, with intervals
    and the worst voice, when they have voices (:mod:`voice.metrics.by_voice`).

    Every figure is over the assistant's calls only: a call CallSim failed on (:mod:`voice.metrics.simulator`)
    is counted in ``simulator_failures`` instead, with ``redo``, the command that makes it again.
    """
    failures = simulator_block(calls, redo)
    calls, labels = assistant_calls(calls, labels)
    out = summarize(calls)
    out["simulator_failures"] = failures
    out["figures"] = figures(calls)
    for key, name in BREAKDOWNS:
        out[name] = breakdown(calls, labels, key)
    for key, name in OPTIONAL_BREAKDOWNS:
        if any(key in lab for lab in labels):
            out[name] = breakdown(calls, labels, key)
    from voice.metrics.by_voice import voice_blocks  # (it imports this module's figures)

    out.update(voice_blocks(calls, labels))
    return out


def write_json(path: Path, obj: Any) -> None:
    """Atomically write pretty JSON (UTF-8, Chinese kept readable)."""
    atomic_write_bytes(path, (json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n").encode())


def schema_number(version: str, name: str) -> int:
    """The number in a ``schema_version`` such as ``callsim.results/1``; ValueError if not ``name``'s."""
    prefix, _, number = version.rpartition("/")
    if prefix != name or not number.isdigit():
        raise ValueError(f"schema {version!r} is not a version of {name!r}")
    return int(number)


def check_schema(doc: dict[str, Any], expected: str, where: object) -> None:
    """Refuse a file written for a schema this CallSim does not know (another kind, or a newer version).

    A file without ``schema_version`` predates versioning (CallSim 0.1) and is read as version 1; keys
    unknown to this version are ignored by every reader.
    """
    version = doc.get("schema_version", expected)
    name = expected.rpartition("/")[0]
    try:
        number = schema_number(str(version), name)
    except ValueError as exc:
        raise RecordingError(f"{where}: {exc}") from exc
    if number > schema_number(expected, name):
        raise RecordingError(
            f"{where}: written for {version}, newer than this CallSim reads ({expected}): upgrade CallSim"
        )


def read_results(folder: Path) -> dict[str, Any]:
    path = folder / "results.json"
    try:
        doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RecordingError(f"{folder}: no results.json (not a CallSim run folder)") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise RecordingError(f"{path}: unreadable: {exc}") from exc
    if not isinstance(doc, dict):
        raise RecordingError(f"{path}: not a results object")
    check_schema(doc, RESULTS_SCHEMA, path)
    return doc


def target_folders(folder: Path) -> list[tuple[str, Path]]:
    """The (target, folder) pairs of a run folder, or the one of a target folder."""
    doc = read_results(folder)
    if doc.get("kind") == "run":
        return [(str(t["target"]), folder / str(t["folder"])) for t in doc.get("targets", [])]
    if "calls" in doc:
        return [(str(doc.get("target", folder.name)), folder)]
    raise RecordingError(f"{folder / 'results.json'}: neither a run nor a target result")


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


def format_table(calls: Sequence[CallMetrics], summary: dict[str, Any]) -> str:
    """A plain-text table: one row per call, then the overall row; with a reactive caller, each call's goal
    verdict and a line on the goals under the table."""
    header: tuple[str, ...] = ("call", "outcome", "answered", "caller turns", "p50 ms", "p90 ms", "barge-in")
    header += ("1st word ms", "rhythm", "served")
    goals = "goal" in summary
    header += ("goal",) * goals
    rows: list[tuple[str, ...]] = []
    for c in calls:
        b = c.barge_ins
        rows.append(
            (
                c.call_id,
                outcome_words(c),
                f"{c.turns_completed}/{c.turns_of_call}",
                turns_reached(len(c.turns), c.caller_turns_planned),
                fmt_ms(percentile(c.latencies_ms, 50)),
                fmt_ms(percentile(c.latencies_ms, 90)),
                fmt_count(sum(1 for x in b if x.success), len(b)),
                fmt_ms(c.first_word_ms),
                fmt_score(c.rhythm),
                "yes" if c.served else "no",
                *([(c.goal.met or "-") if c.goal else "-"] if goals else []),
            )
        )
    lat, bi = summary["latency_ms"], summary["barge_in"]
    rows.append(
        (
            "ALL",
            f"{summary['calls'] - summary['calls_failed']}/{summary['calls']} ran",
            f"{summary['turns_completed']}/{summary['caller_turns_of_call']}",
            turns_reached(summary["caller_turns_spoken"], summary["caller_turns"]),
            fmt_ms(lat["p50"]),
            fmt_ms(lat["p90"]),
            fmt_count(bi["successes"], bi["n"]),
            fmt_ms(summary["first_word_p50_ms"]),
            fmt_score(summary["rhythm_mean"]),
            f"{summary['calls_served']}/{summary['calls']}",
            *([fmt_rate(summary["goal"]["goal_met_rate"]) + " met"] if goals else []),
        )
    )
    table = text_table(header, rows[:-1], footer=rows[-1])
    if (pacing := pacing_text(summary.get("pacing_late_ms"))) != "-":
        table += f"\n{PACING_NOTE}: {pacing}"
    return table + ("\n" + goal_line(summary["goal"]) if goals else "")
