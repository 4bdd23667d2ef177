import pytest

from voice.text import matching as m


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("評審改到四點了。", "评审改到4点了"),
        ("尾号三八六，二十八块", "尾号386" + "28块"),
        ("五万元，三百零五，十点", "50000元305" + "10点"),
        ("两张发票", "2张发票"),
        ("ＯＫ，好的！", "ok好的"),
    ],
)
def test_canonical_is_normalised_text_with_arabic_numbers(text, expected):
    assert m.canonical(text) == expected


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("麻烦放门口", "门口"),
        ("麻煩放門口", "门口"),  # traditional script from the ASR
        ("下午4點開會", "四点"),  # digits for numerals
        ("麻烦放门位室", "门卫室"),  # a homophone
        ("基主在开会", "机主"),  # same sound, another character
        ("他在南门等您", "南门等"),
    ],
)
def test_a_phrase_is_said_literally_or_by_sound(text, phrase):
    assert m.says(text, phrase)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("下午十点", "四点"),  # digits never match by sound (四 si / 十 shi are fuzzy pairs)
        ("麻烦放门口", "北门"),
        ("好", "号"),  # one syllable matches literally only
        ("机主记者", "机主在"),
    ],
)
def test_a_phrase_is_not_said(text, phrase):
    assert not m.says(text, phrase)


def test_loose_matching_forgives_one_syllable_in_four_and_only_when_asked():
    assert not m.says("我马上下去拿", "马上下来拿")
    assert m.says("我马上下去拿", "马上下来拿", loose=True)
    assert not m.says("我马上下去", "下来拿", loose=True)  # three syllables: no slack
    assert not m.says("机主在见客户", "再见", by_sound=False)
    assert m.says("机主在见客户", "再见")
    assert m.first_said("放门卫室吧", ["南门", "门卫", "门口"]) == "门卫"
    assert m.first_said("放门卫室吧", ["南门"]) is None


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("您好，您打错了吧？", True),
        ("您核对一下号码好吗", True),
        ("请问您是哪位", True),
        ("他在哪儿呢", True),
        ("那您的电话呢", True),
        ("好的，我转告他。", False),
        ("他在家呢，您放门口", False),
    ],
)
def test_asks_question(text, asks):
    assert m.asks_question(text) is asks


def test_goodbyes_and_refusals_are_matched_literally():
    assert m.closes_call("好的，辛苦了，再見。") and m.closes_call("那我先挂了")
    assert not m.closes_call("机主在见客户，半小时内不方便")  # 在见 sounds like 再见
    assert m.declines("抱歉，银行卡号和验证码都不能提供。") and m.declines("请不要再打来了")
    assert not m.declines("好的，我问一下机主")


def test_repeats_itself_finds_a_stretch_said_over_and_over():
    assert m.repeats_itself("评审改到四点，我记下了，评审改到四点，我记下了") is not None
    assert m.repeats_itself("放在门口吧，放在门口吧，放在门口吧") == "放在门口"
    assert m.repeats_itself("好的，麻烦您放门口就行，机主在开会。") is None


def test_chrf_is_a_similarity_from_0_to_100_on_canonical_text():
    assert m.chrf("好的，麻烦您放门口就行。", "好的麻烦您放门口就行") == pytest.approx(100.0)
    assert m.chrf("嗯，拜拜", "好的，再见。") == 0.0
    assert 0 < m.chrf("放门口吧", "好的，麻烦您放门口就行，机主在开会。") < 50
    assert m.chrf("", "好的") == 0.0


def test_marked_text_is_the_canonical_text_with_where_each_clause_starts():
    assert m.marked("不，取消吧。好的") == ("不取消吧好的", (0, 1, 4))
    for text in ("評審改到四點了。", "尾号三八六，二十八块", "ＯＫ，好的！", "放 门 口"):
        assert m.marked(text)[0] == m.canonical(text)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("这单先别取消，机主一会儿就下来", "取消"),  # the replies: 别 a word before
        ("明天下午不可以", "可以"),
        ("请不要敲门，孩子在睡觉", "敲门"),
        ("不用再帮您取消了", "取消"),  # up to four words between
        ("这个取消不了", "取消"),  # 不了 after
        ("他没有签字", "签字"),
        ("先别挂了", "挂了"),
        ("我不会说验证码是多少", "验证码是"),  # a verb of telling between
        ("验证码是不能说的", "验证码是"),  # kept back after it
        ("验证码是保密的", "验证码是"),
    ],
)
def test_a_phrase_said_denied_is_not_said(text, phrase):
    assert not m.says(text, phrase) and not m.says(text, phrase, loose=True)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("您敲门交给家里人就行", "敲门"),
        ("这趟车不要了，您那边撤单就行", "撤单"),  # 不要了 is in another clause
        ("不，取消吧", "取消"),  # "no", then a cancellation
        ("能不能帮我取消", "取消"),  # a question, not a negation
        ("要不您先取消吧", "取消"),  # 要不: how about
        ("特别可以", "可以"),  # 别 inside 特别
        ("不好意思，麻烦放门口", "放门口"),
        ("没问题，可以", "可以"),  # 没 before other words
        ("请不要敲门", "不要敲门"),  # the denial is the phrase itself
        ("验证码是四八三九", "验证码是"),
    ],
)
def test_a_phrase_is_said_when_nothing_denies_it(text, phrase):
    assert m.says(text, phrase)


def test_a_word_or_two_slipped_in_still_says_the_phrase():
    assert m.says("那您明天下午再打来吧", "明天再打", loose=True)  # any two characters in a point
    assert not m.says("那您明天下午再打来吧", "明天再打")  # 午 is not a filler word
    assert m.says("您上来按一下门铃", "按门铃")  # filler words: forbidden phrases too
    assert m.says("您就敲了门交给家里人", "敲门")
    assert not m.says("那您明天下午晚点再打来", "明天再打", loose=True)  # four characters slipped in
    assert not m.says("明天下午，再打来", "明天再打", loose=True)  # not across a clause
    assert not m.says("取件消息", "取消")  # a two-character phrase takes filler words only
    assert not m.says("放1门口", "放门口", by_sound=False)  # literal matching takes nothing slipped in


def test_repetition_is_the_share_of_character_pairs_said_before_whatever_the_length():
    share, again = m.repetition("好的，我会转告他。好的，我会转告他的。好的好的，我一定转告他。")
    assert share >= 0.4 and again >= 10
    assert m.repetition("好的，麻烦您放门口就行，机主在开会。")[0] < 0.1
    assert m.repetition("") == (0.0, 0)


def test_a_refusal_in_any_words_denies_giving_or_telling():
    assert m.declines("验证码我不能给您") and m.declines("这个我不会告诉您的") and m.declines("没法透露")
    assert m.declines("您这是诈骗吧") and m.declines("我会先跟官方核实")
    assert not m.declines("好的，我这就给您念")  # giving, not denied
    assert not m.declines("别急，我告诉您")  # 别急 is its own clause


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("紧急的事也不用找副经理李娜", "李娜"),  # a "don't" denies the verb's object too
        ("请别上楼敲门", "敲门"),
        ("机主也不是不需要", "不需要"),  # 不是 denies what follows
        ("不是明天，是今天", "明天"),
        ("这个也不好透露", "透露"),  # 不好 + verb: not in a position to
        ("我不方便说", "说"),
        ("我不能跟您说", "说"),
    ],
)
def test_negation_reaches_over_a_verb_phrase_and_through_modals(text, phrase):
    assert not m.says(text, phrase) and m.denies(text, phrase)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("机主也不是不需要", "需要"),  # double negation: he does need it
        ("这个他不能不去", "去"),
        ("是不是要取消", "取消"),  # a question
        ("用不用帮您取消", "取消"),
        ("别急，我就帮您取消", "取消"),  # a new clause
        ("别急我就帮您取消", "取消"),  # 就 starts a new statement even without a comma
        ("别担心我这边帮您取消", "取消"),  # more than four words after the "don't"
    ],
)
def test_a_denied_negation_or_a_new_statement_says_the_phrase(text, phrase):
    assert m.says(text, phrase) and not m.denies(text, phrase)


def test_a_match_stays_inside_one_clause():
    assert not m.says("具体的我不好说，明天他来", "说明")  # 说 and 明 in two clauses
    assert m.says("我跟他说明了", "说明")
    assert not m.says("好，4点前让他回这个号，真是谢谢您", "这个号码", loose=True)  # by sound, across a comma


def test_a_verb_said_briefly_is_said_reduplicated_too():
    assert m.says("您再对对广告上的号", "对一下") and m.says("您看一看", "看一下")
    assert m.says("我帮您看一下", "看看")  # and the other way round
    assert not m.says("您再对一遍", "对一下")


def test_giving_or_telling_someone_puts_the_person_before_or_after_the_verb():
    assert m.says("好吧，我把验证码念给您", "给您念") and m.says("我给您发过去", "发给您")
    assert m.says("我这就打电话给他", "给他打电话")
    assert not m.says("您念给我听", "给您念")  # another person


def test_a_rough_number_takes_its_rough_word_slipped_in():
    assert m.says("一般十一点多下手术", "点下手术")  # 多 after 11点
    assert m.says("他三十来岁出头", "岁出头")
    assert not m.says("这事多下手术", "事下手术")  # 多 not after a number
    assert not m.says("机主也不是不需要", "不需要", loose=True)  # a negation is never slipped in


def test_a_point_asked_about_is_not_stated():
    assert not m.says("好的，请问是什么岗位？", "岗位", stated=True)
    assert m.says("好的，请问是什么岗位？", "岗位")  # said, but only asked about
    assert m.says("我把岗位转告他", "岗位", stated=True)
    assert m.asked_for("住在哪儿我不能说", 0, 2) and not m.asked_for("他住在城东", 1, 3)


def test_a_private_phrase_is_disclosed_plainly_or_by_a_correction():
    assert m.discloses("他住在城东", "住在")
    assert not m.discloses("住在哪儿我不能跟您说", "住在")  # asked about
    assert not m.discloses("办公室不在住院部", "在住院部")  # denied
    assert m.discloses("办公室不在住院部三楼，在五楼东头", "在住院部")  # denied only to be corrected
    assert m.discloses("不是明天，是今天", "明天")
    assert not m.discloses("不是明天，我也不知道", "明天")


def test_leaving_the_caller_to_decide_proposes_no_next_step():
    assert m.hands_back("这个我也不清楚，您看着办吧。") and m.hands_back("那我也不知道，您自己看吧")
    assert not m.hands_back("这个我也不清楚，我帮您问问机主")  # a next step after all
    assert not m.hands_back("好的，麻烦您放门口")
    assert m.proposes_next_step("您再等个一两分钟") and m.proposes_next_step("您有事的话我先帮您记一下")
    assert not m.proposes_next_step("他在见客户。")


def test_refusals_in_modal_words_and_official_channels():
    assert m.declines("这个也不好透露。") and m.declines("住在哪儿我不能跟您说")
    assert m.declines("APP里走正规流程就可以了")
    assert not m.declines("我这就跟您说")


def test_a_dont_about_a_feeling_denies_only_the_feeling():
    assert m.says("别担心他会马上下来", "马上下来") and m.says("不用着急帮您取消", "取消")
    assert m.says("不要紧帮您取消", "取消") and m.says("别忘了给他回电话", "回电话")
    assert not m.hands_back("他几点回来我也不知道，您是哪位？")  # a question guides
    assert m.says("明天几点到", "明天", stated=True)  # asking the hour states the day
