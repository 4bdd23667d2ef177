import pytest

from voice.metrics.scoring import matching as m


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


def test_numbers_read_out_digit_by_digit_are_found_but_amounts_and_times_are_not():
    assert m.read_out_numbers("验证码是四八三九二七，卡号6222 0212 3456") == ["483927", "622202123456"]
    assert m.read_out_numbers("驗證碼：幺二三四") == ["1234"]
    assert m.read_out_numbers("4-8-3-9") == ["4839"]
    found = m.read_out_numbers("二十八块，五万元，尾号三八六，10:30")
    assert max(map(len, found)) == 3  # 386; amounts, times and punctuation split the rest


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
