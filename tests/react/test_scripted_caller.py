"""The rule-played caller model (``voice/react/scripted_caller.py``): its answers to the caller's real prompts
(served
over HTTP by ``callsim fake-llm --role caller``: tests/llm/test_fake_cli.py)."""

from __future__ import annotations

import pytest

from tests.records import short_delivery
from voice.dialogues import parse_dialogue
from voice.react import scripted_caller
from voice.react.heard_so_far import HeardLine
from voice.react.persona import PERSONAS
from voice.react.prompt import Situation, render_user

DIALOGUE = parse_dialogue(short_delivery("d-1"), "mem", 1)  # 助理：您好。 来电者：快递到了。 助理：放驿站吧。


def ask(heard: list[HeardLine], situation: Situation) -> dict:
    user = render_user(DIALOGUE, PERSONAS["terse"], heard, situation, 6)
    messages = [{"role": "system", "content": "…"}, {"role": "user", "content": user}]
    return scripted_caller.answer({"messages": messages})


GREETED = [HeardLine("assistant", "您好，机主不在，您有什么事？", (), 0)]
SAID = [*GREETED, HeardLine("caller", "快递到了。", (), 10)]


def test_it_follows_the_script_then_hangs_up_when_the_assistant_says_goodbye() -> None:
    first = ask(GREETED, Situation("reply_ended", 0))
    assert (first["action"], first["text"]) == ("say", "快递到了。")
    bye = ask([*SAID, HeardLine("assistant", "好的，放驿站吧，再见", (), 20)], Situation("reply_ended", 1))
    assert (bye["action"], bye["goal"]) == ("hang_up", "yes")


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ("什么？", "我是说，快递到了。"),  # asked to repeat: say it again
        ("", "我是说，快递到了。"),  # heard nothing
        ("今天天气真不错呀朋友", scripted_caller.ASK_AGAIN),  # nothing like the reference: what did it mean
    ],
)
def test_a_reply_it_cannot_use_gets_the_line_again_or_a_question(reply: str, text: str) -> None:
    decision = ask([*SAID, HeardLine("assistant", reply, (), 20)], Situation("reply_ended", 1))
    assert (decision["action"], decision["text"]) == ("say", text)


def test_a_wrong_number_ends_with_the_goal_missed_and_silence_asks_if_anyone_is_there() -> None:
    wrong = ask([*SAID, HeardLine("assistant", "您打错了", (), 20)], Situation("reply_ended", 1))
    assert (wrong["action"], wrong["goal"]) == ("hang_up", "no")
    assert ask(SAID, Situation("reply_missed", 1))["text"] == scripted_caller.STILL_THERE
