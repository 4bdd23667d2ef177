"""What the reports show, read from a run's results files; shared by the HTML and Markdown renderers.

Every figure in a report is read from ``results.json`` (run summary, per-target summary with breakdowns,
per-call metrics) and ``scores.json``, once, as the typed results of :mod:`voice.metrics.model`; nothing is
pooled here, and a call's own derived figures (its latency p50, served...) are derived from its metrics as
they were when written, so the report can never disagree with the JSON.  The column definitions below are
the single place that decides how a figure is labelled and formatted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias, TypeVar

from voice.app.report.machine import provenance_rows
from voice.app.run.score import load_scores
from voice.errors import RecordingError
from voice.metrics.failed_calls import FailedGroup, failed_groups, failed_head
from voice.metrics.figures import FIGURES, fmt_count, fmt_figure, fmt_ms, fmt_rate, fmt_score
from voice.metrics.model.blocks import BargeInBlock
from voice.metrics.model.call_record import CallRecord
from voice.metrics.model.jsonio import Fields, JsonObject, JsonValue, read_json
from voice.metrics.model.run_results import (
    RunResults,
    Settings,
    TargetResults,
    caller_voice,
    load_results,
    load_target,
)
from voice.metrics.model.score_files import CallScores, ScoresSummary
from voice.metrics.model.summary import FigureRow, Summary
from voice.metrics.reduce import percentile
from voice.metrics.results import BREAKDOWNS, OPTIONAL_BREAKDOWNS, pacing_text, turns_reached
from voice.metrics.simulator import SIMULATOR_OUTCOMES, outcome_words, results_banner

T = TypeVar("T")
Column: TypeAlias = tuple[str, Callable[[T], str]]  # a table's column: its header, and its cell of a T


@dataclass(frozen=True)
class TargetView:
    """One target of a run: its ``results.json``, its scores (``callsim score``'s, when it was scored) and
    where its recordings are, relative to the report."""

    target: str
    folder: Path
    rel: str  # folder relative to the report's folder ("" for a single-target folder)
    results: TargetResults
    scores: ScoresSummary | None = None  # its scores.json (None: not scored)
    call_scores: dict[str, CallScores] = field(default_factory=dict)  # call id → its scores, by that judge

    @property
    def summary(self) -> Summary:
        if self.results.summary is None:
            raise RecordingError(f"{self.folder / 'results.json'}: no summary (the run did not finish it)")
        return self.results.summary

    @property
    def calls(self) -> list[CallRecord]:
        return self.results.calls


@dataclass(frozen=True)
class RunView:
    folder: Path
    run: RunResults | None  # the run-level results.json of a bench run folder
    targets: list[TargetView]

    @property
    def title(self) -> str:
        return self.folder.resolve().name


def target_scores(folder: Path) -> ScoresSummary | None:
    """A target folder's ``scores.json``, or None if it was not scored (no file, or not JSON); a file of
    another shape is a :class:`RecordingError` naming the key."""
    path = folder / "scores.json"
    try:
        doc = read_json(path)
    except RecordingError:
        return None
    try:
        return ScoresSummary.from_json(Fields(doc, "scores"))
    except ValueError as exc:
        raise RecordingError(f"{path}: {exc}") from exc


def _view(target: str, folder: Path, rel: str, results: TargetResults) -> TargetView:
    """A target with its scores and each call's, by the judge of its ``scores.json``."""
    scores = target_scores(folder)
    if scores is None:
        return TargetView(target, folder, rel, results)
    found = ((c.metrics.call_id, load_scores(folder, c.metrics.call_id, scores.judge)) for c in results.calls)
    return TargetView(target, folder, rel, results, scores, {i: s for i, s in found if s is not None})


def load_run(folder: Path) -> RunView:
    """A bench run folder (one subfolder per target) or a single target folder, each file read once."""
    results = load_results(folder)
    if isinstance(results, TargetResults):
        return RunView(folder, None, [_view(results.target, folder, "", results)])
    targets = []
    for t in results.targets:
        sub = folder / t.folder
        rel = "" if sub == folder else sub.relative_to(folder).as_posix()
        targets.append(_view(t.target, sub, rel, load_target(sub)))
    return RunView(folder, results, targets)


def _barge(b: BargeInBlock) -> str:
    if not b.n:
        return "-"
    return f"{fmt_count(b.successes, b.n)} ({fmt_rate(b.success_rate)})"


def _false_starts(s: Summary) -> str:
    """Assistant speech begun and abandoned while the caller talked: the count, and the share of turns."""
    n, rate = s.false_starts, s.figures.get("false_start_rate") if s.figures else None
    if n is None:
        return "-"
    return str(n) + (f" ({fmt_rate(rate)} of turns)" if n and rate is not None else "")


def _or_dash(n: int | None) -> str:
    return "-" if n is None else str(n)


def _call_pacing(c: CallRecord) -> str:
    """A call's frame pacing, CallSim's own lateness: its p99 and its latest frame."""
    p = c.metrics.pacing_late_ms
    return f"{p['p99']:.1f} / {p['max']:.0f} ms" if p and "p99" in p else "-"


# What the summary's caller turns and caller pacing mean, under the summary table of both reports.
TURNS_NOTE = (
    "Caller turns: planned in the dialogues, and how many were reached (said) when fewer: the assistant hung "
    "up, or the call failed, before the others; turns answered: of the turns the assistant owed a reply."
)
PACING_NOTE = (
    "Caller pacing: how late CallSim itself sent the caller's 20 ms frames (the worst call's p99, the latest "
    "frame): the simulator's lateness, not the assistant's; latencies can be off by up to it, and a call "
    "whose p99 is over 5 ms is flagged."
)

SUMMARY_COLUMNS: tuple[Column[Summary], ...] = (
    ("calls ran", lambda s: f"{s.calls - s.calls_failed}/{s.calls}"),
    ("calls served", lambda s: fmt_count(s.calls_served, s.calls)),
    ("caller turns", lambda s: turns_reached(s.caller_turns_spoken, s.caller_turns)),  # said of planned
    ("turns answered", lambda s: fmt_count(s.turns_completed, s.caller_turns_of_call)),
    ("false starts", _false_starts),
    ("latency p50", lambda s: fmt_ms(s.latency_ms.p50, " ms")),
    ("p90", lambda s: fmt_ms(s.latency_ms.p90, " ms")),
    ("p95", lambda s: fmt_ms(s.latency_ms.p95, " ms")),
    ("p99", lambda s: fmt_ms(s.latency_ms.p99, " ms")),
    ("mean", lambda s: fmt_ms(s.latency_ms.mean, " ms")),
    ("rhythm (1-5)", lambda s: fmt_score(s.rhythm_mean)),
    ("first word p50", lambda s: fmt_ms(s.first_word_p50_ms, " ms")),
    ("longest silence", lambda s: fmt_ms(s.longest_silence_ms_max, " ms")),
    ("caller pacing (CallSim)", lambda s: pacing_text(s.pacing_late_ms)),
)

CUE_COLUMNS: tuple[Column[Summary], ...] = (
    ("barge-ins", lambda s: str(s.barge_in.n)),
    ("unscripted", lambda s: _or_dash(s.barge_in.unscripted)),
    ("success", lambda s: _barge(s.barge_in)),
    ("stop p50", lambda s: fmt_ms(s.barge_in.stop_latency_p50_ms, " ms")),
    ("p90", lambda s: fmt_ms(s.barge_in.stop_latency_p90_ms, " ms")),
    ("p95", lambda s: fmt_ms(s.barge_in.stop_latency_p95_ms, " ms")),
    ("never stopped", lambda s: _or_dash(s.barge_in.never_stopped)),
    ("pause takeover", lambda s: fmt_rate(s.pause_takeover_rate)),
    ("backchannel carry-on", lambda s: fmt_rate(s.backchannel_carry_on_rate)),
)

_SHOWN = ("latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_mean_ms")


def _figure_column(key: str) -> Column[FigureRow]:
    f = next(f for f in FIGURES if f.key == key)
    label = f.label.replace("latency ", "") if key in _SHOWN[1:] else f.label
    unit = " ms" if f.unit == "ms" else ""
    return label, lambda r: fmt_figure(r.get(f.key), f.unit) + (unit if r.get(f.key) is not None else "")


BREAKDOWN_COLUMNS: tuple[Column[FigureRow], ...] = (
    ("calls", lambda r: str(r.calls)),
    ("caller turns planned", lambda r: str(r.turns)),
    *(_figure_column(f.key) for f in FIGURES if not f.goal),  # the caller's goal: its own section
)


def _call_barge(c: CallRecord) -> str:
    active = c.metrics.barge_ins  # those at which the assistant was speaking
    return fmt_count(sum(1 for b in active if b.success), len(active))


CALL_COLUMNS: tuple[Column[CallRecord], ...] = (
    ("scenario", lambda c: c.label("scenario", "-")),
    ("preset", lambda c: c.label("preset_type", "-")),
    ("relation", lambda c: c.label("relation", "-")),
    ("voice", lambda c: c.label("voice", "-")),
    ("outcome", lambda c: outcome_words(c.metrics)),  # whose failure: the assistant's or CallSim's
    ("caller turns", lambda c: turns_reached(len(c.metrics.turns), c.metrics.caller_turns_planned)),
    ("answered", lambda c: f"{c.metrics.turns_completed}/{c.metrics.turns_of_call}"),
    ("served", lambda c: "yes" if c.metrics.served else "no"),
    ("false starts", lambda c: str(c.metrics.false_starts)),
    ("latency p50", lambda c: fmt_ms(percentile(c.metrics.latencies_ms, 50), " ms")),
    ("p90", lambda c: fmt_ms(percentile(c.metrics.latencies_ms, 90), " ms")),
    ("barge-in", _call_barge),
    ("first word", lambda c: fmt_ms(c.metrics.first_word_ms, " ms")),
    ("rhythm", lambda c: fmt_score(c.metrics.rhythm)),
    ("caller pacing p99 / max", _call_pacing),
    ("how it ended", lambda c: c.metrics.detail or "-"),
)
CALL_TEXT_COLUMNS = (
    "scenario",
    "preset",
    "relation",
    "voice",
    "outcome",
    "caller turns",
    "how it ended",
)  # left

BREAKDOWN_TITLES = {name: key.replace("_", " ") for key, name in (*BREAKDOWNS, *OPTIONAL_BREAKDOWNS)}


def assistant_calls(t: TargetView) -> list[CallRecord]:
    """The calls of a target its figures are over: all but those CallSim failed on (the banner's)."""
    return [c for c in t.calls if c.metrics.outcome not in SIMULATOR_OUTCOMES]


def latencies(t: TargetView) -> list[float]:
    """Every answered turn's latency of a target, from its calls in ``results.json`` (the assistant's)."""
    return [lat for c in assistant_calls(t) for lat in c.metrics.latencies_ms]


def stop_latencies(t: TargetView) -> list[float]:
    """Every barge-in's stop latency (the assistant was speaking, and stopped), as pooled in the summary."""
    return [
        b.stop_latency_ms
        for c in assistant_calls(t)
        for b in c.metrics.barge_ins
        if b.stop_latency_ms is not None
    ]


def rhythm_counts(t: TargetView) -> list[float]:
    hist = t.summary.rhythm_histogram
    return [float(hist.get(str(k), 0)) for k in range(1, 6)]


def heard_by_assistant(t: TargetView) -> list[tuple[str, int, str, str]]:
    """``(call, turn, caller said, assistant heard)`` for every turn the assistant logged hearing."""
    return [
        (c.metrics.call_id, x.turn, x.text, x.assistant_asr_text)
        for c in t.calls
        for x in c.metrics.turns
        if x.assistant_asr_text is not None
    ]


def banner(run: RunView) -> list[str]:
    """The banner of the calls CallSim failed on (:func:`~voice.metrics.simulator.banner_lines`), or []."""
    if run.run is not None:
        return results_banner(run.run)
    return results_banner(run.targets[0].results) if run.targets else []


def failed(run: RunView) -> tuple[str, list[FailedGroup]]:
    """The assistant's failed calls of the run by outcome, with what to do: the head line and the groups
    (:mod:`voice.metrics.failed_calls`), or ``("", [])``."""
    targets = [(t.target, [c.metrics for c in t.calls]) for t in run.targets]
    groups = failed_groups(targets)
    return (failed_head(targets, groups), groups) if groups else ("", [])


def describe_run(run: RunView) -> list[tuple[str, str]]:
    """Key facts of the run for the report header."""
    facts = [("targets", ", ".join(t.target for t in run.targets))]
    if run.run:
        facts += [("calls per target", str(run.run.calls_per_target)), ("caller voice", run.run.caller_voice)]
    else:
        facts += [("calls", str(len(run.targets[0].calls)) if run.targets else "0")]
        facts += [("caller voice", run.targets[0].results.settings.caller_voice if run.targets else "-")]
    return facts


def describe_effects(effects: JsonObject) -> str:
    """The network between caller and assistant, in words: ``none`` for a clean line."""
    f = Fields(effects, "effects")
    parts = []
    if f.raw("mulaw_band_limit"):
        parts.append("G.711 mu-law band limit (8 kHz)")
    if jitter := f.opt_number("jitter_ms"):
        parts.append(f"jitter 0-{jitter:g} ms")
    if loss := f.opt_number("loss_rate"):
        parts.append(f"packet loss {100 * loss:g} %")
    if (snr := f.opt_number("noise_snr_db")) is not None:
        parts.append(f"noise at {snr:g} dB SNR")
    if gain := f.opt_number("caller_gain_db"):
        parts.append(f"caller gain {gain:+g} dB")
    return ", ".join(parts) or "none"


def describe_timing(timing: JsonObject) -> str:
    """How the caller paced itself (its think time and patience), in words."""
    if not timing:
        return "-"
    g = {k: v for k, v in timing.items() if isinstance(v, int | float)}
    think = "uniform"
    if timing.get("think_distribution") != "uniform":
        think = f"lognormal, median {g.get('think_median_ms', 0):g} ms, sigma {g.get('think_sigma', 0):g}"
    return (
        f"think time {think}, clipped to {g.get('think_min_ms', 0):g}-{g.get('think_max_ms', 0):g} ms;"
        f" a reply is over after {g.get('end_of_reply_ms', 0):g} ms of silence;"
        f" no reply after {g.get('response_timeout_ms', 0):g} ms"
    )


def describe_caller(settings: JsonObject) -> str:
    """A reactive caller, in words: its model, persona, prompt version and turn limit."""
    turns = settings.get("caller_max_turns") or "twice the script's (at least 6)"
    persona = settings.get("persona", "-")
    return (
        f"reactive: {settings['caller']}, persona {persona}"
        + (" (drawn per call)" if persona == "random" else "")
        + f", prompt {settings.get('caller_prompt', '-')}, at most {turns} turns"
    )


def _calls_at_once(n: int) -> str:
    return f"{n} call{'' if n == 1 else 's'} at once"


def _line(settings: Mapping[str, JsonValue]) -> tuple[str, str]:
    """A target's line: its protocol (and codec), and its network effects in words."""
    line = Fields(settings, "settings").obj("line")
    codec = line.raw("codec")
    protocol = str(line.raw("protocol", "-")) + (f" ({codec})" if codec else "")
    return protocol, describe_effects(line.obj("effects").doc)


def run_settings(run: RunView) -> list[tuple[str, str]]:
    """Everything the run was made with, as ``(setting, value)``: enough to make it again."""
    r = run.run
    first = run.targets[0].results if run.targets else None
    settings = first.settings if first else Settings()
    timing = Fields(settings, "settings").obj("timing").doc
    seed = r.seed if r else timing.get("seed", "-")
    repeats = r.repeats if r else 1
    calls = len(first.calls) if first else 0
    rows = [
        ("dialogues", (r.dialogues if r else "") or "-"),
        ("calls per target", str(r.calls_per_target if r else calls)),
        ("repeats", str(repeats) + (" (call ids <dialogue>.r<k>)" if repeats > 1 else "")),
        (
            "seed",
            f"{seed} (the caller's timing and the network"
            + ("; repeat k > 1 uses a seed derived from it, in each call's meta)" if repeats > 1 else ")"),
        ),
        ("concurrency", _calls_at_once(r.concurrency) if r else "-"),
        ("caller voice", caller_voice(r.to_json() if r else {}, settings)),
        ("caller timing", describe_timing(timing)),
        *([("caller", describe_caller(settings))] if settings.get("caller") else []),
    ]
    for t in run.targets:
        protocol, effects = _line(t.results.settings)
        rows.append((f"line to {t.target}", f"{protocol}; network effects: {effects}"))
        if voice := t.results.settings.get("assistant_tts"):
            rows.append((f"voice of {t.target}", str(voice)))
    return rows + provenance_rows((r.provenance if r else None) or (first.provenance if first else None))
