"""Chinese text normalisation and CER."""

import pytest

from voice.speech.text import cer, cer_counts, normalize_zh


def test_normalize_strips_punctuation_whitespace_and_folds_width_and_case():
    assert normalize_zh("你好，世界！ Hello\tＷｏｒｌｄ。") == "你好世界helloworld"
    assert normalize_zh("“價格”是１２３元？") == "价格是一百二十三元"
    assert normalize_zh("……  。") == ""


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("晚上9点", "晚上九点"),
        ("10点", "十点"),
        ("第20个", "第二十个"),
        ("105", "一百零五"),
        ("110元", "一百一十元"),
        ("打110", "打一一零"),  # a number one dials: digit by digit (幺 counts as 一)
        ("8:45", "八点四十五"),
        ("2,500", "二千五百"),
        ("¥18", "十八块"),
        ("50%", "百分之五十"),
        ("1500元", "一千五百元"),
        ("1005", "一千零五"),
        ("0", "零"),
        ("2024年", "二零二四年"),  # years, codes and phone numbers digit by digit
        ("验证码382916", "验证码三八二九一六"),
        ("0571", "零五七一"),
        ("两点", "二点"),  # 两 and 二 are the same number
    ],
)
def test_numbers_are_normalised_to_how_they_are_said(written, said):
    assert normalize_zh(written) == said


def test_an_asr_writing_digits_for_spoken_numbers_is_not_charged():
    assert cer("晚上九点后回家，下午两点开会", "晚上9点后回家，下午2点开会") == 0.0
    assert cer("上午十点复诊", "上午10点复诊") == 0.0
    assert cer("八点四十五到，电话幺三八", "8:45到，电话138") == 0.0


def test_digits_heard_right_are_not_charged_again_when_the_words_before_them_are_misheard():
    # 取件码 makes 3021 a code (三零二一); 曲劫马士 would make it a number: only the four words are wrong
    assert cer_counts("取件码是3021", "曲劫马士3021") == (4, 8)
    assert cer_counts("验证码382916", "验证马382916") == (1, 9)
    assert cer_counts("等了120分钟", "等了120分钟") == (0, 8)  # 等了一百二十分钟


@pytest.mark.parametrize(
    ("ref", "hyp", "expected"),
    [
        ("今天天气很好", "今天天气很好", 0.0),
        ("今天天气很好", "今天天汽很好", 1 / 6),  # substitution
        ("今天天气很好", "今天天气好", 1 / 6),  # deletion
        ("今天天气很好", "今天的天气很好", 1 / 6),  # insertion
        ("今天天气很好。", "今天天氣很好", 0.0),  # punctuation and script never count
        ("好的", "好的好的好的", 2.0),  # insertions can push CER above 1
    ],
)
def test_cer(ref, hyp, expected):
    assert cer(ref, hyp) == pytest.approx(expected)


def test_cer_of_an_empty_reference_is_zero_or_one():
    assert cer("", "") == 0.0
    assert cer("。。。", "") == 0.0
    assert cer("……", "嗯嗯") == 1.0


def test_cer_counts_sum_to_a_corpus_rate_weighted_by_length():
    pairs = [("你好", "你号"), ("请帮我订一张火车票", "请帮我订一张火车票")]
    counts = [cer_counts(r, h) for r, h in pairs]
    assert counts == [(1, 2), (0, 9)]
    errors, length = map(sum, zip(*counts, strict=True))
    assert errors / length == pytest.approx(1 / 11)


def test_a_looped_phrase_keeps_one_copy_and_short_doublings_stay():
    from voice.speech.text import collapse_repeats

    assert collapse_repeats("行你等着吧行你等着吧行你等着吧") == "行你等着吧"
    assert collapse_repeats("美食跨来美食跨来，好") == "美食跨来，好"
    assert collapse_repeats("好的好的，拜拜拜拜") == "好的好的，拜拜拜拜"
    assert collapse_repeats("喂，你好，美团外卖") == "喂，你好，美团外卖"
    assert collapse_repeats("很挂了啊。很挂了啊。很挂了啊。很挂") == "很挂了啊。"  # a loop cut mid-copy
    assert collapse_repeats("好的好的，再见再见再") == "好的好的，再见再见再"  # no loop: nothing cut
    assert collapse_repeats("行你等着吧行你等着吧，行你") == "行你等着吧，行你"  # not at the loop's end
