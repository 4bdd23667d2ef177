"""A run's ``results.json`` files, typed: the run's (its settings, provenance and every target's summary)
and each target's (its settings, summary and calls), with their loader (``docs/results.md``).

:func:`load_results` reads a run folder or a target folder into :class:`RunResults` or
:class:`TargetResults`; every writer builds these and writes their ``to_json``.  The settings block is an
open record (:class:`Settings`): each part of a run describes itself there (the line and its effects, a
SIP line, a reactive caller), and a resumed run must match it whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.errors import RecordingError
from voice.metrics.model.call_record import CallRecord
from voice.metrics.model.jsonio import RESULTS_SCHEMA, Fields, JsonObject, JsonValue, check_schema, read_json
from voice.metrics.model.provenance_record import Provenance
from voice.metrics.model.summary import Summary, summary_from_json, summary_json


@dataclass(frozen=True)
class Settings(Mapping[str, JsonValue]):
    """What a target's calls were made with (``settings``, the folder's ``run.json``): the target, the
    caller's TTS engine (``tts``, one engine for every caller) or population of voices (``voices``,
    ``caller_speed``), its timing, the line...  An open record, read as a mapping: each part of a run
    describes itself in it, and a resumed run must match it whole, so it is kept whole, in order."""

    record: dict[str, JsonValue] = field(default_factory=dict)

    def __getitem__(self, key: str) -> JsonValue:
        return self.record[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.record)

    def __len__(self) -> int:
        return len(self.record)

    def text(self, key: str) -> str | None:
        value = self.record.get(key)
        return None if value is None else str(value)

    @property
    def tts(self) -> str | None:
        """The one engine that voiced every caller; None when a population of voices did (``voices``)."""
        return self.text("tts")

    @property
    def caller(self) -> str | None:
        """A reactive caller's model (None: the scripted caller)."""
        return self.text("caller")

    @property
    def caller_voice(self) -> str:
        """Who voiced the callers, in words: ``voices default`` (with the pace when not 1), or the engine."""
        return caller_voice(self.record)

    def to_json(self) -> dict[str, JsonValue]:
        return dict(self.record)

    @classmethod
    def from_json(cls, f: Fields) -> Settings:
        """The settings as written; in a file written before a population's settings said so, the ``tts``
        beside ``voices`` (the built-in assistant's default voice, never the callers') is left out."""
        record = dict(f.items())
        if "voices" in record:
            record.pop("tts", None)
        return cls(record)


def caller_voice(*docs: JsonObject) -> str:
    """Who voiced the callers, in words, from the first of ``docs`` that says (a run's ``results.json``, a
    target's ``settings``): the population (``voices all, pace 0.9-1.1``) when there was one, even in a
    file that also names a ``tts`` (before a population's settings left it out), else the one engine."""
    for doc in docs:
        voices, pace = doc.get("voices"), doc.get("caller_speed")
        if voices:
            return f"voices {voices}" + ("" if pace in (None, "1", 1) else f", pace {pace}")
        if doc.get("tts"):
            return str(doc["tts"])
    return "-"


@dataclass(frozen=True)
class Partial:
    """A run that stopped early: why, and how many calls a rerun makes."""

    stopped: str
    calls_not_made: int

    def to_json(self) -> dict[str, JsonValue]:
        return {"stopped": self.stopped, "calls_not_made": self.calls_not_made}

    @classmethod
    def from_json(cls, f: Fields) -> Partial:
        return cls(f.text("stopped", ""), f.integer("calls_not_made", 0))


@dataclass(frozen=True)
class NodeSummary:
    """A ``--ray`` node's share of a run: calls, their rate while busy, its worst pacing, whether it left."""

    node: str
    calls: int
    calls_per_min: float | None
    pacing_p99_ms_worst: float | None
    pacing_flagged: bool
    left: bool

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "node": self.node,
            "calls": self.calls,
            "calls_per_min": self.calls_per_min,
            "pacing_p99_ms_worst": self.pacing_p99_ms_worst,
            "pacing_flagged": self.pacing_flagged,
            "left": self.left,
        }

    @classmethod
    def from_json(cls, f: Fields) -> NodeSummary:
        return cls(
            f.text("node"),
            f.integer("calls", 0),
            f.opt_number("calls_per_min"),
            f.opt_number("pacing_p99_ms_worst"),
            f.flag("pacing_flagged", False),
            f.flag("left", False),
        )


@dataclass(frozen=True)
class TargetEntry:
    """A target in the run's ``results.json``: its folder and its summary (None: none could be written)."""

    target: str
    folder: str
    summary: Summary | None

    def to_json(self) -> dict[str, JsonValue]:
        return {"target": self.target, "folder": self.folder, "summary": summary_json(self.summary)}

    @classmethod
    def from_json(cls, f: Fields) -> TargetEntry:
        return cls(f.text("target"), f.text("folder"), summary_from_json(f.raw("summary")))


@dataclass(frozen=True)
class RunResults:
    """The run's ``results.json``: how the run was made and every target's summary."""

    dialogues: str
    calls_per_target: int
    repeats: int
    seed: int
    concurrency: int
    tts: str | None  # the one engine of every caller; None with a population (``voices``)
    caller: str  # ``scripted``, or a reactive caller's model
    targets: list[TargetEntry]
    voices: str | None = None
    caller_speed: str | None = None
    provenance: Provenance | None = None
    partial: Partial | None = None
    ray: str | None = None  # a ``--ray`` run's cluster, with its ``nodes``
    nodes: list[NodeSummary] | None = None

    @property
    def caller_voice(self) -> str:
        return caller_voice(self.to_json())

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"schema_version": RESULTS_SCHEMA, "kind": "run"}
        out |= {"dialogues": self.dialogues, "calls_per_target": self.calls_per_target}
        out |= {"repeats": self.repeats, "seed": self.seed, "concurrency": self.concurrency}
        if self.tts is not None:
            out["tts"] = self.tts
        if self.voices is not None:
            out |= {"voices": self.voices, "caller_speed": self.caller_speed}
        out["caller"] = self.caller
        if self.provenance is not None:
            out["provenance"] = self.provenance.to_json()
        if self.partial is not None:
            out["partial"] = self.partial.to_json()
        out["targets"] = [t.to_json() for t in self.targets]
        if self.ray is not None:
            out |= {"ray": self.ray, "nodes": [n.to_json() for n in self.nodes or []]}
        return out

    @classmethod
    def from_json(cls, f: Fields) -> RunResults:
        settings = Settings.from_json(f)  # the run's own keys, with a population's legacy ``tts`` left out
        provenance, partial = f.opt_obj("provenance"), f.opt_obj("partial")
        return cls(
            dialogues=f.text("dialogues", ""),
            calls_per_target=f.integer("calls_per_target", 0),
            repeats=f.integer("repeats", 1),
            seed=f.integer("seed", 0),
            concurrency=f.integer("concurrency", 1),
            tts=settings.tts,
            caller=f.text("caller", "scripted"),
            targets=[TargetEntry.from_json(Fields(t, "targets[]")) for t in f.values("targets")],
            voices=f.opt_text("voices"),
            caller_speed=f.opt_text("caller_speed"),
            provenance=None if provenance is None else Provenance.from_json(provenance),
            partial=None if partial is None else Partial.from_json(partial),
            ray=f.opt_text("ray"),
            nodes=None if "nodes" not in f else [NodeSummary.from_json(Fields(n)) for n in f.values("nodes")],
        )


@dataclass(frozen=True)
class JudgeCoverage:
    """``judge_coverage``, written by ``callsim score``: per dimension, the turns the judge judged, did not,
    and of those the ones it had no grounds to judge."""

    judge: str | None
    calls: int | None
    dimensions: dict[str, tuple[int, int, int]]  # dimension → (judged, not_judged, no_grounds)

    def to_json(self) -> dict[str, JsonValue]:
        dims: dict[str, JsonValue] = {
            d: {"judged": a, "not_judged": b, "no_grounds": c} for d, (a, b, c) in self.dimensions.items()
        }
        return {"judge": self.judge, "calls": self.calls, "dimensions": dims}

    @classmethod
    def from_json(cls, f: Fields) -> JudgeCoverage:
        dims = {
            d: (c.integer("judged"), c.integer("not_judged"), c.integer("no_grounds"))
            for d, c in f.obj("dimensions").objects()
        }
        return cls(f.opt_text("judge"), f.opt_integer("calls"), dims)


@dataclass(frozen=True)
class TargetResults:
    """A target's ``results.json``: its settings, its summary (None: a file without one) and every call."""

    target: str
    settings: Settings
    summary: Summary | None
    calls: list[CallRecord]
    provenance: Provenance | None = None
    partial: Partial | None = None
    judge_coverage: JudgeCoverage | None = None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"schema_version": RESULTS_SCHEMA, "kind": "target"}
        out |= {"target": self.target, "settings": self.settings.to_json()}
        if self.provenance is not None:
            out["provenance"] = self.provenance.to_json()
        if self.partial is not None:
            out["partial"] = self.partial.to_json()
        out |= {"summary": summary_json(self.summary), "calls": [c.to_json() for c in self.calls]}
        if self.judge_coverage is not None:
            out["judge_coverage"] = self.judge_coverage.to_json()
        return out

    @classmethod
    def from_json(cls, f: Fields, target: str = "?") -> TargetResults:
        provenance, partial, coverage = (
            f.opt_obj("provenance"),
            f.opt_obj("partial"),
            f.opt_obj("judge_coverage"),
        )
        return cls(
            target=f.text("target", target),
            settings=Settings.from_json(f.obj("settings")),
            summary=summary_from_json(f.raw("summary")),
            calls=[CallRecord.from_json(c) for c in f.values("calls")],
            provenance=None if provenance is None else Provenance.from_json(provenance),
            partial=None if partial is None else Partial.from_json(partial),
            judge_coverage=None if coverage is None else JudgeCoverage.from_json(coverage),
        )


def read_results(folder: Path) -> dict[str, Any]:
    """A folder's ``results.json`` as parsed JSON, its schema checked: for readers of the raw file (the
    public API's ``voice.read_results``; ``callsim score``, which adds a key and keeps the others);
    :class:`RecordingError` if there is none."""
    path = folder / "results.json"
    if not path.exists():
        raise RecordingError(f"{folder}: no results.json (not a CallSim run folder)")
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise RecordingError(f"{path}: not a results object")
    check_schema(doc, RESULTS_SCHEMA, path)
    return doc


def load_results(folder: Path) -> RunResults | TargetResults:
    """A run folder's or a target folder's ``results.json``, typed; :class:`RecordingError` if missing,
    unreadable, of a newer schema, or neither a run's nor a target's."""
    doc = read_results(folder)
    path = folder / "results.json"
    try:
        if doc.get("kind") == "run":
            return RunResults.from_json(Fields(doc))
        if "calls" in doc:
            return TargetResults.from_json(Fields(doc), folder.name)
    except ValueError as exc:
        raise RecordingError(f"{path}: {exc}") from exc
    raise RecordingError(f"{path}: neither a run nor a target result")


def load_target(folder: Path) -> TargetResults:
    """A target folder's ``results.json`` (a run folder's is refused)."""
    results = load_results(folder)
    if not isinstance(results, TargetResults):
        raise RecordingError(f"{folder / 'results.json'}: a run's results, not a target's")
    return results


def target_folders(folder: Path) -> list[tuple[str, Path]]:
    """The (target, folder) pairs of a run folder, or the one of a target folder (read from the file's
    ``kind``, ``targets`` and ``target`` alone: the rest is each reader's)."""
    f = Fields(read_results(folder))
    try:
        if f.raw("kind") == "run":
            return [(t.text("target"), folder / t.text("folder")) for t in map(Fields, f.values("targets"))]
        if "calls" in f:
            return [(f.text("target", folder.name), folder)]
    except ValueError as exc:
        raise RecordingError(f"{folder / 'results.json'}: {exc}") from exc
    raise RecordingError(f"{folder / 'results.json'}: neither a run nor a target result")


def flatten(d: JsonValue, prefix: str = "") -> dict[str, JsonValue]:
    """Nested objects as dotted keys: ``{"line": {"seed": 0}}`` → ``{"line.seed": 0}``."""
    if not isinstance(d, Mapping):
        return {prefix: d}
    out: dict[str, JsonValue] = {}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        out.update(flatten(v, key) if isinstance(v, Mapping) and v else {key: v})
    return out


_ABSENT = "(none)"


def _shown(value: JsonValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def settings_diff(old: JsonValue, new: JsonValue) -> list[str]:
    """Every setting that differs (a resume refused, two runs compared), as ``key: old → new`` (``(none)``
    for one that is absent); settings are read as :class:`Settings` reads them (a population's ``tts``
    written before it was left out is no difference)."""
    a, b = flatten(_as_read(old)), flatten(_as_read(new))
    return [
        f"{k}: {_shown(a[k]) if k in a else _ABSENT} → {_shown(b[k]) if k in b else _ABSENT}"
        for k in dict.fromkeys([*a, *b])
        if (k in a, a.get(k)) != (k in b, b.get(k))
    ]


def _as_read(settings: JsonValue) -> JsonValue:
    return Settings.from_json(Fields(settings)).to_json() if isinstance(settings, Mapping) else settings
