"""``openai:MODEL`` behind the policy protocol: whole replies from a real local HTTP model, the conversation
kept, the hang-up marker turned into ``end_call``, and the spoken fallback when the model fails."""

from __future__ import annotations

import pytest

from server.policy.llm_policy import FALLBACK, HANG_UP, LLMPolicyFactory, LLMReply, spoken, system_prompt
from server.policy.rules import GREETING
from voice.contract.policy import Policy, answer
from voice.speech.known_replies import replay_policy

pytestmark = pytest.mark.usefixtures("no_openai_env")

VIEW = {"id": "takeout-1", "preset": {"type": "regular", "text": "外卖放门口。"}}  # an assistant view


def test_the_marker_becomes_a_hang_up_and_is_never_said():
    assert spoken(f"好的，再见。{HANG_UP}") == LLMReply("好的，再见。", end_call=True)
    assert spoken(f"好的，{HANG_UP}再见。") == LLMReply("好的，再见。", end_call=True)
    assert spoken("好的，麻烦放门口。") == LLMReply("好的，麻烦放门口。", end_call=False)


def test_a_call_asks_the_model_with_the_prompt_and_the_whole_conversation(llm):
    llm.answer("好的，麻烦您放门口就行。").answer(f"好的，再见。{HANG_UP}")
    policy: Policy = LLMPolicyFactory("openai:fake", base_url=llm.url)(VIEW)
    assert policy.greeting() == GREETING
    first = answer(policy, "您好，您的外卖到了。", {"avg_logprob": -0.2})
    assert (first.text, first.end_call) == ("好的，麻烦您放门口就行。", False)
    bye = policy.respond("好的，再见。")
    assert (bye.text, bye.end_call) == ("好的，再见。", True)
    last = llm.requests[-1].body
    assert last["model"] == "fake" and last["max_tokens"] == 200
    roles = [(m["role"], m["content"]) for m in last["messages"]]
    assert roles[0] == ("system", system_prompt(VIEW)) and roles[1] == ("assistant", GREETING)
    assert roles[2:] == [
        ("user", "您好，您的外卖到了。"),
        ("assistant", "好的，麻烦您放门口就行。"),
        ("user", "好的，再见。"),
    ]


def test_a_failing_model_gets_the_spoken_fallback_and_a_hang_up(llm):
    llm.fail(503, "overloaded")
    reply = LLMPolicyFactory("openai:fake", base_url=llm.url)(VIEW).respond("喂？")
    assert (reply.text, reply.end_call) == (FALLBACK, True)
    assert len(llm.requests) == 1  # one attempt: a live call cannot wait for retries


def test_whatever_drives_a_policy_drives_the_model(llm):
    from voice.dialogues import bundled_dialogues_path, load_dialogues

    llm.respond(lambda body: f"好的，再见。{HANG_UP}")
    dialogue = load_dialogues(bundled_dialogues_path())[0]
    replies = replay_policy([dialogue], LLMPolicyFactory("openai:fake", base_url=llm.url))
    assert replies == [GREETING, "好的，再见。"] and len(llm.requests) == 1
