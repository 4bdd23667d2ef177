"""A target's summary as ``results.json`` holds it (``summary``, ``targets[].summary``): the pooled figures,
their blocks (latency, barge-in, pacing, the caller's goal, CallSim's own failures), the headline figures
row and its breakdowns, with intervals per caller voice and the worst voice.

Only data and its JSON live here; what computes it is :mod:`voice.metrics.results` (the pooled figures),
:mod:`voice.metrics.by_voice`, :mod:`voice.metrics.goal` and :mod:`voice.metrics.simulator`.  Keys a file
written before they existed may lack (``docs/results.md``, "Versions") read as the report always read them:
``None`` where it showed ``-``, else the value they stood for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from voice.metrics.model.blocks import BargeInBlock, GoalBlock, LatencyBlock, PacingBlock, SimulatorBlock
from voice.metrics.model.jsonio import Fields, JsonValue

# Per-call labels a run is broken down by (stored in every call's JSON next to its metrics) → the summary key.
BREAKDOWNS: tuple[tuple[str, str], ...] = (
    ("scenario", "by_scenario"),
    ("preset_type", "by_preset_type"),
    ("relation", "by_relation"),
)
# Labels only some runs have (a reactive caller's persona; the caller's voice and its sex, whose rows carry
# bootstrap intervals: voice.metrics.by_voice): broken down by only when a call carries one.
OPTIONAL_BREAKDOWNS: tuple[tuple[str, str], ...] = (
    ("persona", "by_persona"),
    ("voice", "by_voice"),
    ("voice_sex", "by_sex"),
)
COUNTS = ("calls", "calls_failed", "turns")  # the counts heading every figures row


@dataclass(frozen=True)
class FigureRow(Mapping[str, float | None]):
    """A figures row: the calls, failed calls and planned turns of a group, and every headline figure
    (``voice.metrics.figures.FIGURES``) over them, read as a mapping (``row["latency_p90_ms"]``); per voice
    and sex, ``ci95`` holds each interval figure's ``(lo, hi)`` (None under two calls with values)."""

    calls: int
    calls_failed: int
    turns: int
    figures: dict[str, float | None]
    ci95: dict[str, tuple[float, float] | None] | None = None

    def __getitem__(self, key: str) -> float | None:
        counts = {"calls": self.calls, "calls_failed": self.calls_failed, "turns": self.turns}
        return counts[key] if key in counts else self.figures[key]

    def __iter__(self) -> Iterator[str]:
        return iter((*COUNTS, *self.figures))

    def __len__(self) -> int:
        return len(COUNTS) + len(self.figures)

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"calls": self.calls, "calls_failed": self.calls_failed}
        out["turns"] = self.turns
        out.update(self.figures)
        if self.ci95 is not None:
            out["ci95"] = {k: None if v is None else [v[0], v[1]] for k, v in self.ci95.items()}
        return out

    @classmethod
    def from_json(cls, f: Fields) -> FigureRow:
        ci95 = None if "ci95" not in f else {k: f.obj("ci95").pair(k) for k in f.obj("ci95").doc}
        figures = {k: f.opt_number(k) for k in f.doc if k not in (*COUNTS, "ci95")}
        return cls(f.integer("calls"), f.integer("calls_failed", 0), f.integer("turns", 0), figures, ci95)


Breakdown = dict[str, FigureRow]  # a label's value (a scenario, a voice) → the row of its calls


@dataclass(frozen=True)
class WorstVoice:
    """``worst_voice``: each figure's worst value over the voices, whose it is (``of``), and the voice the
    assistant does worst on overall (:func:`voice.metrics.by_voice.worst_voice`)."""

    voices: int
    figures: dict[str, float | None]
    of: dict[str, str | None]
    voice: str | None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"voices": self.voices}
        out.update(self.figures)
        out["of"] = dict(self.of)
        out["voice"] = self.voice
        return out

    @classmethod
    def from_json(cls, f: Fields) -> WorstVoice:
        figures = {k: f.opt_number(k) for k in f.doc if k not in ("voices", "of", "voice")}
        of = f.obj("of")
        return cls(f.integer("voices"), figures, {k: of.opt_text(k) for k in of.doc}, f.opt_text("voice"))


@dataclass(frozen=True)
class Summary:
    """A target's summary: figures pooled over the calls the assistant is judged on (``docs/results.md``,
    "The summary").  :func:`voice.metrics.results.summarize` fills the pooled figures alone (``figures``
    and ``simulator_failures`` None, no breakdowns); :func:`voice.metrics.results.summarize_run` all.
    ``false_starts`` and ``pacing_late_ms`` are None in a file written before they were kept."""

    calls: int
    calls_failed: int
    calls_served: int
    caller_turns: int
    caller_turns_of_call: int
    caller_turns_cut_by_hangup: int
    false_starts: int | None
    caller_turns_spoken: int
    turns_completed: int
    latency_ms: LatencyBlock
    barge_in: BargeInBlock
    pause_takeover_rate: float | None
    backchannel_carry_on_rate: float | None
    first_word_p50_ms: float | None
    rhythm_mean: float | None
    rhythm_histogram: dict[str, int]
    overlap_ms_total: float
    longest_silence_ms_max: float | None
    pacing_late_ms: PacingBlock | None
    goal: GoalBlock | None = None  # only when a call had a reactive caller
    simulator_failures: SimulatorBlock | None = None
    figures: FigureRow | None = None  # the headline figures over every call
    breakdowns: dict[str, Breakdown] = field(default_factory=dict)  # by_scenario, ..., by_voice, by_sex
    worst_voice: WorstVoice | None = None  # only when the calls have voices

    @property
    def by_voice(self) -> Breakdown | None:
        return self.breakdowns.get("by_voice")

    @property
    def failures(self) -> SimulatorBlock:
        """The calls CallSim failed on (none when the summary has no such block)."""
        return self.simulator_failures or SimulatorBlock()

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "calls": self.calls,
            "calls_failed": self.calls_failed,
            "calls_served": self.calls_served,
            "caller_turns": self.caller_turns,
            "caller_turns_of_call": self.caller_turns_of_call,
            "caller_turns_cut_by_hangup": self.caller_turns_cut_by_hangup,
        }
        if self.false_starts is not None:
            out["false_starts"] = self.false_starts
        out |= {
            "caller_turns_spoken": self.caller_turns_spoken,
            "turns_completed": self.turns_completed,
            "latency_ms": self.latency_ms.to_json(),
            "barge_in": self.barge_in.to_json(),
            "pause_takeover_rate": self.pause_takeover_rate,
            "backchannel_carry_on_rate": self.backchannel_carry_on_rate,
            "first_word_p50_ms": self.first_word_p50_ms,
            "rhythm_mean": self.rhythm_mean,
            "rhythm_histogram": dict(self.rhythm_histogram),
            "overlap_ms_total": self.overlap_ms_total,
            "longest_silence_ms_max": self.longest_silence_ms_max,
        }
        if self.pacing_late_ms is not None:
            out["pacing_late_ms"] = self.pacing_late_ms.to_json()
        if self.goal is not None:
            out["goal"] = self.goal.to_json()
        if self.simulator_failures is not None:
            out["simulator_failures"] = self.simulator_failures.to_json()
        if self.figures is not None:
            out["figures"] = self.figures.to_json()
        for name, rows in self.breakdowns.items():
            out[name] = {value: row.to_json() for value, row in rows.items()}
        if self.worst_voice is not None:
            out["worst_voice"] = self.worst_voice.to_json()
        return out

    @classmethod
    def from_json(cls, f: Fields) -> Summary:
        turns = f.integer("caller_turns")
        names = [name for _, name in (*BREAKDOWNS, *OPTIONAL_BREAKDOWNS)]
        return cls(
            calls=f.integer("calls"),
            calls_failed=f.integer("calls_failed"),
            calls_served=f.integer("calls_served", 0),
            caller_turns=turns,
            caller_turns_of_call=f.integer("caller_turns_of_call", turns),
            caller_turns_cut_by_hangup=f.integer("caller_turns_cut_by_hangup", 0),
            false_starts=f.opt_integer("false_starts"),
            caller_turns_spoken=f.integer("caller_turns_spoken", turns),
            turns_completed=f.integer("turns_completed"),
            latency_ms=LatencyBlock.from_json(f.obj("latency_ms")),
            barge_in=BargeInBlock.from_json(f.obj("barge_in")),
            pause_takeover_rate=f.opt_number("pause_takeover_rate"),
            backchannel_carry_on_rate=f.opt_number("backchannel_carry_on_rate"),
            first_word_p50_ms=f.opt_number("first_word_p50_ms"),
            rhythm_mean=f.opt_number("rhythm_mean"),
            rhythm_histogram=f.obj("rhythm_histogram").integers(),
            overlap_ms_total=f.number("overlap_ms_total", 0.0),
            longest_silence_ms_max=f.opt_number("longest_silence_ms_max"),
            pacing_late_ms=None
            if "pacing_late_ms" not in f
            else PacingBlock.from_json(f.obj("pacing_late_ms")),
            goal=None if (g := f.opt_obj("goal")) is None else GoalBlock.from_json(g),
            simulator_failures=None
            if "simulator_failures" not in f
            else SimulatorBlock.from_json(f.obj("simulator_failures")),
            figures=None if (row := f.opt_obj("figures")) is None else FigureRow.from_json(row),
            breakdowns={
                name: {value: FigureRow.from_json(row) for value, row in f.obj(name).objects()}
                for name in f.doc
                if name in names
            },
            worst_voice=None if (w := f.opt_obj("worst_voice")) is None else WorstVoice.from_json(w),
        )


def summary_from_json(value: JsonValue) -> Summary | None:
    """A summary as written, or None for one that is absent or empty (``{}``: a stopped run's target whose
    ``results.json`` could not be written)."""
    return Summary.from_json(Fields(value, "summary")) if value else None


def summary_json(summary: Summary | None) -> dict[str, JsonValue]:
    """:meth:`Summary.to_json`, ``{}`` for none (as a stopped run writes a target it could not summarise)."""
    return {} if summary is None else summary.to_json()
