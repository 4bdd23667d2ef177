from voice.metrics.scoring.points import clash, contradiction, conveys, denied, missing


def test_a_point_is_conveyed_in_its_words_or_its_synonyms_not_denied():
    assert conveys("那这趟车不要了，您那边撤单就行", ("取消",))
    assert not conveys("这单先别取消，机主一会儿就下来", ("取消",))
    assert missing("明天下午不可以", [("可以",), ("明天",)]) == [("可以",)]


def test_a_fact_asked_for_again_is_not_stated():
    assert not conveys("好的，请问是什么岗位？", ("岗位",), stated=True)
    assert conveys("好的，请问是什么岗位？", ("岗位",))  # a key point may be the thing asked about
    assert conveys("我把岗位告诉他", ("岗位",), stated=True)


def test_a_point_named_only_to_be_denied():
    assert denied("机主也不是不需要，您把资料发过来吧", [("不需要", "不用了")]) == ("不需要", "不用了")
    assert denied("这单先别取消", [("取消",)]) == ("取消",)
    assert denied("机主不需要，谢谢", [("不需要",)]) is None  # said
    assert denied("好的，再见", [("不需要",)]) is None  # not named at all


def test_a_number_said_otherwise_contradicts_the_point():
    assert contradiction("对，5栋2单元", ("对", "3栋")) == ("5栋", "3栋")
    assert contradiction("对，3栋2单元", ("对", "3栋")) is None
    assert contradiction("他四点到", ("4点",)) is None  # numerals are digits
    assert contradiction("他五点到", ("4点",)) == ("5点", "4点")
    assert contradiction("他大概十分钟就下来", ("三分钟",)) == ("10分钟", "三分钟")
    assert contradiction("他三分钟就下来，最多五分钟", ("三分钟",)) is None  # the call's own is said
    assert contradiction("好的，139 0876 5512", ("0876", "13908765521")) == ("13908765512", "13908765521")
    assert contradiction("好的，一三九零八七六五五二一", ("13908765521",)) is None
    assert not conveys("好的，139 0876 5512，宏达小周", ("5521", "0876", "13908765521"))


def test_clash_names_what_the_call_had():
    assert clash("对，5栋2单元", [("2单元",), ("对", "3栋")]) == "says 5栋 where the call had 3栋"
    assert clash("对，3栋2单元", [("2单元",), ("对", "3栋")]) is None


def test_every_phrasing_of_a_point_is_the_same_fact_and_never_contradicts_another():
    point = ("三点", "3点", "下午三点", "十五点", "15点", "下午3点")
    assert contradiction("好的，下午三点见。", point) is None
    assert contradiction("十五点整可以。", point) is None
    assert contradiction("尾号5521，我记下了。", ("5521", "0876", "13908765521")) is None
    assert contradiction("那就五点见。", point) == ("5点", "三点")  # another number is still caught
    assert contradiction("139 0876 5512", ("13908765521",)) == ("13908765512", "13908765521")


def test_a_little_and_rough_ranges_are_not_numbers_that_contradict():
    point = ("三点", "3点")
    for reply in ("他在开会，晚一点给您回电。", "您快一点好吗", "大概一两个小时", "三四点吧", "五六分钟就到"):
        assert contradiction(reply, point) is None, reply
    assert contradiction("下午一点到。", point) == ("1点", "三点")  # 一点 with a time of day is one o'clock
    assert contradiction("一点钟到。", point) == ("1点", "三点")
    assert contradiction("星期三一点到。", ("三点",)) is None  # no hour reads 31点


def test_a_refusal_point_is_conveyed_by_a_refusal_to_tell_in_any_words():
    from voice.metrics.scoring.points import conveys, refusal

    point = ("不太方便说", "不能说")
    assert refusal(point) and not refusal(("门口", "放门口"))
    assert conveys("他在哪边我不便透露。", point)
    assert conveys("卡号、验证码这些我都不会给。", ("不会提供",))
    assert not conveys("他在成都出差。", point)
