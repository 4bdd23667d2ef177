"""What a run leaves behind: each target's ``results.json``, whole or partial, and why a run stopped.

A run that stops early (the disk refused a write, the built-in assistant crashed) still writes what it can:
each target's ``results.json`` with the calls made so far and a ``partial`` object saying why it stopped
and which calls a rerun will make.  If even that cannot be written (a read-only folder), the error says so;
the calls' own files are all a resume needs anyway.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from voice.app.run.failures import REDONE_ON_RESUME
from voice.errors import AssistantCrashed, StorageError, explain
from voice.files import storage_error
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.model.call_record import CallRecord
from voice.metrics.model.jsonio import write_json
from voice.metrics.model.run_results import Partial, TargetResults
from voice.metrics.model.summary import Summary
from voice.metrics.results import summarize_run

if TYPE_CHECKING:
    from voice.app.run.calls import TargetRun
    from voice.app.run.jobs import CallJob

StopReason = StorageError | AssistantCrashed


@dataclass(frozen=True)
class TargetCalls:
    """One target's calls of a run (in job order) and the summary written to its ``results.json`` (None:
    that file could not be written)."""

    calls: list[CallMetrics]
    summary: Summary | None


@dataclass(frozen=True)
class RunOutcome:
    """Every target's calls, and for a run that stopped early, why and what it kept and wrote."""

    targets: list[TargetCalls]
    stop: StopReason | None = None
    not_made: int = 0  # calls a rerun makes (over all targets)
    unwritten: str = ""  # why a partial results.json could not be written ("" if every one was)

    def partial(self) -> Partial | None:
        """The ``partial`` object of a stopped run's ``results.json`` (None for a complete run)."""
        if self.stop is None:
            return None
        return Partial(str(self.stop), self.not_made)

    def summaries(self) -> list[Summary]:
        """Every target's summary, once the run is complete (each was written: a missing one raises)."""
        out = [t.summary for t in self.targets if t.summary is not None]
        if self.stop is not None or len(out) != len(self.targets):
            raise AssertionError("a run that stopped has no summary of every target")
        return out

    def stopped_error(self) -> StopReason | None:
        """The stop reason, told in full: what the run kept, what a rerun makes, what was written."""
        if self.stop is None:
            return None
        made = [m for t in self.targets for m in t.calls]
        redo = Counter(m.outcome for m in made if m.outcome in REDONE_ON_RESUME)
        told = f"{self.stop}; the batch stopped: {len(made)} call(s) recorded"
        told += f" ({', '.join(f'{n} {outcome}' for outcome, n in redo.items())})" if redo else ""
        told += f", {self.not_made} not made; a rerun resumes"
        told += " and makes those CallSim failed on again" if redo else ""
        told += (
            f"; results.json not written: {self.unwritten}" if self.unwritten else "; partial results.json"
        )
        return type(self.stop)(told)

    def raise_if_stopped(self) -> None:
        if (error := self.stopped_error()) is not None:
            raise error from self.stop


def write_target_results(
    run: TargetRun,
    jobs: Sequence[CallJob],
    calls: Sequence[CallMetrics | None],
    partial: Partial | None = None,
) -> TargetCalls:
    """``results.json`` of one target folder: settings, summary with breakdowns, every call made.

    ``calls[i]`` is None for a job a stopped run did not make; ``partial`` then says why (see module doc).
    """
    made = [CallRecord(m, run.settings.labels(j)) for m, j in zip(calls, jobs, strict=True) if m is not None]
    metrics = [r.metrics for r in made]
    summary = summarize_run(metrics, [r.labels for r in made], redo=run.settings.redo)
    results = TargetResults(
        target=run.settings.target,
        settings=run.settings.fingerprint(),
        summary=summary,
        calls=made,
        provenance=run.settings.provenance,
        partial=partial,
    )
    write_json(run.settings.out_dir / "results.json", results.to_json())
    return TargetCalls(metrics, summary)


def finish_run(
    runs: Sequence[TargetRun],
    jobs: Sequence[CallJob],
    results: Sequence[Sequence[CallMetrics | None]],
    stop: StopReason | None,
) -> RunOutcome:
    """Write every target's ``results.json`` (partial if the run stopped) and say how the run ended.

    A complete run's write errors propagate; a stopped run's are noted in the outcome, since its own stop
    reason is the news (and likely the same disk refusing).
    """
    not_made = sum(1 for calls in results for m in calls if m is None)
    if stop is None:
        return RunOutcome(
            [write_target_results(r, jobs, calls) for r, calls in zip(runs, results, strict=True)]
        )
    partial = Partial(str(stop), not_made)
    targets: list[TargetCalls] = []
    unwritten = ""
    for run, calls in zip(runs, results, strict=True):
        try:
            targets.append(write_target_results(run, jobs, calls, partial))
        except (StorageError, OSError) as exc:
            unwritten = unwritten or explain(storage_error(exc) or exc)
            targets.append(TargetCalls([m for m in calls if m is not None], None))
    return RunOutcome(targets, stop, not_made, unwritten)
