"""The LLM policy's pieces: the system prompt, and the gate between the model and the voice."""

from __future__ import annotations

from typing import Any

from pipecat.frames.frames import (
    EndWorkerFrame,
    Frame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    OutputTransportMessageUrgentFrame,
    TTSSpeakFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.tests.utils import SleepFrame, run_test

from server.policy.llm import ReplyGate
from server.policy.llm_policy import FALLBACK, HANG_UP, system_prompt


def of_type(frames: list[Frame], kind: type) -> list[Any]:
    return [f for f in frames if isinstance(f, kind)]


def test_the_system_prompt_carries_the_preset_and_never_the_callers_goal():
    view = {
        "id": "d",
        "scenario": "taxi",
        "preset": {"type": "emergent", "text": "在医院陪家人看急诊，暂时不坐车了，帮我取消订单。"},
        "owner_goal": "取消打车订单",
        "caller_goal": "接到乘客",  # not part of an assistant view, and must not leak if it were
    }
    prompt = system_prompt(view)
    assert "紧急预设：在医院陪家人看急诊" in prompt and "机主希望：取消打车订单" in prompt
    assert "接到乘客" not in prompt and HANG_UP in prompt and "打错" in prompt
    assert "机主没有留下交代" in system_prompt({"preset": {"type": "none", "text": ""}})


async def test_tokens_stream_on_the_marker_is_removed_and_the_call_hangs_up_after_the_goodbye():
    context = LLMContext()
    frames: list[Frame] = [
        LLMFullResponseStartFrame(),
        LLMTextFrame("好的，"),
        LLMTextFrame("再见。["),
        LLMTextFrame("挂断]"),
        LLMFullResponseEndFrame(),
    ]
    down, _ = await run_test(ReplyGate(context), frames_to_send=frames)
    assert [f.text for f in of_type(down, TTSSpeakFrame)] == ["好的，再见。"] and of_type(
        down, EndWorkerFrame
    )
    assert context.get_messages()[-1] == {"role": "assistant", "content": "好的，再见。"}
    [log] = [f.message for f in of_type(down, OutputTransportMessageUrgentFrame)]
    assert log == {"event": "log", "kind": "reply", "text": "好的，再见。", "end_call": True}


async def test_clauses_go_to_the_voice_as_soon_as_they_are_written():
    frames: list[Frame] = [
        LLMFullResponseStartFrame(),
        LLMTextFrame("好的，麻烦"),  # 好的， is too short to be sent alone
        LLMTextFrame("您放门口就行，机主"),
        LLMTextFrame("在开会。"),
        LLMFullResponseEndFrame(),
    ]
    down, _ = await run_test(ReplyGate(LLMContext()), frames_to_send=frames)
    assert [f.text for f in of_type(down, TTSSpeakFrame)] == ["好的，麻烦您放门口就行，", "机主在开会。"]


async def test_a_bracket_that_is_not_the_marker_is_said():
    frames: list[Frame] = [LLMFullResponseStartFrame(), LLMTextFrame("门口[南"), LLMFullResponseEndFrame()]
    down, _ = await run_test(ReplyGate(LLMContext()), frames_to_send=frames)
    assert [f.text for f in of_type(down, TTSSpeakFrame)] == ["门口[南"]
    assert not of_type(down, EndWorkerFrame)


async def test_a_reply_cut_by_a_barge_in_is_remembered_as_cut():
    context = LLMContext()
    frames: list[Frame] = [
        LLMFullResponseStartFrame(),
        LLMTextFrame("机主在开会，"),
        SleepFrame(0.05),  # an interruption is a system frame: it would overtake the queued text
        InterruptionFrame(),
        SleepFrame(0.05),
    ]
    await run_test(ReplyGate(context), frames_to_send=frames)
    assert context.get_messages()[-1] == {"role": "assistant", "content": "机主在开会，……"}


async def test_a_model_that_never_answers_gets_the_spoken_fallback_and_a_hang_up():
    frames: list[Frame] = [LLMFullResponseStartFrame(), SleepFrame(0.3)]
    down, _ = await run_test(ReplyGate(LLMContext(), timeout_secs=0.1), frames_to_send=frames)
    assert [f.text for f in of_type(down, TTSSpeakFrame)] == [FALLBACK]
    assert of_type(down, EndWorkerFrame)
    logs = [f.message for f in of_type(down, OutputTransportMessageUrgentFrame)]
    assert logs and logs[0]["kind"] == "error" and "no reply" in logs[0]["message"]
