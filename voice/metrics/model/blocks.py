"""The blocks of a summary (``latency_ms``, ``barge_in``, ``pacing_late_ms``, ``goal``,
``simulator_failures``), each with its JSON.  Kept apart from :mod:`voice.metrics.model.summary`, which
holds them, so that each stays short; :mod:`voice.metrics.goal` and :mod:`voice.metrics.simulator` build
the last two.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voice.metrics.model.jsonio import Fields, JsonValue


@dataclass(frozen=True)
class LatencyBlock:
    """``latency_ms``: response latency over the answered turns."""

    n: int
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    mean: float | None

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "n": self.n,
            "p50": self.p50,
            "p90": self.p90,
            "p95": self.p95,
            "p99": self.p99,
            "mean": self.mean,
        }

    @classmethod
    def from_json(cls, f: Fields) -> LatencyBlock:
        p50, p90, p95, p99 = (f.opt_number(k) for k in ("p50", "p90", "p95", "p99"))
        return cls(f.integer("n", 0), p50, p90, p95, p99, f.opt_number("mean"))


@dataclass(frozen=True)
class BargeInBlock:
    """``barge_in``: the barge-ins at which the assistant was speaking.  ``unscripted`` and
    ``never_stopped`` are None in a file written before they were counted."""

    n: int
    successes: int
    unscripted: int | None
    success_rate: float | None
    never_stopped: int | None
    stop_latency_p50_ms: float | None
    stop_latency_p90_ms: float | None
    stop_latency_p95_ms: float | None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"n": self.n, "successes": self.successes}
        if self.unscripted is not None:
            out["unscripted"] = self.unscripted
        out["success_rate"] = self.success_rate
        if self.never_stopped is not None:
            out["never_stopped"] = self.never_stopped
        out["stop_latency_p50_ms"] = self.stop_latency_p50_ms
        out["stop_latency_p90_ms"] = self.stop_latency_p90_ms
        out["stop_latency_p95_ms"] = self.stop_latency_p95_ms
        return out

    @classmethod
    def from_json(cls, f: Fields) -> BargeInBlock:
        return cls(
            f.integer("n", 0),
            f.integer("successes", 0),
            f.opt_integer("unscripted"),
            f.opt_number("success_rate"),
            f.opt_integer("never_stopped"),
            f.opt_number("stop_latency_p50_ms"),
            f.opt_number("stop_latency_p90_ms"),
            f.opt_number("stop_latency_p95_ms"),
        )


@dataclass(frozen=True)
class PacingBlock:
    """``pacing_late_ms``: CallSim's own lateness sending the caller's frames (the simulator's)."""

    p99_worst: float | None
    max: float | None
    calls_over_bound: int

    def to_json(self) -> dict[str, JsonValue]:
        return {"p99_worst": self.p99_worst, "max": self.max, "calls_over_bound": self.calls_over_bound}

    @classmethod
    def from_json(cls, f: Fields) -> PacingBlock:
        return cls(f.opt_number("p99_worst"), f.opt_number("max"), f.integer("calls_over_bound", 0))


@dataclass(frozen=True)
class GoalBlock:
    """``goal``: the reactive caller's own verdicts on its goals, pooled (``voice.metrics.goal``)."""

    calls: int
    calls_with_verdict: int
    verdicts: dict[str, int]
    goal_met_rate: float | None
    goal_met_or_partly_rate: float | None
    turns_mean: float | None
    turns_p50: float | None
    time_p50_ms: float | None
    time_p90_ms: float | None
    caller_late_ms_total: float
    caller_late_p90_ms: float | None
    caller_late_waits: int
    caller_fallbacks: int
    caller_rejected: int

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "calls": self.calls,
            "calls_with_verdict": self.calls_with_verdict,
            "verdicts": dict(self.verdicts),
            "goal_met_rate": self.goal_met_rate,
            "goal_met_or_partly_rate": self.goal_met_or_partly_rate,
            "turns_mean": self.turns_mean,
            "turns_p50": self.turns_p50,
            "time_p50_ms": self.time_p50_ms,
            "time_p90_ms": self.time_p90_ms,
            "caller_late_ms_total": self.caller_late_ms_total,
            "caller_late_p90_ms": self.caller_late_p90_ms,
            "caller_late_waits": self.caller_late_waits,
            "caller_fallbacks": self.caller_fallbacks,
            "caller_rejected": self.caller_rejected,
        }

    @classmethod
    def from_json(cls, f: Fields) -> GoalBlock:
        return cls(
            calls=f.integer("calls"),
            calls_with_verdict=f.integer("calls_with_verdict"),
            verdicts=f.obj("verdicts").integers(),
            goal_met_rate=f.opt_number("goal_met_rate"),
            goal_met_or_partly_rate=f.opt_number("goal_met_or_partly_rate"),
            turns_mean=f.opt_number("turns_mean"),
            turns_p50=f.opt_number("turns_p50"),
            time_p50_ms=f.opt_number("time_p50_ms"),
            time_p90_ms=f.opt_number("time_p90_ms"),
            caller_late_ms_total=f.number("caller_late_ms_total", 0.0),
            caller_late_p90_ms=f.opt_number("caller_late_p90_ms"),
            caller_late_waits=f.integer("caller_late_waits", 0),
            caller_fallbacks=f.integer("caller_fallbacks", 0),
            caller_rejected=f.integer("caller_rejected", 0),
        )


@dataclass(frozen=True)
class SimulatorReason:
    """The calls CallSim failed on for one reason (an outcome): which, what it means, one's own words."""

    count: int
    calls: list[str]
    meaning: str
    detail: str

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "count": self.count,
            "calls": list(self.calls),
            "meaning": self.meaning,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, f: Fields) -> SimulatorReason:
        return cls(f.integer("count"), f.texts("calls"), f.text("meaning", ""), f.text("detail", ""))


@dataclass(frozen=True)
class SimulatorBlock:
    """``simulator_failures``: the calls CallSim itself failed on, left out of every figure, and the redo."""

    count: int = 0
    calls: list[str] = field(default_factory=list)
    reasons: dict[str, SimulatorReason] = field(default_factory=dict)
    redo: str = ""

    def to_json(self) -> dict[str, JsonValue]:
        reasons: dict[str, JsonValue] = {k: r.to_json() for k, r in self.reasons.items()}
        return {"count": self.count, "calls": list(self.calls), "reasons": reasons, "redo": self.redo}

    @classmethod
    def from_json(cls, f: Fields) -> SimulatorBlock:
        reasons = {k: SimulatorReason.from_json(r) for k, r in f.obj("reasons").objects()}
        return cls(f.integer("count", 0), f.texts("calls"), reasons, f.text("redo", ""))
