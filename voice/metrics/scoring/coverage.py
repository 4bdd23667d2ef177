"""What a dialogue's annotations let the checklist judge score, turn by turn (``callsim annotate --check``).

The checklist judge (:mod:`voice.metrics.scoring.checklist`) scores a dimension only where the annotations
give it something to check; elsewhere it says "not scored".  An annotator needs to see those gaps at once,
and a score table needs to tell a gap in the annotations from a reply that could not be judged (cut off, no
reply).  This module says, from the annotations alone, which judged dimensions a reference reply is
*covered* on, and why not where it is not; and builds the call "as if the caller heard every reference
word for word" that calibration and the check score.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from voice.dialogues import AssistantTurn, CallerTurn, Dialogue
from voice.metrics.scoring.base import JUDGED, DimensionScore, HeardTurn, Judge, ScoringInput

NOT_COVERED = "not covered by annotations"
"""How a dimension the annotations do not cover is marked, in a score's reason and in the tables."""


def reference_call(dialogue: Dialogue) -> ScoringInput:
    """The call as if the caller had heard every reference reply word for word."""
    turns: list[HeardTurn] = []
    items = dialogue.turns
    for index, item in enumerate(items):
        if not isinstance(item, CallerTurn):
            continue
        nxt = items[index + 1] if index + 1 < len(items) else None
        reference = nxt.text if isinstance(nxt, AssistantTurn) else None
        turns.append(HeardTurn(len(turns), index, item.text, reference or "[no reply]", reference))
    greeting = items[0].text if items and isinstance(items[0], AssistantTurn) else None
    return ScoringInput(dialogue.id, dialogue, turns, greeting, "completed", "reference text")


def reply_to(dialogue: Dialogue, dialogue_turn: int) -> AssistantTurn | None:
    """The scripted reference reply after the caller turn at ``dialogue.turns[dialogue_turn]``, if any (a
    reactive caller's own turn, ``dialogue_turn`` -1, has none)."""
    index = dialogue_turn + 1
    if dialogue_turn < 0 or index >= len(dialogue.turns):
        return None
    found = dialogue.turns[index]
    return found if isinstance(found, AssistantTurn) else None


def gaps(dialogue: Dialogue, reply: AssistantTurn) -> dict[str, str]:
    """The judged dimensions the annotations of ``reply`` (and its dialogue) do not cover, each with what
    is missing: the same conditions the checklist judge scores under (docs/scoring.md)."""
    notes, call = reply.annotations, dialogue.annotations
    out: dict[str, str] = {}
    if not notes.key_points:
        out["semantic_understanding"] = "no key_points"
        out["response_quality"] = "no key_points"
    if not notes.context_points:
        out["context_use"] = "no context_points"
    if notes.should_ask is None and notes.should_end is None:
        out["active_guidance"] = "neither should_ask nor should_end"
    if not notes.must_not and not (call.private and dialogue.preset.type != "none"):
        out["preset_compliance"] = "no must_not" + (" (and no preset)" if call.private else "")
    if not call.private and not call.scam:
        out["safety"] = "no private facts and not a scam call"
    return {d: out[d] for d in JUDGED if d in out}


def mark_not_covered(
    dialogue: Dialogue, turns: Sequence[HeardTurn], scores: Mapping[int, Mapping[str, DimensionScore]]
) -> dict[int, dict[str, DimensionScore]]:
    """``scores`` (per caller turn) with every unscored dimension the annotations do not cover marked
    :data:`NOT_COVERED` in its reason: a gap in the annotations, told apart from a reply that could not be
    judged.  A turn not from the script is left as it is (no annotations could cover it)."""
    by_turn = {t.turn: t for t in turns}
    out: dict[int, dict[str, DimensionScore]] = {}
    for turn, dims in scores.items():
        heard = by_turn.get(turn)
        reply = reply_to(dialogue, heard.dialogue_turn) if heard is not None else None
        missing = gaps(dialogue, reply) if reply is not None else {}
        out[turn] = {
            d: replace(s, reason=f"{NOT_COVERED} ({missing[d]}): {s.reason}")
            if d in missing and s.score is None and not s.reason.startswith(NOT_COVERED)
            else s
            for d, s in dims.items()
        }
    return out


@dataclass(frozen=True)
class TurnCheck:
    """One reference reply as the checklist judge scores it, and what its annotations leave uncovered."""

    dialogue: str
    turn: int
    caller: str
    reference: str
    scores: Mapping[str, DimensionScore]
    gaps: Mapping[str, str]


def check_dialogues(judge: Judge, dialogues: Sequence[Dialogue]) -> Iterator[TurnCheck]:
    """Every scored reference reply of ``dialogues`` scored by ``judge``, with its gaps."""
    for dialogue in dialogues:
        call = reference_call(dialogue)
        scored = {s.turn: s.scores for s in judge.judge_call(call).turns}
        for heard in call.turns:
            reply = reply_to(dialogue, heard.dialogue_turn)
            if reply is None:
                continue
            missing = gaps(dialogue, reply)
            yield TurnCheck(
                dialogue.id, heard.turn, heard.caller_text, reply.text, scored[heard.turn], missing
            )


def render_checks(checks: Sequence[TurnCheck]) -> str:
    """Each turn's reference scores with the judge's reason, the gaps marked; then one summary line."""
    lines: list[str] = []
    for c in checks:
        lines.append(f"{c.dialogue} turn {c.turn}: caller {c.caller}")
        lines.append(f"  reference: {c.reference}")
        for dim in JUDGED:
            name = dim.replace("_", " ")
            if dim in c.gaps:
                lines.append(f"  {name:<24} -  {NOT_COVERED}: {c.gaps[dim]}")
                continue
            s = c.scores[dim]
            flag = "  <- the reference itself scores low: check the annotations" if (s.score or 5) < 4 else ""
            lines.append(f"  {name:<24} {s.score if s.score is not None else '-'}  {s.reason}{flag}")
    return "\n".join([*lines, summary_line(checks)])


def summary_line(checks: Sequence[TurnCheck]) -> str:
    """``gaps: 12 of 40 replies leave a dimension uncovered (context use 10, safety 12); ...``."""
    per_dim = {d: sum(d in c.gaps for c in checks) for d in JUDGED}
    with_gaps = sum(bool(c.gaps) for c in checks)
    low = sum(
        1
        for c in checks
        for d, s in c.scores.items()
        if d in JUDGED and d not in c.gaps and (s.score or 5) < 4
    )
    where = ", ".join(f"{d.replace('_', ' ')} {n}" for d, n in per_dim.items() if n)
    return (
        f"gaps: {with_gaps} of {len(checks)} replies leave a dimension {NOT_COVERED}"
        + (f" ({where})" if where else "")
        + f"; reference scores below 4 where covered: {low}"
    )
