"""The caller's decisions: asked of a real local HTTP model, checked, and never fatal to the call."""

import pytest

from tests.llm_fake import FakeLLM
from tests.records import short_delivery
from voice.dialogues import parse_dialogue
from voice.llm.client import LLMClient
from voice.llm.settings import LLMSettings
from voice.react import scripted_caller
from voice.react.brain import CallerBrain
from voice.react.heard_so_far import HeardLine
from voice.react.persona import PERSONAS
from voice.react.prompt import PROMPT_VERSION, Situation

DIALOGUE = parse_dialogue(short_delivery("d-1"), "mem", 1)  # greeting, then one caller line


def brain(url, tmp_path, timeout_s=10.0, **kw):
    settings = LLMSettings("rules", base_url=url, cache_dir=tmp_path, attempts=1, output_attempts=2, **kw)
    return CallerBrain(LLMClient(settings), DIALOGUE, PERSONAS["patient"], max_turns=4, timeout_s=timeout_s)


HEARD = [HeardLine("assistant", "您好，请讲", (), 0)]


async def test_an_answer_is_the_models_and_a_second_asking_replays_it(tmp_path, llm, no_openai_env):
    llm.respond(scripted_caller.answer)
    b = brain(llm.url, tmp_path)
    first = await b.decide(HEARD, Situation("reply_ended", 0))
    again = await b.decide(HEARD, Situation("reply_ended", 0))
    assert first.source == again.source == "llm" and not first.cached and again.cached
    assert first.decision == again.decision and first.decision.turn.text == "快递到了。"
    assert len(llm.requests) == 1 and first.key == again.key
    sent = llm.requests[0].body
    assert sent["response_format"]["type"] == "json_schema" and sent["temperature"] == 0
    assert PROMPT_VERSION == "callsim-caller/1"


async def test_a_refused_then_good_answer_is_used_and_the_refusal_kept(tmp_path, llm, no_openai_env):
    llm.answer({**scripted_caller.say("hello", "x")}).respond(scripted_caller.answer)
    d = await brain(llm.url, tmp_path).decide(HEARD, Situation("reply_ended", 0))
    assert d.source == "llm" and "Chinese characters" in d.rejected


async def test_a_slow_model_times_out_into_the_script(tmp_path, llm, no_openai_env):
    llm.respond(scripted_caller.answer, delay_s=2.0)
    d = await brain(llm.url, tmp_path, timeout_s=0.3).decide(HEARD, Situation("reply_ended", 0))
    assert d.source == "fallback_script" and "timed out after 0.3 s" in d.decision.reason
    assert d.decision.turn.text == "快递到了。"


@pytest.mark.parametrize(
    ("situation", "action", "source"),
    [
        (Situation("reply_ended", 1), "hang_up", "fallback_hangup"),  # the script has no second line
        (Situation("interrupt", 0, talking_s=3.0), "wait", "fallback_script"),
        (Situation("debrief", 1, ended_by="通话结束了"), "hang_up", "fallback_hangup"),
    ],
)
async def test_fallbacks_past_the_script_hang_up_and_a_cut_in_waits(tmp_path, situation, action, source):
    with FakeLLM() as fake:
        url = fake.url
    d = await brain(url, tmp_path, cache="off").decide(HEARD, situation)
    assert (d.decision.action, d.source) == (action, source) and d.decision.reason.startswith("fallback: ")
