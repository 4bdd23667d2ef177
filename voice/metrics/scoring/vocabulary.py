"""The scoring vocabulary: CallBench's seven dimensions, a turn's scores, what a judge reads, the judge.

A score is 1-5 with a one-line reason, or "not scored" (``score is None``) with the reason why a judge
could not decide: never a made-up number.  Dialogue rhythm is not judged from text: it is the timing score
CallSim measures (:mod:`voice.metrics.rhythm`) and is copied in unchanged.

Besides the turns, a judge gives one verdict per call (:class:`GoalVerdict`): was the caller's goal met,
and was the owner's preset respected.  It sits next to the turn scores, never inside them, so a turn's
score means the same whether or not a judge can give the verdict (the checklist cannot judge a goal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from voice.dialogues import Dialogue

DIMENSIONS: tuple[str, ...] = (
    "semantic_understanding",
    "context_use",
    "active_guidance",
    "response_quality",
    "preset_compliance",
    "dialogue_rhythm",
    "safety",
)
"""CallBench's turn-level dimensions, in its order."""

JUDGED: tuple[str, ...] = tuple(d for d in DIMENSIONS if d != "dialogue_rhythm")
"""The dimensions a judge scores from text (rhythm comes from timing)."""


@dataclass(frozen=True)
class DimensionScore:
    """1-5 with a one-line reason, or ``score=None`` ("not scored") with the reason why."""

    score: int | None
    reason: str

    def __post_init__(self) -> None:
        if self.score is not None and not 1 <= self.score <= 5:
            raise ValueError(f"a score is 1-5 or None, got {self.score}")


@dataclass(frozen=True)
class TurnScore:
    """One assistant turn (the reply to caller turn ``turn``) scored on every dimension by ``judge``."""

    turn: int
    judge: str  # e.g. "checklist/1" or "openai:qwen2.5-7b/3" (name/prompt version)
    scores: Mapping[str, DimensionScore]


@dataclass(frozen=True)
class HeardTurn:
    """One caller turn and the assistant's reply as the caller heard it, ready for a judge.

    ``heard`` is the transcript of the reply with timing facts inlined where they matter for judging (e.g.
    ``[caller interrupted here]``, ``[assistant cut off]``, ``[assistant talked over the caller for 1.2 s]``,
    ``[no reply]``); ``tags`` lists the same facts as short machine-readable strings.
    """

    turn: int  # caller turn index (0-based), as in the metrics
    dialogue_turn: int  # index in the dialogue's turn list of the caller turn
    caller_text: str  # what the caller said
    heard: str  # the assistant's reply as heard, with timing tags
    reference: str | None  # the dialogue's reference reply after this caller turn
    tags: tuple[str, ...] = ()
    rhythm: int | None = None  # the measured dialogue-rhythm score of this turn
    after_hangup: bool = False  # the assistant had hung up: this is the call's ending, not a failed turn


@dataclass(frozen=True)
class ScoringInput:
    """Everything a judge may read about one call: the dialogue (preset, goals) and the heard turns."""

    call_id: str
    dialogue: Dialogue
    turns: Sequence[HeardTurn]
    greeting: str | None = None  # the assistant's opening as heard, if any
    ended_by: str = ""  # "assistant_hangup", "completed", ... (the call's outcome)
    transcriber: str = ""  # which transcriber made ``heard`` (and its settings)
    notes: tuple[str, ...] = field(default_factory=tuple)


GOAL_MET: tuple[str, ...] = ("yes", "partly", "no")
"""The judge's answers to "was the caller's goal met?" (the reactive caller's own verdict uses the same)."""

PRESET_RESPECTED: tuple[str, ...] = ("yes", "no", "not_applicable")
"""The answers to "was the owner's preset respected over the call?"; ``not_applicable``: preset type none."""


@dataclass(frozen=True)
class GoalVerdict:
    """A judge's call-level verdict: each answer, or ``None`` ("not judged") with the reason why.

    Like a score, a verdict a judge cannot give is recorded as not given, with why, never guessed.
    """

    caller_goal_met: str | None  # one of GOAL_MET, or None: not judged
    reason: str
    preset_respected: str | None  # one of PRESET_RESPECTED, or None: not judged
    preset_reason: str

    def __post_init__(self) -> None:
        if self.caller_goal_met is not None and self.caller_goal_met not in GOAL_MET:
            raise ValueError(f"caller_goal_met is one of {GOAL_MET} or None, got {self.caller_goal_met!r}")
        if self.preset_respected is not None and self.preset_respected not in PRESET_RESPECTED:
            raise ValueError(
                f"preset_respected is one of {PRESET_RESPECTED} or None, got {self.preset_respected!r}"
            )


@dataclass(frozen=True)
class CallJudgement:
    """Everything a judge says of one call: each turn's scores, and its verdict on the call."""

    turns: list[TurnScore]
    goal: GoalVerdict


class Judge(Protocol):
    """Scores every heard turn of a call on the judged dimensions, and gives its verdict on the call."""

    name: str  # recorded with every score, with the prompt or checklist version

    def judge_call(self, call: ScoringInput) -> CallJudgement:
        """The turns' scores and the call's verdict, from one look at the call (one LLM request).

        The one entry point: what needs only the turns (calibration) takes ``.turns``."""
        ...


def not_scored(reason: str) -> DimensionScore:
    return DimensionScore(None, reason)
