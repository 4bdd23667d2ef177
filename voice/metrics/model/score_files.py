"""The scores ``callsim score`` writes, typed: each call's ``<call>.scores.json`` (:class:`CallScores`) and
a target's ``scores.json`` (:class:`ScoresSummary`: per version and dimension, by breakdown label, heard
against the bot's own text, the judge's call verdicts, who transcribed).

The scoring itself (judges, verdicts, the dimensions) is :mod:`voice.metrics.scoring`'s; this is its files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voice.metrics.model.jsonio import SCORES_SCHEMA, Fields, JsonValue, as_json
from voice.metrics.scoring.verdicts import GoalSummary, goal_from_json, goal_to_json
from voice.metrics.scoring.vocabulary import DimensionScore, GoalVerdict, TurnScore

LABELS = ("scenario", "preset_type", "relation", "voice", "voice_sex")  # what scores are broken down by


def turn_to_json(t: TurnScore) -> dict[str, JsonValue]:
    scores: dict[str, JsonValue] = {d: {"score": s.score, "reason": s.reason} for d, s in t.scores.items()}
    return {"turn": t.turn, "judge": t.judge, "scores": scores}


def turn_from_json(f: Fields) -> TurnScore:
    scores = {
        k: DimensionScore(v.opt_integer("score"), v.text("reason")) for k, v in f.obj("scores").objects()
    }
    return TurnScore(f.integer("turn"), f.text("judge"), scores)


@dataclass(frozen=True)
class CallScores:
    """One call's scores: every version of its turns (``heard`` always; ``text`` and ``reference`` when
    known), the labels it is broken down by, and the judge's verdict on the call as heard."""

    call_id: str
    labels: dict[str, JsonValue]
    versions: dict[str, list[TurnScore]]
    goal: GoalVerdict | None = None  # None: no verdict recorded

    def label(self, key: str) -> str:
        return str(self.labels[key]) if key in self.labels else "?"

    def to_json(self, judge: str, transcriber: str) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"schema_version": SCORES_SCHEMA, "call_id": self.call_id}
        out |= {"judge": judge, "transcriber": transcriber}
        out |= {k: v for k, v in self.labels.items() if k in LABELS}
        out["versions"] = {name: [turn_to_json(t) for t in turns] for name, turns in self.versions.items()}
        out["goal"] = as_json(goal_to_json(self.goal))
        return out

    @classmethod
    def from_json(cls, f: Fields, call_id: str) -> CallScores:
        by_version = f.obj("versions")
        versions = {k: [turn_from_json(Fields(t)) for t in by_version.values(k)] for k in by_version.doc}
        labels = {k: f.doc[k] for k in LABELS if k in f}
        return cls(call_id, labels, versions, goal_from_json(f.raw("goal")))


@dataclass(frozen=True)
class DimensionCell:
    """One dimension over some calls' turns: the mean over the scored ones, how many were scored, not
    scored, and of those how many had no grounds to judge (the annotations did not cover it)."""

    mean: float | None
    scored: int
    not_scored: int
    not_covered: int = 0

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "mean": self.mean,
            "scored": self.scored,
            "not_scored": self.not_scored,
            "not_covered": self.not_covered,
        }

    @classmethod
    def from_json(cls, f: Fields) -> DimensionCell:
        return cls(
            f.opt_number("mean"),
            f.integer("scored", 0),
            f.integer("not_scored", 0),
            f.integer("not_covered", 0),
        )


DimensionRow = dict[str, DimensionCell]  # dimension → its cell


def row_json(row: DimensionRow) -> dict[str, JsonValue]:
    return {dim: cell.to_json() for dim, cell in row.items()}


def row_from_json(f: Fields) -> DimensionRow:
    return {dim: DimensionCell.from_json(cell) for dim, cell in f.objects()}


@dataclass(frozen=True)
class TextVsHeard:
    """A judged dimension heard against the bot's own text: the difference, its 95 % interval, the calls."""

    heard_minus_text: float | None
    ci95: tuple[float | None, float | None]
    n_calls: int

    def to_json(self) -> dict[str, JsonValue]:
        return {"heard_minus_text": self.heard_minus_text, "ci95": list(self.ci95), "n_calls": self.n_calls}

    @classmethod
    def from_json(cls, f: Fields) -> TextVsHeard:
        lo, hi = (Fields({"x": x}).opt_number("x") for x in [*f.values("ci95"), None, None][:2])
        return cls(f.opt_number("heard_minus_text"), (lo, hi), f.integer("n_calls", 2))


def goals_from_json(f: Fields) -> GoalSummary:
    """The judge's call verdicts in sum as ``scores.json`` holds them
    (:func:`voice.metrics.scoring.verdicts.summarize_goals`'s block)."""
    return {
        "calls": f.integer("calls", 0),
        "caller_goal_met": f.obj("caller_goal_met").integers(),
        "preset_respected": f.obj("preset_respected").integers(),
        "met_rate": f.opt_number("met_rate"),
        "met_or_partly_rate": f.opt_number("met_or_partly_rate"),
        "preset_respected_rate": f.opt_number("preset_respected_rate"),
    }


@dataclass(frozen=True)
class TranscriberFacts:
    """Who transcribed a run's replies, and its CER on the built-in assistant's known replies (spoken by
    ``voice``), when measured."""

    name: str
    known_reply_cer: float | None = None
    known_reply_lines: int | None = None
    voice: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"name": self.name}
        if self.known_reply_cer is not None:
            out |= {"known_reply_cer": self.known_reply_cer, "known_reply_lines": self.known_reply_lines}
            out["voice"] = self.voice
        return out

    @classmethod
    def from_json(cls, f: Fields) -> TranscriberFacts:
        return cls(
            f.text("name"),
            f.opt_number("known_reply_cer"),
            f.opt_integer("known_reply_lines"),
            f.opt_text("voice"),
        )


@dataclass(frozen=True)
class ScoresSummary:
    """A target's ``scores.json``: per version (heard, text, reference) and dimension; per breakdown label
    and group (heard); heard against text per judged dimension; the judge's verdicts; who transcribed."""

    judge: str
    calls: int
    dimensions: dict[str, DimensionRow]
    breakdowns: dict[str, dict[str, DimensionRow]] = field(default_factory=dict)
    text_vs_heard: dict[str, TextVsHeard] | None = None
    goal: GoalSummary | None = None  # the judge's call verdicts in sum
    transcriber: TranscriberFacts | None = None

    def cell(self, version: str, dim: str) -> DimensionCell | None:
        return self.dimensions.get(version, {}).get(dim)

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "schema_version": SCORES_SCHEMA,
            "judge": self.judge,
            "calls": self.calls,
        }
        out["dimensions"] = {v: row_json(row) for v, row in self.dimensions.items()}
        for name, groups in self.breakdowns.items():
            out[name] = {g: row_json(row) for g, row in groups.items()}
        if self.text_vs_heard is not None:
            out["text_vs_heard"] = {dim: d.to_json() for dim, d in self.text_vs_heard.items()}
        if self.goal is not None:
            out["goal"] = as_json(self.goal)
        if self.transcriber is not None:
            out["transcriber"] = self.transcriber.to_json()
        return out

    @classmethod
    def from_json(cls, f: Fields) -> ScoresSummary:
        text_vs_heard, goal, facts = f.opt_obj("text_vs_heard"), f.opt_obj("goal"), f.opt_obj("transcriber")
        return cls(
            judge=f.text("judge"),
            calls=f.integer("calls", 0),
            dimensions={v: row_from_json(row) for v, row in f.obj("dimensions").objects()},
            breakdowns={
                name: {g: row_from_json(row) for g, row in f.obj(name).objects()}
                for name in f.doc
                if name.startswith("by_")
            },
            text_vs_heard=None
            if text_vs_heard is None
            else {dim: TextVsHeard.from_json(d) for dim, d in text_vs_heard.objects()},
            goal=None if goal is None else goals_from_json(goal),
            transcriber=None if facts is None else TranscriberFacts.from_json(facts),
        )
