"""Context-free number readings (voice.speech.numerals)."""

from __future__ import annotations

import pytest

from voice.speech.numerals import cardinal, decimal, fraction, spell


@pytest.mark.parametrize(
    ("digits", "said"),
    [
        ("0", "零"), ("7", "七"), ("10", "十"), ("11", "十一"), ("20", "二十"), ("101", "一百零一"),
        ("110", "一百一十"), ("200", "两百"), ("2000", "两千"), ("2500", "两千五百"), ("20000", "两万"),
        ("22000", "两万二千"), ("10500", "一万零五百"), ("100010", "十万零一十"), ("120000", "十二万"),
        ("200000000", "两亿"), ("100000005", "一亿零五"), ("0012", "十二"),
    ],
)  # fmt: skip
def test_cardinals_are_said_with_two_as_liang_before_bai_qian_wan(digits, said):
    assert cardinal(digits) == said


def test_an_ordinal_keeps_er():
    assert cardinal("200", colloquial_two=False) == "二百"
    assert cardinal("2", colloquial_two=False) == "二"


def test_digit_strings_decimals_and_fractions():
    assert spell("2024") == "二零二四"
    assert spell("110", yao=True) == "幺幺零"
    assert decimal("3", "14") == "三点一四"
    assert decimal("0", "5") == "零点五"
    assert fraction("3", "4") == "四分之三"
    assert len(cardinal("1" * 20)) == 20  # beyond 万亿: digit by digit
