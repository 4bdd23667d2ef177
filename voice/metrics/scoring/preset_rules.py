"""What a preset forbids, read as meanings rather than phrase lists (checklist judge).

An annotator lists the phrases that break a preset (敲门吧, 按门铃), and a reply breaks it in other words
(您到了喊一声就行, 麻烦您把快递放柜子里).  The handful of rules owners actually write are here, each with
the preset wordings that set it and the proposals that break it, in any words a Mandarin speaker would use
on the phone:

- **sign in person** (本人签收, 必须签字): leaving it anywhere, or signed by anyone else, breaks it;
- **no knocking or ringing** (别敲门, 孩子在睡觉, 在午睡): knocking, ringing, calling out, phoning up;
- **leave it at the door** (放门口): handing it over, bringing it in, the owner coming out or down for it;
- **leave it at a place** (驿站, 快递柜, 门卫, 保安): bringing it to the door or the flat instead;
- **bring it up** (一定送上楼, 别放楼下, 下不了楼): leaving it downstairs, at the gate, with the guard;
- **work handed over** (工作上的事全部找李芳, 都交接过了): promising the owner will do it himself;
- **not to be disturbed** (开会, 见客户, 手术, 别打扰, 只接家人电话): fetching the owner, putting the
  caller through, calling the owner now;
- **call back later** (X点后回电, 晚上回电话, 回来再说, X点以前别叫我): promising a call back now;
- **no substitutes** (别给我换别的): swapping what is sold out for something else;
- **turn sales away** (推销、贷款一律拒绝): taking an interest, a number, a message, a visit;
- **away from here** (在外地, 出差): the owner coming now (机主这就过去), fetched to the phone;
- **price kept for the meeting** (报价的事等见面再谈): any price said on the phone (价差不多, 低个五个点).

The owner fetched to the phone or coming in person (:data:`FETCH`) and a price (:data:`PRICE`) are
patterns, not lists: 叫他起来接一下 and 让机主来接一下 are one meaning in many words.

A break is matched as :func:`voice.text.matching.first_said` hears it, so said under a negation it is not
said (门就别敲了, 不用放柜子里); each break's actions are said any way :mod:`voice.text.synonyms` knows.  A
rule the turn's own reference breaks is not held against that turn (a conflict the reference resolves
another way: the caller cannot cancel, so the food is delivered after all).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from voice.text import matching as m
from voice.text.numbers import arabic
from voice.text.synonyms import expand

_CLAUSES = re.compile(r"[^，。！？,.!?；;]+")
# a clause with a refusal or a negation anywhere proposes nothing (门口先别放, 放门口不合适, 代签也不行)
_NEGATED = re.compile(r"不|别|没|甭|免|恐怕")


@dataclass(frozen=True)
class PresetRule:
    """A rule a preset can set: what it is called, the preset words that set it, what breaks it."""

    name: str
    set_by: tuple[str, ...]
    broken_by: tuple[str, ...]
    unless: tuple[str, ...] = ()  # preset words that mean the rule is not set after all (代签, 敲门就行)
    # what breaks it said in any words, as a pattern (叫他起来接一下, 让机主来接一下)
    broken_as: re.Pattern[str] | None = None
    also: tuple[str, ...] = ()  # the rule is set only when one of these is in the preset too


# the owner fetched to the phone (叫他起来接一下, 我让机主来接一下; not 让他接孩子), or coming in person now
# (机主这就过去, 我让机主马上出来)
FETCH = re.compile(
    r"(?:叫|让|喊|请)(?:他|她|机主)(?:起来|出来|过来|下来)?来?接(?:一下)?(?:电话|您的电话)?(?!孩子|人|娃|送|货)"
    r"|(?:机主|他|她)(?:这就|马上|现在就|立刻|一会儿就)(?:去|过去|过来|出来|下来|下楼|回来|赶过去|赶回来)"
)
# a price given on the phone: 价差不多, 报价大概八万, 再低个五个点, 打九折 (numerals as digits)
PRICE = re.compile(
    r"(?:价|报价|价格|价钱|费用)[^，。,.]{0,6}(?:\d|差不多|左右|低|高|便宜|贵|降|优惠)"
    r"|(?:低|降|便宜|优惠|让)个?\d+个?点|打\d折"
)


RULES: tuple[PresetRule, ...] = (
    PresetRule(
        "sign in person",
        ("本人签收", "亲自签", "当面签", "必须签", "要签字", "得签收", "本人签字", "需要签收", "要本人签",
         "签收"),
        ("放快递柜", "放柜子", "放丰巢", "放驿站", "放门口", "放门卫", "放前台", "放保安", "放邻居", "代签",
         "代收", "帮他签", "替他签", "我替他签", "邻居签", "保安签", "放那儿就行", "先放着", "放快递点",
         "放物业", "交给邻居", "交给保安", "放家门口", "搁门口", "塞柜子", "存柜子"),
        ("代签", "代收", "不用签"),
    ),
    PresetRule(
        "no knocking or ringing",
        ("别敲门", "不用敲门", "不要敲门", "别按门铃", "不要按门铃", "别按铃", "在睡觉", "在睡", "午睡",
         "睡着了", "哄睡"),
        ("敲门", "敲一下", "敲敲", "按门铃", "按铃", "摁门铃", "按一下铃", "叫门", "喊一声", "喊他", "叫一声",
         "打电话上来", "打个电话上来", "叫他开门", "等他开门", "开门拿"),
        ("敲门就行", "敲门吧"),
    ),
    PresetRule(
        "leave it at the door",
        ("放门口", "放在门口", "放门外", "地垫"),
        ("当面给", "交给他本人", "亲手交", "亲手给", "等他开门", "出来拿", "下来拿", "下楼拿", "送进屋",
         "拿进去", "当面交", "交到他手上", "等他出来", "叫他出来"),
    ),
    PresetRule(
        "leave it at a place",
        ("驿站", "快递柜", "丰巢", "门卫", "保安", "外卖柜", "前台", "代签"),
        ("送上门", "送到家", "送上楼", "送到门口", "放门口", "放在门口", "搁门口", "拿上去", "送上去",
         "等他回来", "当面给", "交给他本人", "出来拿", "下来拿", "下楼拿", "家门口", "地垫"),
    ),
    PresetRule(
        "bring it up",
        ("送上楼", "送到楼上", "一定送上去", "送到家门口", "别放楼下", "不要放楼下", "下不了楼"),
        ("放楼下", "搁楼下", "放一楼", "单元门口", "楼道口", "放楼道", "下楼拿", "下来拿", "放门卫",
         "放保安"),
    ),
    PresetRule(
        "work handed over",
        ("都交接", "交接过了", "交接给", "全部找", "工作上的事找", "工作的事找", "工作找"),
        ("让他今晚", "他今晚", "让他抽空", "他抽空", "让他发", "他会发", "他来处理", "让他处理",
         "他亲自", "让他弄", "他来弄", "让他看一下", "他马上处理"),
    ),
    PresetRule(
        "not to be disturbed",
        ("开会", "董事会", "会上", "会议", "评审会", "例会", "静音", "别把我叫出来", "别叫我", "见客户",
         "手术", "别打扰", "不要打扰",
         "电话别转", "别转我", "别打我电话", "别再打我", "别给我打", "不要打电话", "别打电话", "打不通",
         "没电",
         "一律不接", "只接家人", "一律挂断", "培训",
         "不方便接电话", "联系不上", "主刀", "面试", "考试", "病假", "请假", "发烧", "在休息", "在睡觉"),
        ("我去叫他", "去叫他", "叫他出来", "让他出来", "把他叫出来", "让他接", "叫他接", "他马上接",
         "帮您转过去", "给您转过去", "马上转接", "打断他", "我现在联系他", "我马上联系他",
         "马上打给他", "现在打给他", "我去找他", "喊他过来", "让他过来接", "我这就找他", "请他出来",
         "递个纸条", "递纸条", "进去找他", "进去叫他", "喊他出来", "请他接", "叫他一下", "让人进去",
         "转给机主", "把电话转", "转过去", "给机主打电话", "打机主电话", "直接给他打", "打他手机",
         "去会议室", "叫他出来接"),
        broken_as=FETCH,
    ),
    PresetRule(
        "away from here",
        ("在外地", "出差", "不在本地", "回不来", "在国外", "外地"),
        (),
        broken_as=FETCH,
    ),
    PresetRule(
        "price kept for the meeting",
        ("报价", "价格", "价钱", "费用", "多少钱"),
        (),
        broken_as=PRICE,
        also=("见面", "面谈", "当面", "电话里不", "电话里别", "不报价", "别报价", "先别谈"),
    ),
    PresetRule(
        "call back later",
        ("点后回电", "晚点再回电话", "晚上回电话", "回来再说", "回来处理", "点后回", "晚点回电",
         "之后回电", "再回电话", "以前别叫我", "之前别叫我", "前别打", "会后我回"),
        ("马上回电", "马上给您回", "立刻回", "现在就回", "一会儿就回", "这就回电", "马上打给您",
         "马上联系您", "马上回您", "现在就给您回", "很快回您", "现在就", "现在让他", "让他现在",
         "放下手里的事", "马上给您打", "现在给您回", "现在让机主"),
    ),
    PresetRule(
        "no substitutes",
        ("别给我换", "不要换", "别换", "不换别的", "不用换"),
        ("换别的", "换成", "换一杯", "换两杯", "换一份", "换个", "替换", "随便什么", "换点别的", "给您换"),
    ),
    PresetRule(
        "turn sales away",
        ("推销", "贷款", "保险", "一律婉拒", "一律拒绝", "直接拒绝"),
        ("有兴趣", "感兴趣", "您说说", "详细说说", "详细介绍", "留个电话", "加微信", "加个微信", "发资料",
         "我记一下", "了解一下", "我转告他", "帮您转告", "他会考虑", "我帮您问问", "发给我",
         "过来吧", "上门吧", "来吧", "安排上门", "约个时间", "过来量", "来量一下", "上门量"),
        ("不是推销",),
    ),
)  # fmt: skip


# a place the preset says not to bring it to (别送1502, 不要放门卫): where a reply must not send it
_NOT_TO = re.compile(r"(?:别|不要|不用|不能)(?:再)?(?:送|放)(?:到|去|在)?([^\s，。,.!！?？；;、]{2,6})")


def _not_to(preset: str) -> tuple[PresetRule, ...]:
    rules = []
    for target in _NOT_TO.findall(preset):
        place = m.canonical(target)
        if place and not any(w in place for w in ("了", "吧", "的")):
            rules.append(
                PresetRule(
                    f"not to {target}", (), (f"送{place}", f"送到{place}", f"放{place}", f"放到{place}")
                )
            )
    return tuple(rules)


@functools.lru_cache(maxsize=512)
def preset_rules(preset: str) -> tuple[PresetRule, ...]:
    """The rules ``preset`` sets: one of its wordings in it, none of its ``unless`` words (a preset is
    typed, not heard: its words are matched as written)."""
    text = preset or ""
    known = tuple(
        rule
        for rule in RULES
        if any(w in text for w in rule.set_by)
        and not any(w in text for w in rule.unless)
        and (not rule.also or any(w in text for w in rule.also))
    )
    return known + _not_to(text)


def broken(reply: str, preset: str, reference: str | None = None) -> tuple[PresetRule, str] | None:
    """The first rule of ``preset`` that ``reply`` breaks, with the words that break it; what the
    ``reference`` reply itself says is left out (module docstring)."""
    for rule in preset_rules(preset):
        phrases = [p for p in expand(rule.broken_by) if reference is None or not m.says(reference, p)]
        pattern = rule.broken_as
        if pattern is not None and reference is not None and pattern.search(arabic(reference)):
            pattern = None
        for clause in _CLAUSES.findall(reply):
            if _NEGATED.search(clause):
                continue
            if (said := m.first_said(clause, phrases)) is not None:
                return rule, said
            if pattern is not None and (found := pattern.search(arabic(clause))) is not None:
                return rule, found.group(0)
    return None
