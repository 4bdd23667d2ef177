"""Run summaries with breakdowns, and the printed table: what :mod:`voice.metrics.model` holds, computed.

Every pooled figure comes from the per-call value lists of :mod:`voice.metrics.figures`, so the summary in
``results.json``, the report and ``callsim compare`` can never disagree on what a figure means.  The files
are versioned (``schema_version``; every key, its unit and meaning: ``docs/results.md``); their types and
JSON are :mod:`voice.metrics.model`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from voice.metrics.by_voice import voice_blocks, worst_voice
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.figures import (
    figures,
    fmt_count,
    fmt_ms,
    fmt_rate,
    fmt_score,
    pooled,
)
from voice.metrics.goal import goal_line, goal_summary
from voice.metrics.model.blocks import BargeInBlock, LatencyBlock, PacingBlock
from voice.metrics.model.call_record import Labels
from voice.metrics.model.summary import BREAKDOWNS, OPTIONAL_BREAKDOWNS, Breakdown, Summary
from voice.metrics.reduce import percentile, reduce
from voice.metrics.simulator import assistant_calls, outcome_words, simulator_block
from voice.text.table import text_table

# CallSim's frame pacing: a call whose frames went out later than this (p99) has suspect timings.
PACING_BOUND_MS = 5.0


def summarize(calls: Sequence[CallMetrics]) -> Summary:
    """Overall figures across calls: latency percentiles over every replied turn, barge-in success, …
    (without the headline figures row, the breakdowns and CallSim's failures: :func:`summarize_run`)."""
    lat = pooled(calls, "latency_ms")
    barge = [b for c in calls for b in c.barge_ins]
    stops = [b.stop_latency_ms for b in barge if b.stop_latency_ms is not None]
    firsts = [c.first_word_ms for c in calls if c.first_word_ms is not None]
    rhythm = [int(x) for x in pooled(calls, "rhythm")]
    silences = [c.longest_silence_ms for c in calls if c.longest_silence_ms is not None]
    return Summary(
        calls=len(calls),
        calls_failed=sum(1 for c in calls if c.failed),
        calls_served=sum(1 for c in calls if c.served),
        caller_turns=sum(c.caller_turns_planned for c in calls),
        caller_turns_of_call=sum(c.turns_of_call for c in calls),
        caller_turns_cut_by_hangup=sum(c.caller_turns_cut for c in calls),
        false_starts=sum(c.false_starts for c in calls),
        caller_turns_spoken=sum(len(c.turns) for c in calls),
        turns_completed=sum(c.turns_completed for c in calls),
        latency_ms=LatencyBlock(
            n=len(lat),
            p50=reduce(lat, "p50"),
            p90=reduce(lat, "p90"),
            p95=reduce(lat, "p95"),
            p99=reduce(lat, "p99"),
            mean=reduce(lat, "mean"),
        ),
        barge_in=BargeInBlock(
            n=len(barge),
            successes=sum(1 for b in barge if b.success),
            unscripted=sum(1 for b in barge if not b.scripted),
            success_rate=reduce(pooled(calls, "barge_in_success"), "mean"),
            never_stopped=sum(1 for b in barge if b.stop_latency_ms is None),
            stop_latency_p50_ms=percentile(stops, 50),
            stop_latency_p90_ms=percentile(stops, 90),
            stop_latency_p95_ms=percentile(stops, 95),
        ),
        pause_takeover_rate=reduce(pooled(calls, "pause_takeover"), "mean"),
        backchannel_carry_on_rate=reduce(pooled(calls, "backchannel_carry_on"), "mean"),
        first_word_p50_ms=percentile(firsts, 50),
        rhythm_mean=reduce(rhythm, "mean"),
        rhythm_histogram={str(k): rhythm.count(k) for k in range(1, 6)},
        overlap_ms_total=sum(c.overlap_ms for c in calls),
        longest_silence_ms_max=max(silences) if silences else None,
        pacing_late_ms=pacing_summary(calls),
        # the reactive caller's goal: only when a call had one (a scripted run's summary is unchanged)
        goal=goal_summary([c.goal for c in calls]) if any(c.goal for c in calls) else None,
    )


def pacing_summary(calls: Sequence[CallMetrics]) -> PacingBlock:
    """CallSim's own lateness sending the caller's frames, over the calls that measured it: the worst
    call's p99, the latest frame of all, and how many calls were over :data:`PACING_BOUND_MS` (p99)."""
    p99s = [c.pacing_late_ms["p99"] for c in calls if c.pacing_late_ms]
    late = [c.pacing_late_ms["max"] for c in calls if c.pacing_late_ms]
    over = sum(1 for x in p99s if x > PACING_BOUND_MS)
    return PacingBlock(max(p99s, default=None), max(late, default=None), over)


def pacing_text(p: PacingBlock | None) -> str:
    """``p99 0.3 ms, max 93 ms`` (flagged over the bound), or ``-`` for calls that did not measure it."""
    if p is None or p.p99_worst is None:
        return "-"
    flag = f" (FLAGGED: p99 over {PACING_BOUND_MS:g} ms in {p.calls_over_bound} call(s))"
    return f"p99 {p.p99_worst:.1f} ms, max {p.max or 0:.0f} ms" + (flag if p.calls_over_bound else "")


PACING_NOTE = (
    "caller pacing (how late CallSim itself sent the caller's audio: the simulator's, not the assistant's)"
)


def turns_reached(reached: int, planned: int) -> str:
    """The caller turns of a call (or calls): ``3`` when every planned one was said, else ``1 reached of 3
    planned`` (the assistant hung up, or the call failed, before the others)."""
    return str(planned) if reached >= planned else f"{reached} reached of {planned} planned"


def breakdown(calls: Sequence[CallMetrics], labels: Sequence[Labels], key: str) -> Breakdown:
    """:func:`figures` per value of one label (e.g. per scenario), in first-seen order."""
    groups: dict[str, list[CallMetrics]] = {}
    for c, lab in zip(calls, labels, strict=True):
        groups.setdefault(str(lab.get(key, "?")), []).append(c)
    return {value: figures(group) for value, group in groups.items()}


def summarize_run(calls: Sequence[CallMetrics], labels: Sequence[Labels], redo: str = "") -> Summary:
    """:func:`summarize` plus the headline figures and their breakdowns by scenario, preset type, relation,
    by persona when the calls have one (a reactive caller's), and by caller voice and sex, with intervals
    and the worst voice, when they have voices (:mod:`voice.metrics.by_voice`).

    Every figure is over the assistant's calls only: a call CallSim failed on (:mod:`voice.metrics.simulator`)
    is counted in ``simulator_failures`` instead, with ``redo``, the command that makes it again.
    """
    failures = simulator_block(calls, redo)
    calls, labels = assistant_calls(calls, labels)
    breakdowns = {name: breakdown(calls, labels, key) for key, name in BREAKDOWNS}
    for key, name in OPTIONAL_BREAKDOWNS:
        if any(key in lab for lab in labels):
            breakdowns[name] = breakdown(calls, labels, key)
    voiced = voice_blocks(calls, labels)  # by_voice and by_sex again, with intervals (in the same place)
    breakdowns |= voiced
    worst = worst_voice(voiced["by_voice"]) if voiced else None
    return dataclasses.replace(
        summarize(calls),
        simulator_failures=failures,
        figures=figures(calls),
        breakdowns=breakdowns,
        worst_voice=worst,
    )


def format_table(calls: Sequence[CallMetrics], summary: Summary) -> str:
    """A plain-text table: one row per call, then the overall row; with a reactive caller, each call's goal
    verdict and a line on the goals under the table."""
    header: tuple[str, ...] = ("call", "outcome", "answered", "caller turns", "p50 ms", "p90 ms", "barge-in")
    header += ("1st word ms", "rhythm", "served")
    goal = summary.goal
    header += ("goal",) * (goal is not None)
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
                *([(c.goal.met or "-") if c.goal else "-"] if goal is not None else []),
            )
        )
    s, lat, bi = summary, summary.latency_ms, summary.barge_in
    rows.append(
        (
            "ALL",
            f"{s.calls - s.calls_failed}/{s.calls} ran",
            f"{s.turns_completed}/{s.caller_turns_of_call}",
            turns_reached(s.caller_turns_spoken, s.caller_turns),
            fmt_ms(lat.p50),
            fmt_ms(lat.p90),
            fmt_count(bi.successes, bi.n),
            fmt_ms(s.first_word_p50_ms),
            fmt_score(s.rhythm_mean),
            f"{s.calls_served}/{s.calls}",
            *([fmt_rate(goal.goal_met_rate) + " met"] if goal is not None else []),
        )
    )
    table = text_table(header, rows[:-1], footer=rows[-1])
    if (pacing := pacing_text(s.pacing_late_ms)) != "-":
        table += f"\n{PACING_NOTE}: {pacing}"
    return table + ("\n" + goal_line(goal) if goal is not None else "")
