"""The policy processor with the rules policy, in pipecat's test harness: what reaches the TTS for what the
caller said and how sure Whisper was of it (no models: the transcripts are given)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pipecat.frames.frames import (
    Frame,
    InputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.tests.utils import SleepFrame, run_test

from server.config import default_policy_factory
from server.piecewise_stt import CallerTurnFrame
from server.policy.processor import PolicyProcessor
from server.policy.rules import GREETING, UNCLEAR, PolicyReply
from server.processors import ASR_CONFIDENCE

START = InputTransportMessageFrame(
    message={
        "event": "start",
        "call_id": "c23",
        "dialogue": {
            "id": "taxi",
            "scenario": "taxi",
            "preset": {"type": "none", "text": ""},
            "owner_goal": "",
        },
    }
)
UNSURE = {"avg_logprob": -1.03, "no_speech_prob": 0.01, "compression_ratio": 0.69}
SURE = {"avg_logprob": -0.26, "no_speech_prob": 0.01, "compression_ratio": 0.82}


def turn(*texts: str, confidence: Mapping[str, float] | None = None) -> list[Frame]:
    """One caller turn: its segments' transcripts, each with Whisper's figures if given, then its end."""
    result = {ASR_CONFIDENCE: dict(confidence)} if confidence else None
    segments = [TranscriptionFrame(t, "", "t", result=result) for t in texts]
    return [
        UserStartedSpeakingFrame(),
        *segments,
        SleepFrame(0.05),
        UserStoppedSpeakingFrame(),
        SleepFrame(0.05),
    ]


async def call(
    *turns: list[Frame], factory: Any = default_policy_factory
) -> tuple[list[str], list[dict[str, Any]]]:
    """What the assistant said (greeting first) and what it logged, for the caller's turns."""
    down, _ = await run_test(
        PolicyProcessor(factory, start_timeout_secs=5),
        frames_to_send=[START, SleepFrame(0.05), *(frame for t in turns for frame in t)],
    )
    logs = [f.message for f in down if isinstance(f, OutputTransportMessageUrgentFrame)]
    return [f.text for f in down if isinstance(f, TTSSpeakFrame)], logs


async def test_a_lone_backchannel_is_heard_but_not_answered() -> None:
    spoken, logs = await call(turn("嗯，"), turn("我是滴滴司机，到上车点了。"))
    assert spoken[0] == GREETING and len(spoken) == 2  # the greeting, then only the real turn's answer
    assert [(m["kind"], m.get("text")) for m in logs[1:3]] == [("caller", "嗯，"), ("reply", "")]


async def test_a_misheard_turn_gets_a_request_to_repeat_not_its_words_back() -> None:
    first = turn("喂，你好，我是滴滴司机，到上车点了，", confidence=SURE)
    # the demo's turn came in two segments; the second one Whisper was unsure of
    misheard = [
        UserStartedSpeakingFrame(),
        TranscriptionFrame("怎么没看到人，", "", "t", result={ASR_CONFIDENCE: SURE}),
    ]
    misheard += turn("您车排尾号386别生得着", confidence=UNSURE)[1:]
    spoken, logs = await call(first, misheard)
    assert spoken[-1] == UNCLEAR
    (caller,) = [m for m in logs if m["kind"] == "caller" and "别生得着" in m["text"]]
    assert caller["confidence"]["avg_logprob"] == UNSURE["avg_logprob"]  # the worst segment's, in the log
    sure_spoken, _ = await call(first, turn("怎么没看到人，您车排尾号386别生得着", confidence=SURE))
    assert "386" in sure_spoken[-1]  # heard with confidence: taken as before


class Recording:
    """A plugged-in policy whose ``respond`` takes ``heard``: it gets the turn's figures."""

    heard: ClassVar[list[Any]] = []

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = view

    def greeting(self) -> str:
        return "您好。"

    def respond(self, caller_text: str, heard: Mapping[str, float] | None = None) -> PolicyReply:
        Recording.heard.append(heard)
        return PolicyReply(f"收到：{caller_text}")


async def test_a_policy_that_takes_heard_gets_the_worst_of_the_turn_and_none_without_figures() -> None:
    Recording.heard.clear()
    spoken, _ = await call(turn("我是", "快递员。", confidence=SURE), turn("好的，再见。"), factory=Recording)
    assert spoken == ["您好。", "收到：我是快递员。", "收到：好的，再见。"]
    assert Recording.heard == [SURE, None]


async def test_a_turn_heard_in_pieces_is_answered_with_the_pieces_its_end_names_whatever_came_first() -> None:
    def piece(n: int, text: str) -> TranscriptionFrame:
        return TranscriptionFrame(text, "", "t", result={"piece": n})

    frames: list[Frame] = [
        piece(0, "嗯"),  # a backchannel before the turn: not named, never answered
        UserStartedSpeakingFrame(),
        piece(1, "我是滴滴司机，"),
        CallerTurnFrame(pieces=(1, 2)),
        UserStoppedSpeakingFrame(),  # the end overtook the last piece's transcript
        SleepFrame(0.05),
        piece(2, "到上车点了。"),
        SleepFrame(0.05),
    ]
    spoken, logs = await call(frames)
    callers = [m["text"] for m in logs if m["kind"] == "caller"]
    assert callers == ["我是滴滴司机，到上车点了。"] and len(spoken) == 2
