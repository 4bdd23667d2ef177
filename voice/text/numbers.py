"""Numbers as a Mandarin speaker says them, for the checklist judge (:mod:`voice.text.matching`).

Heard text writes a number in digits or in numerals, reads a code digit by digit or in groups, and says an
amount exactly (五万元) or roughly (三十来万, 一万出头, 十几万).  The judge needs three readings of it:

- :func:`arabic`: numerals as arabic digits (二十八 → 28, 三八六 → 386), so 4点 and 四点 are the same, and
  the three names of a weekday as one (星期三, 礼拜三 → 周三);
- :func:`read_out_numbers`: digit strings read out one digit at a time (codes, card and ID numbers);
- :func:`amounts`: sums of money, exact or approximate (a salary said in any words).
"""

from __future__ import annotations

import re
import unicodedata

from voice.text.script import to_simplified

_DIGITS = {"零": 0, "〇": 0, "一": 1, "幺": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}  # fmt: skip
_UNITS = {"十": 10, "百": 100, "千": 1000}
_NUMERAL = re.compile(f"[{''.join(_DIGITS)}{''.join(_UNITS)}万]+")
_DIGIT_RUN = re.compile(f"[0-9{''.join(_DIGITS)}]+")
_UNITS_BEFORE = frozenset("十百千万亿")
_UNITS_AFTER = frozenset("十百千万亿点块元角毛分秒号月年日天岁个位楼层栋单室次遍条张件台辆米斤克公里周倍%")
_TIME_MARKS = frozenset(":.")  # 10:30, 3.5: a time or an amount when there is a digit on either side
_JOINERS = re.compile(r"[\s\-,，、;；]+")  # between groups of a number read out: 三八二，九一六
# 星期三, 礼拜三 and 周三 name the same day (and 星期天, 礼拜日, 周日 the same Sunday)
_WEEKDAY = re.compile(r"(?:星期|礼拜)(?=[一二三四五六1-6])")
_SUNDAY = re.compile(r"(?:星期|礼拜|周)[日天]")
# A sum of money, exact or rough: a number (digits or numerals, 十几, 三十来) then 万/千/块/元 (or k, w), with
# a rough word after it (出头, 左右, 上下, 多) or none: 三十来万, 一万出头, 十几万, 8k, 五千块左右.
_NUMBER = r"(?:[0-9]+(?:\.[0-9]+)?|[零〇一二两三四五六七八九十百千几]+)"
_AMOUNT = re.compile(
    rf"{_NUMBER}[来多几余]?(?:万|千|块钱|块|元|[kKwW](?![a-zA-Z]))[来多几余]?(?:块钱|块|元)?(?:出头|左右|上下)?"
)


def _numeral_value(run: str) -> str:
    """A run of Chinese numerals as arabic: read digit by digit (三八六) or as a number (二十八, 三百零五)."""
    if not any(ch in _UNITS or ch == "万" for ch in run):
        return "".join(str(_DIGITS[ch]) for ch in run)
    total = section = number = 0
    for ch in run:
        if ch in _DIGITS:
            number = _DIGITS[ch]
        elif ch in _UNITS:
            section += (number or 1) * _UNITS[ch]
            number = 0
        else:  # 万
            total += (section + number) * 10_000
            section = number = 0
    return str(total + section + number)


def arabic(text: str) -> str:
    """``text`` in simplified script with its numerals as arabic digits, and a weekday by one name (周3)."""
    simplified = _WEEKDAY.sub("周", _SUNDAY.sub("周日", to_simplified(text)))
    return _NUMERAL.sub(lambda m: _numeral_value(m.group()), simplified)


def read_out_numbers(text: str) -> list[str]:
    """Digit strings read out one digit at a time (四八三九二七, 4839 27, 三八二，九一六): codes, card and ID
    numbers.

    Numbers said with units (二十八块, 五万元, 十点, 两个) or as times (10:30) are not read out: they are
    amounts and times.  Spaces and dashes between digits never break a run (an ASR may put them between
    slow digits); a comma or a pause mark between runs of two digits or more does not either (a code read
    in groups), but a lone digit is not joined (一下，一会儿).
    """
    folded = unicodedata.normalize("NFKC", to_simplified(text))
    runs: list[tuple[int, int]] = []
    for found in _DIGIT_RUN.finditer(folded):
        s, e = found.span()
        before, after = folded[s - 1 : s], folded[e : e + 1]
        if before in _UNITS_BEFORE or after in _UNITS_AFTER:
            continue
        if (before in _TIME_MARKS and folded[s - 2 : s - 1].isdigit()) or (
            after in _TIME_MARKS and folded[e + 1 : e + 2].isdigit()
        ):
            continue
        runs.append((s, e))
    numbers: list[str] = []
    last_end, last_len = -1, 0
    for s, e in runs:
        gap = folded[last_end:s] if last_end >= 0 else None
        spaced = gap is not None and all(ch.isspace() or ch == "-" for ch in gap)
        grouped = gap is not None and _JOINERS.fullmatch(gap) and last_len >= 2 and e - s >= 2
        digits = "".join(str(_DIGITS.get(ch, ch)) for ch in folded[s:e])
        if numbers and (spaced or grouped):
            numbers[-1] += digits
        else:
            numbers.append(digits)
        last_end, last_len = e, e - s
    return numbers


def amounts(text: str) -> list[tuple[int, str]]:
    """Every sum of money ``text`` says, exact or rough, as (where it starts in the folded text, the words):
    五万元, 三十来万, 一万出头, 十几万, 8k.  A salary is as often said roughly as exactly, and a rough
    figure gives it away as surely (他一个月大概挣一万出头 tells the caller what he earns)."""
    folded = unicodedata.normalize("NFKC", to_simplified(text))
    # a bare 千万 is "by all means" (千万别放驿站), not ten million, which is said 一千万
    return [(f.start(), f.group()) for f in _AMOUNT.finditer(folded) if f.group() != "千万"]
