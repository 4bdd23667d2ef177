"""Chinese text normalisation and CER."""

import pytest

from voice.speech.text import cer, cer_counts, normalize_zh, to_simplified


def test_to_simplified_converts_traditional_and_keeps_simplified():
    assert to_simplified("他說話，這個電腦") == "他说话，这个电脑"
    assert to_simplified("我想查询天气") == "我想查询天气"


def test_normalize_strips_punctuation_whitespace_and_folds_width_and_case():
    assert normalize_zh("你好，世界！ Hello\tＷｏｒｌｄ。") == "你好世界helloworld"
    assert normalize_zh("“價格”是１２３元？") == "价格是123元"
    assert normalize_zh("……  。") == ""


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
