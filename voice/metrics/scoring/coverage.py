"""What the checklist judge has grounds to score, turn by turn (``callsim annotate --check``).

The checklist judge (:mod:`voice.metrics.scoring.checklist`) scores a dimension where the annotations or
the dialogue itself (:mod:`voice.metrics.scoring.grounded`: the preset, the caller's turn, the reference)
give it something to hold a reply against; elsewhere it says "not scored".  An annotator needs to see
those gaps before a run, and a score table needs to tell a turn with no grounds from a reply that could not
be judged (cut off, no reply), never dropping either silently.  This module says which judged dimensions a
reference reply is *covered* on (the checklist scores the reference there), and why not where it is not;
and builds the call "as if the caller heard every reference word for word" that calibration and the check
score.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from voice.dialogues import AssistantTurn, CallerTurn, Dialogue
from voice.metrics.scoring.vocabulary import JUDGED, DimensionScore, HeardTurn, Judge, ScoringInput

NOT_COVERED = "no grounds to judge"
"""How a dimension neither the annotations nor the dialogue give grounds for is marked, in a score's
reason and in the tables (``not_covered`` in scores.json, ``coverage`` in results.json)."""


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


@functools.lru_cache(maxsize=1024)
def gaps(dialogue: Dialogue, dialogue_turn: int) -> dict[str, str]:
    """The judged dimensions the checklist has no grounds to judge the reply to the caller turn at
    ``dialogue.turns[dialogue_turn]`` on, each with why: neither the annotations nor the dialogue itself
    (its preset, the caller's turn, the reference) give it anything to hold a reply against.  Read off
    the checklist's own scores of the reference reply, so the gaps are exactly what it leaves unjudged.
    Cached: a call's heard, text and reference versions ask for the same turns' gaps (callers must not
    change the dict)."""
    from voice.metrics.scoring.checklist import score_reply  # the judge whose grounds these are

    reply = reply_to(dialogue, dialogue_turn)
    if reply is None:
        return {}
    caller = dialogue.turns[dialogue_turn].text
    heard = HeardTurn(0, dialogue_turn, caller, reply.text, reply.text)
    scores = score_reply(dialogue, heard)
    return {d: scores[d].reason for d in JUDGED if scores[d].score is None}


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
        # a turn after the hang-up is not judged because the call had ended, whatever its grounds
        missing = gaps(dialogue, heard.dialogue_turn) if heard is not None and not heard.after_hangup else {}
        out[turn] = {
            d: replace(s, reason=f"{NOT_COVERED}: {s.reason}")
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
            missing = gaps(dialogue, heard.dialogue_turn)
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
                lines.append(f"  {name:<24} -  {NOT_COVERED}: {c.gaps[dim]}")  # the judge's own reason
                continue
            s = c.scores[dim]
            flag = "  <- the reference itself scores low: check the annotations" if (s.score or 5) < 4 else ""
            lines.append(f"  {name:<24} {s.score if s.score is not None else '-'}  {s.reason}{flag}")
    return "\n".join([*lines, summary_line(checks)])


def summary_line(checks: Sequence[TurnCheck]) -> str:
    """``gaps: 12 of 40 replies have a dimension with no grounds to judge (context use 10, safety 12);
    ...``."""
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
        f"gaps: {with_gaps} of {len(checks)} replies have a dimension with {NOT_COVERED}"
        + (f" ({where})" if where else "")
        + f"; reference scores below 4 where covered: {low}"
    )
