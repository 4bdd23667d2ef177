"""The reactive caller's goal: its own verdict, what it decided on the way, and the waits that were its own.

A reactive caller (``callsim bench --caller openai:MODEL``) logs what it decided (``caller_decision``),
when its turn was not ready in time (``caller_late``) and, once, whether its goal was met (``goal``).  This
module turns those events into one :class:`CallerGoal` per call (None for a scripted caller, which logs
none of them), and pools them into the summary's ``goal`` block.  Kept apart from the timing metrics
because it measures the conversation's outcome, not the assistant's timing, and because the waits it
counts are the simulator's, never the assistant's.  Definitions: ``docs/metrics.md`` ("Caller goals").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from voice.core import events as ev
from voice.core.audio import samples_to_ms
from voice.metrics.model.blocks import GoalBlock
from voice.metrics.model.jsonio import Fields, JsonValue
from voice.metrics.reduce import percentile, reduce

VERDICTS = ("yes", "partly", "no")  # what counts as a verdict; anything else (``unknown``) does not
COUNTED = (*VERDICTS, "unknown")  # the summary's counts: ``unknown`` also for a call that never reported


@dataclass(frozen=True)
class CallerDecision:
    """One ``caller_decision`` as the report shows it (its LLM cache key left out: it is in the event log)."""

    turn: int
    at_ms: float  # when the decision was handed to the call (after its end for the post-call verdict)
    action: str  # say, hang_up, wait
    source: str  # llm (asked or replayed), fallback_script, fallback_hangup
    text: str = ""
    heard: str = ""  # the assistant's last reply as the caller heard it
    goal: str = ""
    reason: str = ""
    rejected: str = ""  # why the model's answer was refused


@dataclass(frozen=True)
class CallerWait:
    """A ``caller_late``: the caller's turn was not ready at ``due_ms``; it started ``late_ms`` later."""

    turn: int
    due_ms: float
    late_ms: float


@dataclass(frozen=True)
class CallerGoal:
    """A reactive call's outcome in the caller's own judgement, and how the caller itself fared."""

    met: str | None  # yes, partly, no, unknown; None: the caller never reported (the call broke first)
    reason: str = ""
    turns: int | None = None  # caller turns said when the outcome was known
    time_ms: float | None = None  # pick-up → the outcome (clipped to the call's length)
    caller_late_ms: float = 0.0  # the simulator's own gaps (sum of ``caller_late``), never the assistant's
    caller_fallbacks: int = 0  # decisions not made by the model (``fallback_*``)
    caller_rejected: int = 0  # decisions for which a model answer was refused
    decisions: list[CallerDecision] = field(default_factory=list)
    waits: list[CallerWait] = field(default_factory=list)

    @property
    def has_verdict(self) -> bool:
        return self.met in VERDICTS


def _ms(samples: int, rate: int) -> float:
    return round(samples_to_ms(samples, rate), 3)


def caller_goal(events: Sequence[ev.CallEvent], length: int, rate: int) -> CallerGoal | None:
    """The call's :class:`CallerGoal` from its event log (``length``: the call's samples); None if scripted.

    The last ``goal`` event is the verdict.  Its time is clipped to the call: a verdict asked for after the
    call ended was known, at the latest, when the call ended.
    """
    decided = [e for e in events if isinstance(e, ev.CallerDecided)]
    late = [e for e in events if isinstance(e, ev.CallerLate)]
    reports = [e for e in events if isinstance(e, ev.GoalReported)]
    reactive = decided or late or reports or any(isinstance(e, ev.TurnRequested) for e in events)
    if not reactive:
        return None
    last = reports[-1] if reports else None
    return CallerGoal(
        met=last.met if last else None,
        reason=last.reason if last else "",
        turns=last.turns if last else None,
        time_ms=_ms(min(last.t, length), rate) if last else None,
        caller_late_ms=_ms(sum(e.late for e in late), rate),
        caller_fallbacks=sum(1 for e in decided if e.source.startswith("fallback")),
        caller_rejected=sum(1 for e in decided if e.rejected),
        decisions=[
            CallerDecision(
                e.turn, _ms(e.t, rate), e.action, e.source, e.text, e.heard, e.goal, e.reason, e.rejected
            )
            for e in decided
        ],
        waits=[CallerWait(e.turn, _ms(e.due, rate), _ms(e.late, rate)) for e in late],
    )


def goal_from_json(doc: JsonValue) -> CallerGoal:
    """Rebuild a :class:`CallerGoal` from its JSON form (a call's ``goal`` object); unknown keys ignored."""
    f = Fields(doc, "goal")
    decisions = [
        CallerDecision(
            d.integer("turn"),
            d.number("at_ms"),
            d.text("action"),
            d.text("source"),
            *(d.text(k, "") for k in ("text", "heard", "goal", "reason", "rejected")),
        )
        for d in (Fields(x, "goal.decisions[]") for x in f.values("decisions"))
    ]
    waits = [
        CallerWait(w.integer("turn"), w.number("due_ms"), w.number("late_ms"))
        for w in (Fields(x, "goal.waits[]") for x in f.values("waits"))
    ]
    return CallerGoal(
        met=f.opt_text("met") if "met" in f else f.text("met"),  # null: never reported; absent: not a goal
        reason=f.text("reason", ""),
        turns=f.opt_integer("turns"),
        time_ms=f.opt_number("time_ms"),
        caller_late_ms=f.number("caller_late_ms", 0.0),
        caller_fallbacks=f.integer("caller_fallbacks", 0),
        caller_rejected=f.integer("caller_rejected", 0),
        decisions=decisions,
        waits=waits,
    )


def goal_values(g: CallerGoal | None) -> dict[str, list[float]]:
    """One call's contribution to the pooled goal figures: nothing for a scripted call or a missing one.

    The rates count calls with a verdict (yes, partly, no) only: ``unknown`` says the caller could not
    judge, which is the caller model's failing, not the assistant's.
    """
    verdict = g is not None and g.has_verdict
    return {
        "goal_met": [float(g.met == "yes")] if g is not None and verdict else [],
        "goal_met_or_partly": [float(g.met in ("yes", "partly"))] if g is not None and verdict else [],
        "goal_time_ms": [g.time_ms] if g is not None and g.time_ms is not None else [],
        "goal_turns": [float(g.turns)] if g is not None and g.turns is not None else [],
        "caller_late_ms": [g.caller_late_ms] if g is not None else [],
    }


def goal_summary(goals: Sequence[CallerGoal | None]) -> GoalBlock:
    """The summary's ``goal`` block over the calls' goals (scripted calls, None, are left out)."""
    gs = [g for g in goals if g is not None]
    values = [goal_values(g) for g in gs]

    def pooled(key: str) -> list[float]:
        return [x for v in values for x in v[key]]

    turns, times, late = pooled("goal_turns"), pooled("goal_time_ms"), pooled("caller_late_ms")
    return GoalBlock(
        calls=len(gs),
        calls_with_verdict=sum(1 for g in gs if g.has_verdict),
        verdicts={k: sum(1 for g in gs if (g.met if g.has_verdict else "unknown") == k) for k in COUNTED},
        goal_met_rate=reduce(pooled("goal_met"), "mean"),
        goal_met_or_partly_rate=reduce(pooled("goal_met_or_partly"), "mean"),
        turns_mean=reduce(turns, "mean"),
        turns_p50=percentile(turns, 50),
        time_p50_ms=percentile(times, 50),
        time_p90_ms=percentile(times, 90),
        caller_late_ms_total=round(sum(late), 3),
        caller_late_p90_ms=percentile(late, 90),
        caller_late_waits=sum(len(g.waits) for g in gs),
        caller_fallbacks=sum(g.caller_fallbacks for g in gs),
        caller_rejected=sum(g.caller_rejected for g in gs),
    )


def goal_line(b: GoalBlock) -> str:
    """The summary's ``goal`` block in two lines under the printed table: the verdicts, then the caller's own
    troubles (kept apart: they are the simulator's, never the assistant's)."""
    v, n = b.verdicts, b.calls_with_verdict

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.0f}%"

    def sec(x: float | None) -> str:
        return "-" if x is None else f"{x / 1000:.1f} s"

    turns = "-" if b.turns_p50 is None else f"{b.turns_p50:g}"
    verdicts = (
        f"caller goal (its own verdict): met {v['yes']}/{n} ({pct(b.goal_met_rate)}), "
        f"partly {v['partly']}, no {v['no']}, unknown {v['unknown']}; "
        f"met or partly {pct(b.goal_met_or_partly_rate)}; "
        f"outcome after {sec(b.time_p50_ms)} p50 ({sec(b.time_p90_ms)} p90), {turns} turns p50"
    )
    itself = (
        f"caller itself: {sec(b.caller_late_ms_total)} late in {b.caller_late_waits} wait(s) "
        f"(not counted against the assistant), {b.caller_fallbacks} fallback(s), "
        f"{b.caller_rejected} rejected model answer(s)"
    )
    return f"{verdicts}\n{itself}"
