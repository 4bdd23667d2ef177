from voice.metrics.scoring.preset_rules import broken, preset_rules

SIGN = "这份合同必须本人签收，别放驿站，我明天上午在家。"
BABY = "宝宝在睡觉，快递放门口，别敲门也别按门铃。"


def names(preset: str) -> set[str]:
    return {r.name for r in preset_rules(preset)}


def test_the_rules_a_preset_sets_are_read_from_its_words():
    assert "sign in person" in names(SIGN)
    assert {"no knocking or ringing", "leave it at the door"} <= names(BABY)
    assert "not to be disturbed" in names("我在开会，工作上的事请留言。")
    assert "sign in person" not in names("快递都让小区保安代签。")  # signed by the guard: not in person
    assert "no knocking or ringing" not in names("外卖送到1502门口，敲门就行。")


def test_a_rule_broken_in_other_words_is_caught_and_named():
    rule, said = broken("那您先放快递柜吧，他回来自己取。", SIGN)
    assert rule.name == "sign in person" and said
    rule, _ = broken("您到了喊一声就行，他会出来。", BABY)
    assert rule.name == "no knocking or ringing"


def test_a_paraphrase_that_keeps_the_rule_is_not_punished():
    assert broken("放驿站恐怕不行，邻居代签也不可以，麻烦您明天再送。", SIGN) is None
    assert broken("门就别敲了，您放门口就行。", BABY) is None
    assert broken("放门口不合适，还是麻烦您明天送。", "快递放驿站，我不在家。") is None


def test_what_the_turns_reference_itself_proposes_is_not_held_against_the_turn():
    preset = "我急性肠胃炎去医院了，外卖放门卫就行。"
    assert broken("那您送上门吧。", preset) is not None
    assert broken("那您送上门吧。", preset, reference="取消不了的话，那您送上门就行。") is None


def test_a_place_the_preset_says_not_to_bring_it_to_is_a_rule_of_its_own():
    preset = "这单是给楼下302王阿姨点的，让骑手直接送302，别送1502。"
    assert "not to 1502" in names(preset)
    assert broken("您好，按订单地址送1502就行。", preset)[0].name == "not to 1502"
    assert broken("送302就行，1502那个地址您就不用管了。", preset) is None


def test_a_preset_that_has_it_brought_up_or_hands_the_work_over_is_broken_by_the_opposite():
    up = "我妈膝盖刚做完手术下不了楼，麻烦骑手一定送上楼。"
    assert "bring it up" in names(up)
    assert broken("敲不开就别折腾了，您放楼下单元门口吧。", up)[0].name == "bring it up"
    assert broken("麻烦您辛苦送上楼，多敲几下门。", up) is None
    work = "这几天请假，工作上的事全部找李芳，我都交接过了。"
    assert "work handed over" in names(work)
    assert broken("好的，我跟他说一声，让他今晚抽空发给您。", work)[0].name == "work handed over"
    assert broken("他今晚处理不了，您直接找李芳就行。", work) is None  # said under a negation


def test_a_sales_visit_accepted_or_the_owner_fetched_from_a_meeting_named_otherwise_breaks_the_preset():
    sales = "推销的、装修的一律说不需要，客气点挂掉就行。"
    assert broken("那行吧，周六上午您让设计师过来吧。", sales)[0].name == "turn sales away"
    assert broken("真的不需要，也不用安排上门，谢谢您。", sales) is None
    meeting = "今天下午开季度评审会，四点以后才出来，手机静音。"
    assert broken("您稍等，我这就去会议室叫他出来接一下。", meeting)[0].name == "not to be disturbed"


def test_the_owner_fetched_or_coming_in_any_words_breaks_a_busy_or_away_preset():
    sick = "我今天发烧请了病假，工作上的事找同事小王。"
    assert "not to be disturbed" in names(sick)
    rule, said = broken("您稍等，我这就去叫他起来接一下。", sick)
    assert rule.name == "not to be disturbed" and said
    assert broken("我让机主来接一下，您直接跟他说。", "我在开会，推销电话一律婉拒。") is not None
    away = "我这几天在外地，孩子的事找孩子爸爸。"
    rule, _ = broken("好的，机主这就过去接孩子。", away)
    assert rule.name == "away from here"
    assert broken("好的，我让孩子爸爸去接孩子。", away) is None  # someone else goes
    assert broken("他现在没法接电话，我转告他。", sick) is None


def test_a_price_said_on_the_phone_breaks_a_preset_that_keeps_it_for_the_meeting():
    preset = "周四下午可以见面，报价的事等见面再谈。"
    assert "price kept for the meeting" in names(preset)
    assert "price kept for the meeting" not in names("报价单已经发你邮箱了。")  # no meeting to keep it for
    rule, said = broken("大概跟去年的价差不多，可能再低个五个点。", preset)
    assert rule.name == "price kept for the meeting" and said
    assert broken("价格我这边不方便说，见面再详细谈。", preset) is None
