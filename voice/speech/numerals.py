"""Numbers in Chinese characters, the way they are said: cardinals, digit strings, decimals, fractions.

These are the context-free readings :mod:`voice.speech.readings` chooses between by context.  They are
written here rather than taken from ``cn2an`` because the choices that matter on the phone are the
spoken ones ``cn2an`` does not make: 两 for a leading 2 before 百/千/万/亿 (两千五百, as people say it), and
幺 for 1 in a number one dials.  Both are a few lines on top of the usual four-digit-section reading.
"""

from __future__ import annotations

DIGITS = "零一二三四五六七八九"
_PLACES = ("", "十", "百", "千")
_SECTIONS = ("", "万", "亿", "万亿")


def _section(digits: str, *, colloquial_two: bool) -> str:
    """A four-digit section (``0205`` → 二百零五): zeros between digits are one 零, trailing zeros none."""
    out: list[str] = []
    zero = False
    for i, ch in enumerate(digits):
        d = int(ch)
        if d == 0:
            zero = bool(out)
            continue
        if zero:
            out.append("零")
            zero = False
        place = len(digits) - 1 - i
        said = "两" if d == 2 and colloquial_two and not out and place >= 2 else DIGITS[d]
        out.append(said + _PLACES[place])
    return "".join(out)


def cardinal(digits: str, *, colloquial_two: bool = True) -> str:
    """An integer as a number: ``15`` → 十五, ``105`` → 一百零五, ``2500`` → 两千五百, ``10500`` → 一万零五百.

    ``colloquial_two`` says 两 for a leading 2 before 百, 千, 万 or 亿 (两百, 两万), as callers do; an
    ordinal (第二百) passes False.  Leading zeros are ignored; beyond 万亿 the digits are read one by one.
    """
    digits = digits.lstrip("0")
    if not digits:
        return "零"
    if len(digits) > 16:
        return spell(digits)
    sections: list[str] = []
    while digits:
        sections.insert(0, digits[-4:])
        digits = digits[:-4]
    out: list[str] = []
    pending_zero = False
    for k, sec in enumerate(sections):
        unit = _SECTIONS[len(sections) - 1 - k]
        if int(sec) == 0:
            pending_zero = bool(out)
            continue
        if out and (pending_zero or sec[0] == "0"):
            out.append("零")
        pending_zero = False
        two = colloquial_two and (not out) and (len(sec.lstrip("0")) >= 3 or bool(unit))
        said = _section(sec.lstrip("0") if not out else sec, colloquial_two=two)
        if two and said.startswith("二") and unit and len(sec.lstrip("0")) == 1:
            said = "两"  # 2万, 2亿 → 两万, 两亿
        out.append(said + unit)
    text = "".join(out)
    return text[1:] if text.startswith("一十") else text


def spell(digits: str, *, yao: bool = False) -> str:
    """Digit by digit (``2024`` → 二零二四); ``yao`` says 幺 for 1, as in a number one dials (幺幺零)."""
    table = DIGITS.replace("一", "幺") if yao else DIGITS
    return "".join(table[int(d)] for d in digits if d.isdigit())


def decimal(integer: str, fraction: str, *, colloquial_two: bool = True) -> str:
    """``3`` and ``14`` → 三点一四: the integer part as a number, the fraction digit by digit."""
    whole = cardinal(integer, colloquial_two=colloquial_two) if integer else "零"
    return f"{whole}点{spell(fraction)}" if fraction else whole


def fraction(numerator: str, denominator: str) -> str:
    """``3/4`` → 四分之三: the denominator first, as Chinese says a fraction."""
    return f"{cardinal(denominator, colloquial_two=False)}分之{cardinal(numerator, colloquial_two=False)}"
