"""The scripted stand-in for ``--judge openai:MODEL``: a well-formed judge answer, the same for every call.

Not a model and not a judgement: a script for tests and demos, so that the LLM judge's whole path — the
prompt, structured output, the cache, the verdicts in ``scores.json`` and the report — runs without model
weights or a key.  It reads only which turns the judge's prompt asks about (:func:`asked_turns`, from
:func:`voice.metrics.scoring.llm_prompt.render_call`) and gives each the same score on every judged
dimension, with a reason saying it is a stand-in, and one fixed call verdict (:func:`verdict`).
``callsim fake-llm --role judge`` serves it (:mod:`voice.llm.fake_cli`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voice.metrics.scoring.llm_prompt import DimensionAnswer, JudgeAnswer, VerdictAnswer
from voice.metrics.scoring.vocabulary import JUDGED

ASKED = "Score every assistant turn: "  # the line of the judge's prompt that lists the turns
NO_PRESET = "Preset (机主预设): none"  # the prompt's line for a dialogue whose owner left no instruction
SCORE = 3  # the middle of the 1..5 scale: a stand-in says nothing about the call
REASON = "scripted stand-in judge: a fixed score, not a judgement"


def user_message(body: Mapping[str, Any]) -> str:
    """The last user message of a chat request's body (the call, as the judge sees it)."""
    return next((str(m["content"]) for m in reversed(body["messages"]) if m.get("role") == "user"), "")


def asked_turns(user: str) -> list[int]:
    """The turn numbers the prompt asks to be scored (none when it lists none)."""
    _, found, rest = user.rpartition(ASKED)
    listed = rest.split(";")[0] if found else ""
    return [int(t) for t in listed.split(",") if t.strip()]


def verdict(user: str) -> VerdictAnswer:
    """The fixed call verdict: goal partly met; the preset respected, or not applicable when there is none
    (the judge refuses any other answer: :func:`voice.metrics.scoring.llm.check_answer`)."""
    return {
        "goal_reason": REASON,
        "caller_goal_met": "partly",
        "preset_reason": REASON,
        "preset_respected": "not_applicable" if NO_PRESET in user else "yes",
    }


def answer(
    body: Mapping[str, Any],
    *,
    score: int = SCORE,
    reason: str = REASON,
    call: VerdictAnswer | None = None,
) -> JudgeAnswer:
    """The judge's answer to one request: ``score`` for every asked turn and dimension, then ``call``
    (default: :func:`verdict`)."""
    user = user_message(body)
    scores: dict[str, DimensionAnswer] = {d: {"score": score, "reason": reason} for d in JUDGED}
    return {
        "turns": [{"turn": t, "scores": scores} for t in asked_turns(user)],
        "call_verdict": {**call} if call is not None else verdict(user),
    }
