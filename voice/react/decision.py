"""The reactive caller's answer: its JSON schema, and the checks that turn it into a :class:`CallerDecision`.

The model answers one JSON object per turn.  The schema (sent as structured output) fixes the shape; the
checks then hold it to the same bounds as a hand-written dialogue (:func:`voice.dialogues.check_caller_turn`:
Chinese text, pause and barge-in ranges, a mid-turn pause that splits the text at a proper prefix, a
backchannel of at most four characters) plus what only makes sense here: ``say`` needs text, ``hang_up``
needs the caller's verdict on its goal, ``wait`` only answers the question whether to cut in, and a
turn is at most twice the persona's length (the prompt asks for the length itself).  Anything else is
refused with the reason, which the LLM client sends back to the model once more before the caller falls
back (:mod:`voice.react.brain`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from voice.dialogues import Backchannel, CallerTurn, PauseInside, check_caller_turn
from voice.llm.schema import JsonSchema

ACTIONS = ("say", "hang_up", "wait")
GOAL_VERDICTS = ("yes", "partly", "no")
MAX_TURN_CHARS = 200  # a hard ceiling whatever the persona: a phone turn, not a speech


class PauseInsideAnswer(TypedDict):
    after: str
    ms: int


class BackchannelAnswer(TypedDict):
    text: str
    at_ms: int


class CallerAnswer(TypedDict):
    """An answer that fits :func:`output_schema` (every key present, null when unused)."""

    action: str
    text: str
    pause_before_ms: int | None
    pause_inside: PauseInsideAnswer | None
    backchannel: BackchannelAnswer | None
    interrupt_after_ms: int | None
    goal: str | None
    reason: str


def _nullable(schema: JsonSchema) -> JsonSchema:
    return {"anyOf": [schema, {"type": "null"}]}


def output_schema() -> JsonSchema:
    """What the caller model must answer (strict structured output: every key present, null when unused)."""
    cue_ms: JsonSchema = {"type": "integer"}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "action",
            "text",
            "pause_before_ms",
            "pause_inside",
            "backchannel",
            "interrupt_after_ms",
            "goal",
            "reason",
        ],
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "text": {"type": "string", "description": "what you say (say); empty otherwise"},
            "pause_before_ms": _nullable(cue_ms),
            "pause_inside": _nullable(
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["after", "ms"],
                    "properties": {"after": {"type": "string"}, "ms": cue_ms},
                }
            ),
            "backchannel": _nullable(
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["text", "at_ms"],
                    "properties": {"text": {"type": "string"}, "at_ms": cue_ms},
                }
            ),
            "interrupt_after_ms": _nullable(cue_ms),
            "goal": _nullable({"type": "string", "enum": list(GOAL_VERDICTS)}),
            "reason": {"type": "string"},
        },
    }


@dataclass(frozen=True)
class CallerDecision:
    """One checked answer: a turn to say (with cues for the reply to it), a hang-up, or waiting."""

    action: str
    turn: CallerTurn | None = None  # say: the text, its pause before and mid-turn pause
    backchannel: Backchannel | None = None  # during the assistant's next reply
    interrupt_after_ms: int | None = None  # cut into the next reply if it goes on this long
    goal: str = ""  # hang_up: yes, partly, no
    reason: str = ""


def parse_decision(data: Any, *, interrupting: bool, max_chars: int) -> CallerDecision:
    """A :class:`CallerDecision` from the model's parsed JSON, or ValueError naming every problem."""
    if not isinstance(data, dict):
        raise ValueError(f"expected one JSON object, got {type(data).__name__}")
    problems: list[str] = []
    action, text = data.get("action"), data.get("text") or ""
    reason = str(data.get("reason") or "").strip()
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
    if action == "wait" and not interrupting:
        problems.append(
            "action wait only answers whether to cut in; the assistant has stopped: say or hang_up"
        )
    if action == "hang_up":
        if data.get("goal") not in GOAL_VERDICTS:
            problems.append(
                f"hang_up needs goal: one of {', '.join(GOAL_VERDICTS)}, got {data.get('goal')!r}"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return CallerDecision("hang_up", goal=str(data["goal"]), reason=reason)
    if action == "wait":
        if problems:
            raise ValueError("; ".join(problems))
        return CallerDecision("wait", reason=reason)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("say needs the text you say")
    text = text.strip()
    limit = min(2 * max_chars, MAX_TURN_CHARS)  # the persona's length is guidance; twice it is too long
    if len(text) > limit:
        problems.append(f"text is {len(text)} characters; say at most {limit} (one short phone turn)")
    turn_obj: dict[str, Any] = {"role": "caller", "text": text}
    for key in ("pause_before_ms", "pause_inside"):
        if data.get(key) is not None:
            turn_obj[key] = data[key]
    problems += [f"{p.field}: {p.reason}" for p in check_caller_turn(turn_obj, "<caller model>", "answer")]
    if data.get("backchannel") is not None:
        cue = {"role": "caller", "text": text, "backchannel": data["backchannel"]}
        problems += [f"{p.field}: {p.reason}" for p in check_caller_turn(cue, "<caller model>", "answer")]
    if data.get("interrupt_after_ms") is not None:
        cue = {"role": "caller", "text": text, "barge_in_ms": data["interrupt_after_ms"]}
        problems += [
            f"{p.field.replace('barge_in_ms', 'interrupt_after_ms')}: {p.reason}"
            for p in check_caller_turn(cue, "<caller model>", "answer")
        ]
    if problems:
        raise ValueError("; ".join(dict.fromkeys(problems)))
    pause = data.get("pause_inside")
    bc = data.get("backchannel")
    return CallerDecision(
        "say",
        turn=CallerTurn(
            text,
            pause_before_ms=data.get("pause_before_ms"),
            pause_inside=PauseInside(pause["after"], pause["ms"]) if pause else None,
        ),
        backchannel=Backchannel(bc["text"].strip(), bc["at_ms"]) if bc else None,
        interrupt_after_ms=data.get("interrupt_after_ms"),
        reason=reason,
    )
