"""What the reports show, read from a run's results files; shared by the HTML and Markdown renderers.

Every figure in a report is read from ``results.json`` (run summary, per-target summary with breakdowns,
per-call metrics); nothing is recomputed here, so the report can never disagree with the JSON.  The
column definitions below are the single place that decides how a figure is labelled and formatted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice.app.report.machine import provenance_rows
from voice.metrics.failed_calls import FailedGroup, failed_groups, failed_head
from voice.metrics.results import (
    BREAKDOWNS,
    FIGURES,
    OPTIONAL_BREAKDOWNS,
    fmt_count,
    fmt_figure,
    fmt_ms,
    fmt_rate,
    fmt_score,
    pacing_text,
    read_results,
    target_folders,
    turns_reached,
)
from voice.metrics.simulator import SIMULATOR_OUTCOMES, results_banner

Row = Mapping[str, Any]
Column = tuple[str, Callable[[Row], str]]


@dataclass(frozen=True)
class TargetView:
    """One target of a run: its ``results.json`` and where its recordings are, relative to the report."""

    target: str
    folder: Path
    rel: str  # folder relative to the report's folder ("" for a single-target folder)
    doc: dict[str, Any]

    @property
    def summary(self) -> dict[str, Any]:
        s: dict[str, Any] = self.doc.get("summary", {})
        return s

    @property
    def calls(self) -> list[dict[str, Any]]:
        c: list[dict[str, Any]] = self.doc.get("calls", [])
        return c


@dataclass(frozen=True)
class RunView:
    folder: Path
    run: dict[str, Any] | None  # the run-level results.json of a bench run folder
    targets: list[TargetView]

    @property
    def title(self) -> str:
        return self.folder.resolve().name


def load_run(folder: Path) -> RunView:
    """A bench run folder (one subfolder per target) or a single target folder."""
    doc = read_results(folder)
    targets = []
    for name, sub in target_folders(folder):
        rel = "" if sub == folder else sub.relative_to(folder).as_posix()
        targets.append(TargetView(name, sub, rel, doc if sub == folder else read_results(sub)))
    return RunView(folder, doc if doc.get("kind") == "run" else None, targets)


def _barge(s: Row) -> str:
    b = s["barge_in"]
    if not b["n"]:
        return "-"
    return f"{fmt_count(b['successes'], b['n'])} ({fmt_rate(b['success_rate'])})"


def _false_starts(s: Row) -> str:
    """Assistant speech begun and abandoned while the caller talked: the count, and the share of turns."""
    n, rate = s.get("false_starts"), s.get("figures", {}).get("false_start_rate")
    if n is None:
        return "-"
    return str(n) + (f" ({fmt_rate(rate)} of turns)" if n and rate is not None else "")


def _summary_turns(s: Row) -> str:
    """The caller turns of the target's calls: said (reached) of planned."""
    return turns_reached(s.get("caller_turns_spoken", s["caller_turns"]), s["caller_turns"])


def _pacing(row: Row) -> str:
    """A summary's or a call's frame pacing: CallSim's own lateness (:func:`pacing_text`)."""
    p = row.get("pacing_late_ms")
    if p and "p99" in p:  # a call's own {p50, p99, max}
        return f"{p['p99']:.1f} / {p['max']:.0f} ms"
    return pacing_text(p)


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

SUMMARY_COLUMNS: tuple[Column, ...] = (
    ("calls ran", lambda s: f"{s['calls'] - s['calls_failed']}/{s['calls']}"),
    ("calls served", lambda s: fmt_count(s.get("calls_served", 0), s["calls"])),
    ("caller turns", _summary_turns),
    (
        "turns answered",
        lambda s: fmt_count(s["turns_completed"], s.get("caller_turns_of_call", s["caller_turns"])),
    ),
    ("false starts", _false_starts),
    ("latency p50", lambda s: fmt_ms(s["latency_ms"]["p50"], " ms")),
    ("p90", lambda s: fmt_ms(s["latency_ms"]["p90"], " ms")),
    ("p95", lambda s: fmt_ms(s["latency_ms"].get("p95"), " ms")),
    ("p99", lambda s: fmt_ms(s["latency_ms"]["p99"], " ms")),
    ("mean", lambda s: fmt_ms(s["latency_ms"]["mean"], " ms")),
    ("rhythm (1-5)", lambda s: fmt_score(s["rhythm_mean"])),
    ("first word p50", lambda s: fmt_ms(s["first_word_p50_ms"], " ms")),
    ("longest silence", lambda s: fmt_ms(s["longest_silence_ms_max"], " ms")),
    ("caller pacing (CallSim)", _pacing),
)

CUE_COLUMNS: tuple[Column, ...] = (
    ("barge-ins", lambda s: str(s["barge_in"]["n"])),
    ("unscripted", lambda s: str(s["barge_in"].get("unscripted", "-"))),
    ("success", _barge),
    ("stop p50", lambda s: fmt_ms(s["barge_in"]["stop_latency_p50_ms"], " ms")),
    ("p90", lambda s: fmt_ms(s["barge_in"]["stop_latency_p90_ms"], " ms")),
    ("p95", lambda s: fmt_ms(s["barge_in"].get("stop_latency_p95_ms"), " ms")),
    ("never stopped", lambda s: str(s["barge_in"].get("never_stopped", "-"))),
    ("pause takeover", lambda s: fmt_rate(s["pause_takeover_rate"])),
    ("backchannel carry-on", lambda s: fmt_rate(s["backchannel_carry_on_rate"])),
)

_SHOWN = ("latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_mean_ms")


def _figure_column(key: str) -> Column:
    f = next(f for f in FIGURES if f.key == key)
    label = f.label.replace("latency ", "") if key in _SHOWN[1:] else f.label
    unit = " ms" if f.unit == "ms" else ""
    return label, lambda r: fmt_figure(r.get(f.key), f.unit) + (unit if r.get(f.key) is not None else "")


BREAKDOWN_COLUMNS: tuple[Column, ...] = (
    ("calls", lambda r: str(r["calls"])),
    ("caller turns planned", lambda r: str(r["turns"])),
    *(_figure_column(f.key) for f in FIGURES if not f.goal),  # the caller's goal: its own section
)


def _call_barge(c: Row) -> str:
    active = [t["barge_in"] for t in c["turns"] if t.get("barge_in") and t["barge_in"].get("active")]
    return fmt_count(sum(1 for b in active if b.get("success")), len(active))


def _outcome(c: Row) -> str:
    """As :func:`voice.metrics.simulator.outcome_words`: whose failure, the assistant's or CallSim's."""
    if c["outcome"] in SIMULATOR_OUTCOMES:
        return f"{c['outcome']} (CALLSIM FAILED)"
    return c["outcome"] + (" (FAILED)" if c["failed"] else "")


def _served(c: Row) -> str:
    return "-" if "served" not in c else ("yes" if c["served"] else "no")


CALL_COLUMNS: tuple[Column, ...] = (
    ("scenario", lambda c: str(c.get("scenario", "-"))),
    ("preset", lambda c: str(c.get("preset_type", "-"))),
    ("relation", lambda c: str(c.get("relation", "-"))),
    ("voice", lambda c: str(c.get("voice", "-"))),
    ("outcome", _outcome),
    ("caller turns", lambda c: turns_reached(len(c["turns"]), c["caller_turns_planned"])),
    ("answered", lambda c: f"{c['turns_completed']}/{c.get('turns_of_call', c['caller_turns_planned'])}"),
    ("served", _served),
    ("false starts", lambda c: str(c.get("false_starts", "-"))),
    ("latency p50", lambda c: fmt_ms(c.get("latency_p50_ms"), " ms")),
    ("p90", lambda c: fmt_ms(c.get("latency_p90_ms"), " ms")),
    ("barge-in", _call_barge),
    ("first word", lambda c: fmt_ms(c.get("first_word_ms"), " ms")),
    ("rhythm", lambda c: fmt_score(c.get("rhythm"))),
    ("caller pacing p99 / max", _pacing),
    ("how it ended", lambda c: str(c.get("detail") or "-")),
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


def assistant_calls(t: TargetView) -> list[dict[str, Any]]:
    """The calls of a target its figures are over: all but those CallSim failed on (the banner's)."""
    return [c for c in t.calls if c.get("outcome") not in SIMULATOR_OUTCOMES]


def latencies(t: TargetView) -> list[float]:
    """Every answered turn's latency of a target, from its calls in ``results.json`` (the assistant's)."""
    return [
        x["latency_ms"] for c in assistant_calls(t) for x in c["turns"] if x.get("latency_ms") is not None
    ]


def stop_latencies(t: TargetView) -> list[float]:
    """Every barge-in's stop latency (the assistant was speaking, and stopped), as pooled in the summary."""
    return [
        b["stop_latency_ms"]
        for c in assistant_calls(t)
        for x in c["turns"]
        if (b := x.get("barge_in")) and b.get("active") and b.get("stop_latency_ms") is not None
    ]


def rhythm_counts(t: TargetView) -> list[float]:
    hist = t.summary.get("rhythm_histogram", {})
    return [float(hist.get(str(k), 0)) for k in range(1, 6)]


def heard_by_assistant(t: TargetView) -> list[tuple[str, int, str, str]]:
    """``(call, turn, caller said, assistant heard)`` for every turn the assistant logged hearing."""
    return [
        (c["call_id"], x["turn"], x.get("text", ""), x["assistant_asr_text"])
        for c in t.calls
        for x in c["turns"]
        if x.get("assistant_asr_text") is not None
    ]


def banner(run: RunView) -> list[str]:
    """The banner of the calls CallSim failed on (:func:`~voice.metrics.simulator.banner_lines`), or []."""
    if run.run is not None:
        return results_banner(run.run)
    return results_banner(run.targets[0].doc) if run.targets else []


def failed(run: RunView) -> tuple[str, list[FailedGroup]]:
    """The assistant's failed calls of the run by outcome, with what to do: the head line and the groups
    (:mod:`voice.metrics.failed_calls`), or ``("", [])``."""
    targets = [(t.target, t.calls) for t in run.targets]
    groups = failed_groups(targets)
    return (failed_head(targets, groups), groups) if groups else ("", [])


def describe_run(run: RunView) -> list[tuple[str, str]]:
    """Key facts of the run for the report header."""
    facts = [("targets", ", ".join(t.target for t in run.targets))]
    if run.run:
        r = run.run
        facts += [
            ("calls per target", str(r.get("calls_per_target", "-"))),
            ("caller voice", str(r.get("tts", "-"))),
        ]
    else:
        settings = run.targets[0].doc.get("settings", {}) if run.targets else {}
        facts += [("calls", str(len(run.targets[0].calls)) if run.targets else "0")]
        facts += [("caller voice", str(settings.get("tts", "-")))]
    return facts


def describe_effects(effects: Mapping[str, Any]) -> str:
    """The network between caller and assistant, in words: ``none`` for a clean line."""
    parts = []
    if effects.get("mulaw_band_limit"):
        parts.append("G.711 mu-law band limit (8 kHz)")
    if effects.get("jitter_ms"):
        parts.append(f"jitter 0-{effects['jitter_ms']:g} ms")
    if effects.get("loss_rate"):
        parts.append(f"packet loss {100 * effects['loss_rate']:g} %")
    if effects.get("noise_snr_db") is not None:
        parts.append(f"noise at {effects['noise_snr_db']:g} dB SNR")
    if effects.get("caller_gain_db"):
        parts.append(f"caller gain {effects['caller_gain_db']:+g} dB")
    return ", ".join(parts) or "none"


def describe_timing(timing: Mapping[str, Any]) -> str:
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


def describe_caller(settings: Mapping[str, Any]) -> str:
    """A reactive caller, in words: its model, persona, prompt version and turn limit."""
    turns = settings.get("caller_max_turns") or "twice the script's (at least 6)"
    persona = settings.get("persona", "-")
    return (
        f"reactive: {settings['caller']}, persona {persona}"
        + (" (drawn per call)" if persona == "random" else "")
        + f", prompt {settings.get('caller_prompt', '-')}, at most {turns} turns"
    )


def _calls_at_once(n: object) -> str:
    return f"{n} call{'' if n == 1 else 's'} at once"


def run_settings(run: RunView) -> list[tuple[str, str]]:
    """Everything the run was made with, as ``(setting, value)``: enough to make it again."""
    r = run.run or {}
    first_doc = run.targets[0].doc if run.targets else {}
    first = first_doc.get("settings", {})
    timing = first.get("timing", {})
    seed = r.get("seed", timing.get("seed", "-"))
    repeats = int(r.get("repeats", 1))
    rows = [
        ("dialogues", str(r.get("dialogues") or "-")),
        ("calls per target", str(r.get("calls_per_target", len(run.targets[0].calls) if run.targets else 0))),
        ("repeats", str(repeats) + (" (call ids <dialogue>.r<k>)" if repeats > 1 else "")),
        (
            "seed",
            f"{seed} (the caller's timing and the network"
            + ("; repeat k > 1 uses a seed derived from it, in each call's meta)" if repeats > 1 else ")"),
        ),
        ("concurrency", _calls_at_once(r["concurrency"]) if "concurrency" in r else "-"),
        ("caller voice", str(r.get("tts", first.get("tts", "-")))),
        ("caller timing", describe_timing(timing)),
        *([("caller", describe_caller(first))] if first.get("caller") else []),
    ]
    for t in run.targets:
        settings = t.doc.get("settings", {})
        line = settings.get("line", {})
        protocol = str(line.get("protocol", "-")) + (f" ({line['codec']})" if line.get("codec") else "")
        rows.append(
            (
                f"line to {t.target}",
                f"{protocol}; network effects: {describe_effects(line.get('effects', {}))}",
            )
        )
        if settings.get("assistant_tts"):
            rows.append((f"voice of {t.target}", str(settings["assistant_tts"])))
    return rows + provenance_rows(r.get("provenance") or first_doc.get("provenance"))
