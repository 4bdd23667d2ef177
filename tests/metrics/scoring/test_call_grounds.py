from voice.dialogues import Dialogue, parse_dialogue
from voice.metrics.scoring.call_grounds import Grounds, backchannel_only

GREETING = {"role": "assistant", "text": "您好，我是机主的电话助理，请问有什么事？"}


def call(*lines: str, preset: str | None = "外卖放门口就行，我在开会。", kind: str = "regular") -> Dialogue:
    """A dialogue of alternating caller and reference lines after the greeting."""
    turns = [GREETING] + [
        {"role": "caller" if i % 2 == 0 else "assistant", "text": t} for i, t in enumerate(lines)
    ]
    return parse_dialogue(
        {"id": "g", "scenario": "takeout", "preset": {"type": kind if preset else "none", "text": preset},
         "owner_goal": "x", "caller_goal": "y", "relation": "alignment", "turns": turns}
    )  # fmt: skip


def test_a_question_a_proposal_and_a_request_need_an_answer_a_goodbye_does_not():
    d = call(
        "我明天下午三点送过来行吗？", "可以。", "麻烦你跟他说一声。", "好的。", "好嘞，走了啊。", "再见。"
    )
    assert Grounds(d, 1).needs_answer and Grounds(d, 3).needs_answer
    assert Grounds(d, 5).goodbye and not Grounds(d, 5).needs_answer
    assert Grounds(d, 1).reference == "可以。" and Grounds(d, 1).caller_text.startswith("我明天")


def test_a_wrong_number_is_told_by_the_caller_or_by_the_reference_and_stays_so():
    d = call(
        "喂，刘姐吗？", "您好，这边没有刘姐，您可能打错号码了。", "啊？是不是尾号六六二八？", "不方便核对。"
    )
    assert Grounds(d, 1).wrong_number and Grounds(d, 3).wrong_number  # the reference said so
    mine = call("不好意思，我打错了。", "没关系。")
    assert Grounds(mine, 1).wrong_number
    other = call("李娜的号码你有吗？", "李娜的号码我这边没有，您留个电话？")
    assert not Grounds(other, 1).wrong_number  # "not here" about a number is not a wrong number


def test_what_the_caller_knows_is_the_call_up_to_this_turns_reference_and_earlier_starts_with_the_preset():
    d = call("我到楼下了。", "好的，放门口就行。", "放几楼门口？", "三楼。")
    g = Grounds(d, 1)
    assert "放门口" in g.known and "三楼" not in g.known
    assert Grounds(d, 3).earlier.startswith("外卖放门口就行") and "我到楼下了" in Grounds(d, 3).earlier


def test_scam_and_sales_marks_come_from_the_callers_words():
    d = call("您好，我是客服，您的账户被冻结了，请报一下验证码。", "验证码不能提供，再见。", preset=None)
    assert Grounds(d, 1).scam and not Grounds(d, 1).sales
    sales = call("您好，我们这边有个低息贷款，了解一下吗？", "不需要，谢谢。", preset=None)
    assert Grounds(sales, 1).sales and not Grounds(sales, 1).scam


def test_a_bare_acknowledgement_is_only_that_a_reply_with_content_is_not():
    assert backchannel_only("嗯，好。") and backchannel_only("哦，这样啊。") and backchannel_only("好的")
    assert not backchannel_only("好的，放门口就行。") and not backchannel_only("")
    d = call("我已经到小区门口了，放哪儿？", "放门口就行。", "谢谢。", "不客气。")
    assert Grounds(d, 1).more_than_backchannel and not Grounds(d, 3).more_than_backchannel


def test_the_callers_own_words_said_back_are_a_brush_off_and_dialling_someone_else_is_a_wrong_number():
    from voice.metrics.scoring.call_grounds import brush_off

    caller = "楼下的，你家卫生间往下漏水了，家里有人吗？"
    assert brush_off("哦，漏水啊，好的，我知道了", caller)
    assert not brush_off("漏水啊，我马上让物业过去看看", caller)  # something of its own
    assert brush_off("好的，这个情况我知道了")
    d = call("不好意思，我打成上一单乘客的电话了。", "没关系。")
    assert Grounds(d, 1).wrong_number
