"""The caller model's prompt: goal, persona, script as guidance, what was heard, why it is asked now."""

from tests.records import short_delivery
from voice.dialogues import parse_dialogue
from voice.react.heard_so_far import HeardLine
from voice.react.persona import PERSONAS
from voice.react.prompt import SYSTEM_PROMPT, Situation, render_user


def test_the_user_message_has_every_section_in_mandarin():
    d = parse_dialogue(short_delivery("d-1"), "mem", 1)
    heard = [HeardLine("assistant", "您好", (), 0), HeardLine("caller", "快递到了", ("你打断了它",), 10)]
    text = render_user(d, PERSONAS["terse"], heard, Situation("reply_ended", 1), 6)
    assert f"你的目标：{d.caller_goal}" in text and PERSONAS["terse"].manner in text
    assert "参考剧本" in text and "  来电者：快递到了。" in text
    assert "  助理：您好" in text and "  你：快递到了[你打断了它]" in text
    assert text.endswith("现在：助理说完了，轮到你说话。") and "第 2 轮话，最多 6 轮" in text
    assert "JSON" in SYSTEM_PROMPT and "hang_up" in SYSTEM_PROMPT


def test_each_situation_says_why_the_caller_is_asked():
    assert "先开口" in Situation("first", 0).render()
    assert "3.5 秒" in Situation("interrupt", 1, talking_s=3.5).render()
    assert "没有回应" in Situation("reply_missed", 1).render()
    assert "助理挂断" in Situation("debrief", 2, ended_by="助理挂断了电话").render()
