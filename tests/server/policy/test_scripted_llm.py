"""The scripted stand-in for ``--policy openai:MODEL`` (``server/policy/scripted_llm.py``): the rules'
replies,
read from the LLM policy's own prompt, with the hang-up marker."""

from __future__ import annotations

from server.policy.llm_policy import HANG_UP, spoken, system_prompt
from server.policy.rules import GREETING, RulePolicy
from server.policy.scripted_llm import answer

PRESET = {"type": "emergent", "text": "在医院陪家人看急诊，暂时不坐车了，帮我取消订单。"}
SYSTEM = system_prompt({"preset": PRESET})


def chat(*said: str) -> str:
    messages = [{"role": "system", "content": SYSTEM}]
    for text in said:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "…"}]
    return answer({"messages": messages[:-1] if said else messages})


def test_it_answers_as_the_rules_do_with_the_preset_read_from_the_prompt():
    first = chat("喂，我是滴滴司机，到门口了。")
    expected = RulePolicy({"preset": PRESET}).respond("喂，我是滴滴司机，到门口了。")
    assert first == expected.text and "麻烦您取消订单" in first and HANG_UP not in first


def test_a_goodbye_ends_with_the_hang_up_marker_and_no_turn_is_the_greeting():
    bye = chat("喂，我是滴滴司机，到门口了。", "好，再见。")
    assert bye.endswith(HANG_UP) and spoken(bye).end_call
    assert chat() == GREETING


def test_without_a_preset_in_the_prompt_it_plays_the_rules_without_one():
    plain = answer(
        {"messages": [{"role": "system", "content": system_prompt({})}, {"role": "user", "content": "喂？"}]}
    )
    assert plain == RulePolicy({"preset": {"type": "none", "text": ""}}).respond("喂？").text
