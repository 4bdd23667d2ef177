"""CallSim's own failures: calls that failed on the simulator's side, kept apart from the assistant's figures.

A call can fail because of CallSim rather than the assistant under test: the caller's line could not be
voiced (``caller_speech_failed``: the TTS engine raised or produced silence), or the built-in assistant's
process, which CallSim started, crashed (``assistant_crashed``).  Such a call measured nothing of the
assistant, so it counts in none of its figures (served, answered, latency, rhythm, the seven dimensions, the
breakdowns): :func:`assistant_calls` drops it before anything is pooled.  It is not hidden either: every
summary carries a ``simulator_failures`` block (:func:`simulator_block`), and the console summary and the
report open with one banner (:func:`banner_lines`) saying what failed, on which calls, and the command that
makes them again (a resume always remakes these outcomes: :data:`voice.app.run.failures.REDONE_ON_RESUME`).

A disk that refuses a write (:class:`~voice.errors.StorageError`) is CallSim's failure too, but it stops the
run before the call is recorded: the banner tells it from the run's ``partial`` object instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeVar

from voice.metrics.call_metrics import CallMetrics
from voice.metrics.model.blocks import SimulatorBlock, SimulatorReason
from voice.metrics.model.run_results import Partial, RunResults, TargetResults
from voice.metrics.model.summary import Summary

ASSISTANT_CRASHED = "assistant_crashed"  # the built-in assistant's process exited during the call
CALLER_SPEECH_FAILED = "caller_speech_failed"  # a caller line could not be voiced (TTS error or silence)

# Every outcome that is CallSim's failure, and what it means in words (for the banner and the docs).
SIMULATOR_OUTCOMES: dict[str, str] = {
    CALLER_SPEECH_FAILED: "the caller's line could not be voiced (the TTS engine failed or produced silence)",
    ASSISTANT_CRASHED: "the built-in assistant's process, started by CallSim, crashed during the call",
}

# What a redo says when the command line that made the run is not known (a run made through the API).
REDO_UNKNOWN = (
    "rerun the same command (without --fresh): a resume makes these calls again and keeps the others"
)

L = TypeVar("L")


def is_simulator_failure(call: CallMetrics) -> bool:
    """Whether the call failed on CallSim's side (it says nothing of the assistant)."""
    return call.outcome in SIMULATOR_OUTCOMES


def outcome_words(call: CallMetrics) -> str:
    """A call's outcome as tables show it: ``(FAILED)`` after an assistant's failure, ``(CALLSIM FAILED)``
    after CallSim's own."""
    if is_simulator_failure(call):
        return f"{call.outcome} (CALLSIM FAILED)"
    return call.outcome + (" (FAILED)" if call.failed else "")


def assistant_calls(calls: Sequence[CallMetrics], labels: Sequence[L]) -> tuple[list[CallMetrics], list[L]]:
    """The calls (with their labels) the assistant is judged on: all but CallSim's own failures."""
    kept = [(c, lab) for c, lab in zip(calls, labels, strict=True) if not is_simulator_failure(c)]
    return [c for c, _ in kept], [lab for _, lab in kept]


def simulator_block(calls: Sequence[CallMetrics], redo: str = "") -> SimulatorBlock:
    """A summary's ``simulator_failures``: how many, which calls, grouped by outcome, and how to redo them.

    ``reasons`` maps each outcome to its count, calls, meaning and the first call's ``detail`` (the
    engine's own words); ``redo`` is "" when there is nothing to redo (a string either way, so that only
    ``count`` is a figure a ``--fail-if`` gate can name).
    """
    failed = [c for c in calls if is_simulator_failure(c)]
    reasons: dict[str, SimulatorReason] = {}
    for c in failed:
        r = reasons.get(c.outcome) or SimulatorReason(0, [], SIMULATOR_OUTCOMES[c.outcome], c.detail)
        reasons[c.outcome] = dataclasses.replace(r, count=r.count + 1, calls=[*r.calls, c.call_id])
    return SimulatorBlock(
        count=len(failed),
        calls=[c.call_id for c in failed],
        reasons=reasons,
        redo=(redo or REDO_UNKNOWN) if failed else "",
    )


def ids_text(ids: Sequence[str], most: int = 12) -> str:
    """Call ids, comma-separated, the first ``most`` of them and how many more."""
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


Judged = tuple[str, int, SimulatorBlock]  # a target, the calls it was judged on, those CallSim failed on


def judged(target: str, summary: Summary | None) -> Judged:
    """A target's part in the banner, from its summary (none: no call of it was summarised)."""
    return (target, 0, SimulatorBlock()) if summary is None else (target, summary.calls, summary.failures)


def banner_lines(targets: Sequence[Judged], stopped: Partial | None = None) -> list[str]:
    """The one banner of a run's CallSim failures (``targets``: each, the calls it was judged on and its
    ``simulator_failures``), or [].

    ``stopped``: a stopped run's ``partial`` object (the disk refused a write, the built-in crashed).
    The first line says whose failure it is; then one line per reason with its calls; then the redo.
    """
    blocks = [(t, b) for t, _, b in targets if b.count]
    if not blocks and stopped is None:
        return []
    n = sum(b.count for _, b in blocks)
    total = sum(calls for _, calls, _ in targets) + n
    many = len(targets) > 1
    head = "CALLSIM FAILED"
    if n:
        head += f" on {n} of {total} call(s)"
    if stopped is not None:
        head += (", and the run stopped" if n else ": the run stopped") + f" ({stopped.stopped})"
    lines = [
        head + ". This is CallSim's failure, not the assistant's: these calls are left out of every figure.",
    ]
    grouped: dict[str, list[tuple[str, SimulatorReason]]] = {}
    for target, b in blocks:
        for outcome, r in b.reasons.items():
            grouped.setdefault(outcome, []).append((target, r))
    for outcome, parts in grouped.items():
        count = sum(r.count for _, r in parts)
        calls = [f"{c} ({t})" if many else str(c) for t, r in parts for c in r.calls]
        meaning = SIMULATOR_OUTCOMES.get(outcome, parts[0][1].meaning)
        lines.append(f"  {outcome}: {count} call(s), {meaning}: {ids_text(calls)}")
        if detail := parts[0][1].detail:
            lines.append(f"    e.g. {detail}")
    if stopped is not None and stopped.calls_not_made:
        lines.append(f"  not made: {stopped.calls_not_made} call(s), the run stopped before them")
    redo = next((b.redo for _, b in blocks if b.redo), "") or REDO_UNKNOWN
    lines.append(f"  redo them: {redo}")
    return lines


def results_banner(results: RunResults | TargetResults) -> list[str]:
    """:func:`banner_lines` of a ``results.json``: a run's (every target) or one target's."""
    if isinstance(results, RunResults):
        return banner_lines([judged(t.target, t.summary) for t in results.targets], results.partial)
    return banner_lines([judged(results.target, results.summary)], results.partial)
