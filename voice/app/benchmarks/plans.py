"""Caller plans for the capacity benchmark: the bundled dialogues' caller turns, packed into long calls.

Against an echo assistant each caller turn's "reply" is its own echo, so any turns can follow each other;
packing them into calls of ~25 s makes every call long enough that N calls really overlap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from voice.core.audio import samples_to_ms
from voice.core.caller import CallerPlan, CallerTiming, PlannedTurn
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts


def join_turns(turns: Sequence[PlannedTurn], timing: CallerTiming, dialogue_id: str) -> CallerPlan:
    """One caller plan made of ``turns`` (from any dialogues), re-indexed, without a greeting.

    An echo assistant never greets, so the caller speaks first; the echo of each turn is its "reply".
    """
    if not turns:
        raise ValueError("no caller turns to join")
    return CallerPlan(
        dialogue_id=dialogue_id,
        turns=tuple(dataclasses.replace(t, index=i, turn_index=2 * i) for i, t in enumerate(turns)),
        expects_greeting=False,
        references=tuple(None for _ in turns),
        greeting_reference=None,
        timing=timing,
    )


def estimated_secs(turns: Sequence[PlannedTurn], timing: CallerTiming, echo_delay_ms: float) -> float:
    """Rough call length against the echo: per turn think + audio + echo tail + end-of-reply silence."""
    per_turn_ms = echo_delay_ms + timing.end_of_reply_ms
    total = sum(samples_to_ms(t.think + len(t.audio)) + per_turn_ms for t in turns)
    return (total + timing.hangup_after_ms) / 1000


def pack_plans(
    plans: Sequence[CallerPlan], call_secs: float, echo_delay_ms: float, timing: CallerTiming
) -> list[CallerPlan]:
    """The caller turns of ``plans``, in order, packed into plans of about ``call_secs`` each.

    Whatever is left at the end (shorter than ``call_secs``) is dropped unless it is all there is.
    """
    out: list[CallerPlan] = []
    pending: list[PlannedTurn] = []
    for turn in (t for plan in plans for t in plan.turns):
        pending.append(turn)
        if estimated_secs(pending, timing, echo_delay_ms) >= call_secs:
            out.append(join_turns(pending, timing, f"capacity-{len(out):02d}"))
            pending = []
    if not out and pending:
        out.append(join_turns(pending, timing, "capacity-00"))
    return out


def capacity_plans(tts_name: str, call_secs: float, echo_delay_ms: float) -> list[CallerPlan]:
    """Caller plans of about ``call_secs`` each against the echo, from the bundled dialogues' turns."""
    tts = make_tts(tts_name)
    timing = CallerTiming()
    plans = [plan_call(d, tts, timing) for d in load_dialogues(bundled_dialogues_path())]
    return pack_plans(plans, call_secs, echo_delay_ms, timing)
