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

from voice.metrics.results import (
    BREAKDOWNS,
    FIGURES,
    fmt_count,
    fmt_figure,
    fmt_ms,
    fmt_rate,
    fmt_score,
    read_results,
    target_folders,
)

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


SUMMARY_COLUMNS: tuple[Column, ...] = (
    ("calls ran", lambda s: f"{s['calls'] - s['calls_failed']}/{s['calls']}"),
    ("calls served", lambda s: fmt_count(s.get("calls_served", 0), s["calls"])),
    (
        "turns answered",
        lambda s: fmt_count(s["turns_completed"], s.get("caller_turns_of_call", s["caller_turns"])),
    ),
    ("latency p50", lambda s: fmt_ms(s["latency_ms"]["p50"], " ms")),
    ("p90", lambda s: fmt_ms(s["latency_ms"]["p90"], " ms")),
    ("p99", lambda s: fmt_ms(s["latency_ms"]["p99"], " ms")),
    ("mean", lambda s: fmt_ms(s["latency_ms"]["mean"], " ms")),
    ("barge-in success", _barge),
    ("stop p50", lambda s: fmt_ms(s["barge_in"]["stop_latency_p50_ms"], " ms")),
    ("pause takeover", lambda s: fmt_rate(s["pause_takeover_rate"])),
    ("backchannel carry-on", lambda s: fmt_rate(s["backchannel_carry_on_rate"])),
    ("rhythm (1-5)", lambda s: fmt_score(s["rhythm_mean"])),
    ("first word p50", lambda s: fmt_ms(s["first_word_p50_ms"], " ms")),
    ("longest silence", lambda s: fmt_ms(s["longest_silence_ms_max"], " ms")),
)

_SHOWN = ("latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_mean_ms")


def _figure_column(key: str) -> Column:
    f = next(f for f in FIGURES if f.key == key)
    label = f.label.replace("latency ", "") if key in _SHOWN[1:] else f.label
    unit = " ms" if f.unit == "ms" else ""
    return label, lambda r: fmt_figure(r.get(f.key), f.unit) + (unit if r.get(f.key) is not None else "")


BREAKDOWN_COLUMNS: tuple[Column, ...] = (
    ("calls", lambda r: str(r["calls"])),
    ("turns", lambda r: str(r["turns"])),
    *(_figure_column(f.key) for f in FIGURES),
)


def _call_barge(c: Row) -> str:
    active = [t["barge_in"] for t in c["turns"] if t.get("barge_in") and t["barge_in"].get("active")]
    return fmt_count(sum(1 for b in active if b.get("success")), len(active))


CALL_COLUMNS: tuple[Column, ...] = (
    ("scenario", lambda c: str(c.get("scenario", "-"))),
    ("preset", lambda c: str(c.get("preset_type", "-"))),
    ("relation", lambda c: str(c.get("relation", "-"))),
    ("outcome", lambda c: c["outcome"] + (" (FAILED)" if c["failed"] else "")),
    ("answered", lambda c: f"{c['turns_completed']}/{c['caller_turns_planned']}"),
    ("latency p50", lambda c: fmt_ms(c.get("latency_p50_ms"), " ms")),
    ("p90", lambda c: fmt_ms(c.get("latency_p90_ms"), " ms")),
    ("barge-in", _call_barge),
    ("first word", lambda c: fmt_ms(c.get("first_word_ms"), " ms")),
    ("rhythm", lambda c: fmt_score(c.get("rhythm"))),
)

BREAKDOWN_TITLES = {name: key.replace("_", " ") for key, name in BREAKDOWNS}


def latencies(t: TargetView) -> list[float]:
    """Every answered turn's latency of a target, from its calls in ``results.json``."""
    return [x["latency_ms"] for c in t.calls for x in c["turns"] if x.get("latency_ms") is not None]


def rhythm_counts(t: TargetView) -> list[float]:
    hist = t.summary.get("rhythm_histogram", {})
    return [float(hist.get(str(k), 0)) for k in range(1, 6)]


def describe_run(run: RunView) -> list[tuple[str, str]]:
    """Key facts of the run for the report header."""
    facts = [("targets", ", ".join(t.target for t in run.targets))]
    if run.run:
        r = run.run
        facts += [
            ("dialogues", str(r.get("dialogues") or "-")),
            ("calls per target", str(r.get("calls_per_target", "-"))),
            ("repeats", str(r.get("repeats", 1))),
            ("seed", str(r.get("seed", 0))),
            ("concurrency", str(r.get("concurrency", "-"))),
            ("caller voice", str(r.get("tts", "-"))),
        ]
    else:
        settings = run.targets[0].doc.get("settings", {}) if run.targets else {}
        facts += [("calls", str(len(run.targets[0].calls)) if run.targets else "0")]
        facts += [("caller voice", str(settings.get("tts", "-")))]
    return facts
