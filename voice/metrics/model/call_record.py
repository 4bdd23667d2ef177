"""A call as the result files hold it: ``<call>.metrics.json``, and each of ``calls`` in a target's
``results.json``: its :class:`~voice.metrics.call_metrics.CallMetrics`, the figures derived from them, and
the labels the run gave the call (scenario, preset type, relation, repeat, seed, voice...).

The derived figures (``turns_completed``, ``served``, ``latency_p50_ms``...) are written for readers
outside CallSim and recomputed from the metrics when read back, so they can never disagree; every other key
that is not a metric is a label (``docs/results.md``, "A call").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from voice.metrics.call_metrics import BargeIn, CallMetrics, TurnMetrics
from voice.metrics.goal import goal_from_json
from voice.metrics.model.jsonio import METRICS_SCHEMA, Fields, JsonValue, as_json
from voice.metrics.reduce import percentile

# A call's labels, in the order the run gave them: any mapping (a run's dict, a talk's TypedDict), each value
# written as the JSON it is (:func:`~voice.metrics.model.jsonio.as_json`).
Labels: TypeAlias = Mapping[str, object]
DERIVED = ("turns_completed", "turns_of_call", "served", "false_starts", "latency_p50_ms", "latency_p90_ms")
METRIC_KEYS = frozenset(
    {"schema_version", "rhythm", *DERIVED, *(f.name for f in dataclasses.fields(CallMetrics))}
)


def call_to_json(m: CallMetrics, labels: Labels | None = None) -> dict[str, JsonValue]:
    """A call's metrics with derived figures and its labels (scenario, preset type, relation, repeat...).

    The object of ``<call>.metrics.json``, and of each of ``calls`` in a target's ``results.json``.
    """
    d: dict[str, JsonValue] = {"schema_version": METRICS_SCHEMA, **dataclasses.asdict(m)}
    d["turns_completed"] = m.turns_completed
    d["turns_of_call"] = m.turns_of_call
    d["served"] = m.served
    d["false_starts"] = m.false_starts
    d["latency_p50_ms"] = percentile(m.latencies_ms, 50)
    d["latency_p90_ms"] = percentile(m.latencies_ms, 90)
    d["rhythm"] = m.rhythm
    if labels:
        d.update({k: as_json(v) for k, v in labels.items()})
    return d


def _barge_in(f: Fields | None) -> BargeIn | None:
    if f is None:
        return None
    return BargeIn(
        f.number("at_ms"),
        f.flag("active"),
        f.opt_number("stop_latency_ms"),
        f.flag("success"),
        f.flag("scripted", True),
    )


def _turn(f: Fields) -> TurnMetrics:
    return TurnMetrics(
        turn=f.integer("turn"),
        mode=f.text("mode"),
        text=f.text("text"),
        caller_start_ms=f.number("caller_start_ms"),
        caller_end_ms=f.number("caller_end_ms"),
        reply_onset_ms=f.opt_number("reply_onset_ms"),
        latency_ms=f.opt_number("latency_ms"),
        overlap_ms=f.number("overlap_ms"),
        barge_in=_barge_in(f.opt_obj("barge_in")),
        false_starts=f.integer("false_starts", 0),
        pause_takeover=f.opt_flag("pause_takeover"),
        backchannel_carried_on=f.opt_flag("backchannel_carried_on"),
        reference=f.opt_text("reference"),
        heard_text=f.opt_text("heard_text"),
        assistant_asr_text=f.opt_text("assistant_asr_text"),
        rhythm=f.opt_integer("rhythm"),
        rhythm_reasons=tuple(f.texts("rhythm_reasons")),
    )


def _spans(f: Fields) -> list[tuple[float, float]]:
    spans = []
    for span in f.values("assistant_speech_ms"):
        start_end = Fields({"span": span}, "assistant_speech_ms").pair("span")
        if start_end is None:
            raise ValueError("assistant_speech_ms: a [start, end] pair is null")
        spans.append((float(start_end[0]), float(start_end[1])))
    return spans


def metrics_from_json(doc: JsonValue) -> CallMetrics:
    """:class:`CallMetrics` back from its JSON form (a ``<call>.metrics.json``, an element of a target's
    ``calls``): for resumed runs, scoring, reports and comparisons.  Keys it does not know are ignored;
    a ValueError names a key that is missing or of the wrong type."""
    f = Fields(doc, "call")
    pacing = f.opt_obj("pacing_late_ms")
    goal = f.opt_obj("goal")
    return CallMetrics(
        call_id=f.text("call_id"),
        dialogue_id=f.text("dialogue_id"),
        outcome=f.text("outcome"),
        failed=f.flag("failed"),
        duration_ms=f.number("duration_ms"),
        first_word_ms=f.opt_number("first_word_ms"),
        turns=[_turn(Fields(t, "turns[]")) for t in f.values("turns")],
        caller_turns_planned=f.integer("caller_turns_planned", 0),
        greeting_text=f.opt_text("greeting_text"),
        overlap_ms=f.number("overlap_ms", 0.0),
        longest_silence_ms=f.opt_number("longest_silence_ms"),
        assistant_speech_ms=_spans(f),
        hangup_ms=f.opt_number("hangup_ms"),
        caller_turns_cut=f.integer("caller_turns_cut", 0),
        detail=f.text("detail", ""),
        goal=None if goal is None else goal_from_json(goal.doc),
        records_capped={k: v.integers() for k, v in f.obj("records_capped").objects()},
        pacing_late_ms=None if pacing is None else {k: pacing.number(k) for k in pacing.doc},
    )


@dataclass(frozen=True)
class CallRecord:
    """A call of a run: its metrics and its labels (in the order written)."""

    metrics: CallMetrics
    labels: dict[str, JsonValue] = field(default_factory=dict)

    def label(self, key: str, default: str = "?") -> str:
        """A label as text (``default`` when the call has none): what breakdowns group by."""
        return str(self.labels[key]) if key in self.labels else default

    def to_json(self) -> dict[str, JsonValue]:
        return call_to_json(self.metrics, self.labels)

    @classmethod
    def from_json(cls, doc: JsonValue) -> CallRecord:
        metrics = metrics_from_json(doc)  # checks the keys every call has; what is left are its labels
        return cls(metrics, {k: v for k, v in Fields(doc, "call").items() if k not in METRIC_KEYS})
