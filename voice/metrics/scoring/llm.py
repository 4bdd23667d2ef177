"""The LLM judge: CallBench's judged dimensions, per assistant turn, by any OpenAI-compatible chat model.

``--judge openai:MODEL`` means: :class:`LLMJudge` over :class:`voice.llm.client.LLMClient` with that model,
the server's address and key from the flags or ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``.  What the model
reads and is told is in :mod:`voice.metrics.scoring.llm_prompt` (versioned by ``PROMPT_VERSION``).

**One request per call**, scoring all its turns at once: a turn's context use and a hang-up as the call's
ending can only be judged with the whole conversation in view, the transcript is sent once instead of once
per turn (cost grows with the call's length, not its square), and one answer keeps the scale consistent
across a call's turns.  The price: one malformed answer leaves the whole call unscored, which is why a
malformed answer is sent back with its problem and asked again first (``output_attempts``).

The answer must fit :func:`~voice.metrics.scoring.llm_prompt.output_schema` and name each turn asked about
exactly once, in order, each with a non-empty reason.  An answer that never does leaves every turn of the
call "not scored" with a reason that says so; a score is never guessed.  A server that cannot be reached
or keeps failing raises (:class:`~voice.errors.EngineUnavailable`, :class:`~voice.errors.EngineError`):
those are not the judge's verdict on the call.  Every :class:`~voice.metrics.scoring.vocabulary.TurnScore`
carries the judge's name, ``openai:MODEL/PROMPT_VERSION``.  Only the judged dimensions are returned;
dialogue rhythm is the measured timing score, added by whoever merges the judges' scores.

The same answer carries the call's verdict (:class:`~voice.metrics.scoring.vocabulary.GoalVerdict`): the
caller's
goal met or not, the preset respected or not.  It is validated with the turns: a missing or malformed
verdict, an empty reason, or ``not_applicable`` given for a preset that exists (or withheld for preset type
none) makes the whole answer malformed, re-asked like any other; an answer that never comes right leaves
the verdict not judged with the same reason as the turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from voice.errors import EngineOutputError
from voice.llm.client import ChatRequest, LLMClient, Message
from voice.llm.settings import LLMSettings, parse_model_spec
from voice.metrics.scoring.llm_prompt import (
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    DimensionAnswer,
    JudgeAnswer,
    VerdictAnswer,
    output_schema,
    render_call,
)
from voice.metrics.scoring.vocabulary import (
    JUDGED,
    CallJudgement,
    DimensionScore,
    GoalVerdict,
    ScoringInput,
    TurnScore,
    not_scored,
)

MAX_REASON_CHARS = 300


class LLMJudge:
    """Scores a call's heard turns with one chat completion; thread-safe (calls may be scored at once)."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.name = f"openai:{client.model}/{PROMPT_VERSION}"

    @classmethod
    def from_spec(cls, spec: str, **settings: Any) -> LLMJudge:
        """``from_spec("openai:deepseek-chat", base_url=...)``: the other keywords are LLMSettings fields."""
        return cls(LLMClient(LLMSettings(parse_model_spec(spec).model, **settings)))

    def request(self, call: ScoringInput) -> ChatRequest:
        """The chat request that scores ``call`` (what is sent, and what the cache key is made of)."""
        return ChatRequest(
            (Message("system", SYSTEM_PROMPT), Message("user", render_call(call))),
            schema=output_schema(),
            schema_name="callbench_turn_scores",
            prompt_version=f"callbench-judge/{PROMPT_VERSION}",
        )

    def judge_call(self, call: ScoringInput) -> CallJudgement:
        """The turns' scores and the call's verdict from one request (none for a call without turns)."""
        if not call.turns:
            why = "no caller turn in the call: nothing to judge"
            return CallJudgement([], GoalVerdict(None, why, None, why))
        expected = [t.turn for t in call.turns]
        preset = call.dialogue.preset.type
        try:
            result = self.client.chat(
                self.request(call), check=lambda data: check_answer(data, expected, preset)
            )
        except EngineOutputError as exc:
            reason = f"the LLM judge's answer was malformed, so not scored: {exc}"
            turns = [TurnScore(t, self.name, dict.fromkeys(JUDGED, not_scored(reason))) for t in expected]
            why = f"the LLM judge's answer was malformed, so not judged: {exc}"
            return CallJudgement(turns, GoalVerdict(None, why, None, why))
        answer: JudgeAnswer = result.data  # it fits output_schema and passed check_answer
        scores = [
            TurnScore(int(entry["turn"]), self.name, {d: _dimension(entry["scores"][d]) for d in JUDGED})
            for entry in answer["turns"]
        ]
        return CallJudgement(scores, _goal(answer["call_verdict"]))

    def judge_calls(self, calls: Iterable[ScoringInput]) -> Iterator[CallJudgement]:
        """:meth:`judge_call` for each call, in order, up to the client's concurrency at once."""
        pool = ThreadPoolExecutor(self.client.settings.concurrency, thread_name_prefix="llm-judge")
        futures = [pool.submit(self.judge_call, call) for call in calls]
        try:
            for future in futures:
                yield future.result()
        finally:  # an error (e.g. the server is gone) stops the calls not yet started
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self.client.close()


def check_answer(data: Any, expected: Sequence[int], preset_type: str | None = None) -> None:
    """Raise ``ValueError`` unless the (schema-valid) answer scores exactly the turns asked, in order, and
    gives a call verdict with reasons whose ``not_applicable`` matches the preset (``preset_type`` given)."""
    turns = [entry["turn"] for entry in data["turns"]]
    if turns != list(expected):
        raise ValueError(f"the answer scores turns {turns}; expected exactly {list(expected)}, in order")
    for entry in data["turns"]:
        for dim in JUDGED:
            if not entry["scores"][dim]["reason"].strip():
                raise ValueError(f"turn {entry['turn']}: {dim} has an empty reason")
    verdict = data["call_verdict"]
    for key in ("goal_reason", "preset_reason"):
        if not verdict[key].strip():
            raise ValueError(f"call_verdict: {key} is empty")
    if preset_type is None:
        return
    answered = verdict["preset_respected"]
    if preset_type == "none" and answered != "not_applicable":
        raise ValueError(
            f"call_verdict: the preset is none, so preset_respected is not_applicable, not {answered}"
        )
    if preset_type != "none" and answered == "not_applicable":
        raise ValueError(f"call_verdict: the preset is {preset_type}, so preset_respected is yes or no")


def _one_line(text: str) -> str:
    reason = " ".join(text.split())
    return reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 1] + "…"


def _dimension(raw: DimensionAnswer) -> DimensionScore:
    return DimensionScore(None if raw["score"] is None else int(raw["score"]), _one_line(raw["reason"]))


def _goal(raw: VerdictAnswer) -> GoalVerdict:
    return GoalVerdict(
        str(raw["caller_goal_met"]),
        _one_line(raw["goal_reason"]),
        str(raw["preset_respected"]),
        _one_line(raw["preset_reason"]),
    )
