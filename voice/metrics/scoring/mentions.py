"""What a reply names that the call did not (checklist judge, :mod:`voice.metrics.scoring.grounded`).

A reply that mishears or makes things up names something the call never said: a colour other than the
caller's (黑色的车 for 白色的), a plate or a code with its characters in another order (27K for K27), a
person nobody mentioned (张姐, where the work went to 李芳), a matter nobody raised (车费, 提额, when the
driver found a lost bag or the bank reported a charge).  Read from the text alone; each helper returns
what it found, for the reason, or None.
"""

from __future__ import annotations

import re

from voice.text import matching as m

__all__ = ["code_clash", "colour_clash", "new_person", "new_topic"]

COLOURS: tuple[str, ...] = ("白", "黑", "红", "蓝", "银", "灰", "绿", "黄", "金", "棕", "紫", "粉", "橙")
_COLOUR = re.compile(rf"([{''.join(COLOURS)}])(?:色|的车|颜色)")
_CODE = re.compile(
    r"[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*\d[A-Za-z0-9]*|[A-Za-z0-9]*\d[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*"
)
# the commonest surnames: a person is 张姐, 王师傅, 老刘, 小陈 (大姐, 小哥 are no one's name)
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
    "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_PERSON = re.compile(
    rf"(?:老|小)([{SURNAMES}])|(?<!谢)([{SURNAMES}])(?:姐|哥|总|经理|老师|师傅|阿姨|叔叔|主任|医生)"
)
# matters a call is about: one the reply answers that nobody raised is the caller's turn read otherwise
TOPICS: tuple[str, ...] = (
    "车费", "车钱", "打车费", "提额", "额度", "退款", "退货", "发票", "报销", "积分", "账单", "话费", "欠费",
    "保修", "投诉", "评价", "好评", "差评", "优惠券", "赔偿", "押金", "违章", "罚款", "快递费", "运费",
)  # fmt: skip


def colour_clash(text: str, facts: str) -> str | None:
    """A colour ``text`` says where ``facts`` (the caller's turn, the reference) said another and never
    this one."""
    said = {c for (c,) in _COLOUR.findall(facts)} | {c for c in COLOURS if f"{c}色" in facts}
    for colour in _COLOUR.findall(text):
        if said and colour not in said:
            return f"{colour}色 where the call said {'/'.join(sorted(said))}色"
    return None


def code_clash(text: str, facts: str) -> str | None:
    """A plate or a code of letters and digits in ``text`` that ``facts`` says with the same characters in
    another order (27K for K27): misheard."""
    theirs = {c.upper() for c in _CODE.findall(facts)}
    for code in _CODE.findall(text):
        mine = code.upper()
        if mine in theirs:
            continue
        if any(sorted(mine) == sorted(t) for t in theirs):
            return f"{code} where the call said {next(t for t in theirs if sorted(t) == sorted(mine))}"
    return None


def new_person(text: str, known: str) -> str | None:
    """A person ``text`` names (张姐, 老刘, 王师傅) whose surname ``known`` (the preset and the call up to
    the reference) never says."""
    for found in _PERSON.finditer(text):
        surname = found.group(1) or found.group(2)
        if surname not in known and m.discloses(text, found.group(0)):
            return found.group(0)
    return None


def new_topic(text: str, known: str) -> str | None:
    """A matter ``text`` takes up (车费, 提额) that ``known`` never raised."""
    return next((t for t in TOPICS if t in text and t not in known and m.discloses(text, t)), None)
