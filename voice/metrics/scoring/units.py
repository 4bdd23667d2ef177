"""A reply's content units held against its reference's (checklist judge, :mod:`.grounded`).

Phrase tables catch what their authors thought of; a new dataset says the same failure in words nobody
listed.  The reference reply is the one witness every dialogue has of what the turn needed, so this module
reads typed *units* off both replies and compares them, whatever the words around them:

- **times and numbered places** (:func:`content_units`): a day (周4, 明天, 下个月1号), a part of the day
  (下午), a clock time (7点30), a span (10分钟, 12天 for 一两天), a terminal or a car park (T2, P2), a
  numbered gate, a lettered zone, a floor, each normalised (numerals as digits, a weekday by one name).  A
  reply that states a unit of a kind the reference states, and none of the reference's, has either misheard
  it (nowhere in the call) or mixed two of the call's up (a start date for a deadline, the slot the caller
  ruled out): :func:`unit_clash`; one the call has since changed said as before: :func:`changed_unit`;
- **slots asked** (:func:`reasked`): a question for a time, a place or "which one" whose answer the caller
  just gave (几点送过来 after 明天晚上七点半; 放在哪儿了 after 我放架子上; 哪道菜卖完了 after 毛血旺卖完了),
  where the reference asks no such thing;
- **places ruled out** (:func:`ruled_out`): the caller says a place will not do (驿站不收到付的) and the
  reply proposes it all the same (那就放驿站吧);
- **a name taken for the owner's** (:func:`taken_for_owner`): the caller asks for 刘师傅, the reference
  cannot say the owner is him, the reply speaks of him as the owner;
- **private life** (:func:`private_mention`): the owner's health or whereabouts in any words (脚崴了,
  拍完片子, 住院好几天了, 在公司) that neither the reference nor anyone in the call has said: the
  reference shows how much the turn needed, and a reply that says more tells a stranger what the owner
  kept back.

Each check stands only where the reference passes it, so a paraphrase of the reference is never held to
more than its reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voice.metrics.scoring.household import HEALTH_MORE
from voice.metrics.scoring.preset_facts import KINDS
from voice.text import matching as m
from voice.text.numbers import arabic

__all__ = [
    "UnitClash",
    "changed_unit",
    "content_units",
    "places_ruled_out",
    "private_mention",
    "reasked",
    "ruled_out",
    "taken_for_owner",
    "unit_clash",
]  # fmt: skip

_DAY = re.compile(
    r"(?:这|下|上)?(?:个)?周[1-6日]|下(?:个)?月\d+号|\d+月\d+[号日]|(?<![\d月])\d{1,2}号"
    r"|大后天|后天|明天|今天|今晚|明晚|明早|月底|月初|周末"
)
_PART = re.compile(r"上午|下午|中午|晚上|早上|傍晚|凌晨|夜里")
_CLOCK = re.compile(r"(\d{1,2})(?:点|:)(半|\d{1,2}分?)?")
_SPAN = re.compile(r"(\d+)(?:到|至|-)?(\d+)?(?:个)?(分钟|小时|天)")
_NEGATED = re.compile(r"不|别|没|甭")
_CLAUSES = re.compile(r"[^，。！？,.!?；;]+")
_SHORT_DAY = {"今晚": ("今天", "晚上"), "明晚": ("明天", "晚上"), "明早": ("明天", "早上")}
KINDS_OF_TIME = ("day", "part", "clock", "span")
# places said by a number or a letter: a terminal, a car park or a basement (T2, P2, B1), a numbered gate,
# a lettered zone, a floor
_PLACE_UNITS = {
    "level": re.compile(r"(?<![A-Z0-9])[PTB]\d{1,2}(?![0-9])"),
    "gate": re.compile(r"\d+号(?:门|口|出口)"),
    "zone": re.compile(r"(?<![A-Z])[A-Z]区"),
    "floor": re.compile(r"(?<![\d号])\d{1,2}(?:层|楼)(?![下上道])"),
}
KINDS_OF_UNIT = (*KINDS_OF_TIME, *_PLACE_UNITS)


def _clock(hour: str, minute: str | None, before: str) -> str | None:
    if hour == "1" and not minute and not _PART.search(before):  # 一点: "a little", not one o'clock
        return None
    if int(hour) > 24:
        return None
    mins = "30" if minute == "半" else (minute or "").rstrip("分")
    return f"{int(hour)}:{int(mins) if mins else 0:02d}"


def content_units(text: str) -> dict[str, set[str]]:
    """The times and numbered places ``text`` states (not in a clause that denies them: 周五不行, 别去T1),
    by kind of :data:`KINDS_OF_UNIT`."""
    out: dict[str, set[str]] = {kind: set() for kind in KINDS_OF_UNIT}
    for clause in _CLAUSES.findall(arabic(text).upper()):
        if _NEGATED.search(clause):
            continue
        for kind, pattern in _PLACE_UNITS.items():
            out[kind].update(pattern.findall(clause))
        for found in _DAY.finditer(clause):
            day = re.sub(r"^这(?:个)?|个", "", found.group(0))
            for unit in _SHORT_DAY.get(day, (day,)):
                out["part" if _PART.fullmatch(unit) else "day"].add(unit)
        out["part"].update(_PART.findall(clause))
        for found in _CLOCK.finditer(clause):
            if (said := _clock(found.group(1), found.group(2), clause[: found.start()])) is not None:
                out["clock"].add(said)
        for low, high, unit in _SPAN.findall(clause):
            out["span"].add(f"{low}{'-' + high if high else ''}{unit}")
    return out


@dataclass(frozen=True)
class UnitClash:
    """A time or a numbered place the reply states where its reference states another of the same kind."""

    said: str
    reference: str
    in_call: bool  # the call said it before (for something else), rather than nobody
    just_said: bool  # the caller's turn itself says the reference's time: the reply misheard it

    def __str__(self) -> str:
        return f"says {self.said} where the reference says {self.reference}"


def unit_clash(text: str, reference: str, call: str, caller: str) -> UnitClash | None:
    """A unit (time or numbered place) of ``text`` of a kind the ``reference`` states, where it states none
    of the reference's; ``call``: what was said before (the unit's source when it is not misheard);
    ``caller``: the caller's turn (the reference's unit said there is one the reply misheard)."""
    said, ref = content_units(text), content_units(reference)
    before, now = content_units(call), content_units(caller)
    for kind in KINDS_OF_UNIT:
        if ref[kind] and said[kind] and not said[kind] & ref[kind]:
            other = sorted(said[kind] - ref[kind])[0]
            theirs = "、".join(sorted(ref[kind]))
            return UnitClash(other, theirs, other in before[kind], bool(ref[kind] & now[kind]))
    return None


def changed_unit(text: str, call: str) -> str | None:
    """A time or a place of ``text`` that the ``call`` (one turn a line) said before and has since changed
    (T2, then P2): the last line that says one of its kind says others and not it, or None."""
    said = content_units(text)
    lines = [content_units(line) for line in call.splitlines()]
    for kind in KINDS_OF_UNIT:
        stated = [units[kind] for units in lines if units[kind]]
        if not said[kind] or not stated or said[kind] & stated[-1]:
            continue
        if old := sorted(said[kind] & set().union(*stated[:-1])):
            return f"says {old[0]} where the call has since settled on {'、'.join(sorted(stated[-1]))}"
    return None


# questions for a slot, and what in the caller's words fills it
_ASK_TIME = re.compile(r"几点|什么时候|啥时候|什么时间|哪天|几号|多久|多长时间")
_ASK_PLACE = re.compile(r"哪儿|哪里|在哪|什么地方|啥地方|哪个位置")
_ASK_WHICH = re.compile(r"(?:哪|什么|啥)(?:一)?(?:道|个|样|份|件|种|款)?(?:菜|东西|单|件|货)")
PLACES: tuple[str, ...] = (
    "架子", "架上", "外卖架", "柜子", "快递柜", "冷柜", "冰柜", "驿站", "门口", "门卫", "保安", "前台",
    "大堂", "楼下", "物业", "传达室", "收发室",
)  # fmt: skip
_FILLER = re.compile(r"请问|那么|那|您|你|是|大概|具体|一下|吗|呢|了|的|吧|啊|呀|我|好|再|跟|说")


def _asks(text: str, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The first match of ``pattern`` in a sentence of ``text`` that asks a question, or None."""
    for sentence in re.findall(r"[^。！？!?]+[。！？!?]?", text):
        if m.asks_question(sentence) and (found := pattern.search(sentence)):
            return found
    return None


def reasked(text: str, reference: str, caller_said: str, caller_all: str) -> str | None:
    """The slot ``text`` asks for that the caller already filled (a time or a place in ``caller_said``,
    their last turns; what "which one" asks about anywhere in ``caller_all``), and the ``reference`` does
    not ask for: the question's words, or None."""
    if (found := _asks(text, _ASK_TIME)) and not _asks(reference, _ASK_TIME):
        units = content_units(caller_said)
        if units["clock"] or units["day"]:
            return found.group(0)
    placed = any(word in caller_said for word in PLACES)
    if placed and (found := _asks(text, _ASK_PLACE)) and not _asks(reference, _ASK_PLACE):
        return found.group(0)
    if (found := _asks(text, _ASK_WHICH)) and not _asks(reference, _ASK_WHICH):
        rest = _FILLER.sub("", m.canonical(found.string[found.end() :]))
        if len(rest) >= 2 and rest[:2] in m.canonical(caller_all):
            return found.group(0) + rest
    return None


# the caller ruling a place out (驿站不收到付的, 门卫不让放, 快递柜满了), and a reply proposing it
_RULED_OUT = re.compile(r"不收|不让|不行|不能|没法|不管|不肯|没用|不开|关了|满了|不接|不给")
_PROPOSING = re.compile(r"放|送|去|找|到|停|交给|存")


def _affirmed(text: str, item: str) -> str | None:
    """The clause of ``text`` that names ``item`` and denies nothing, or None."""
    return next((c for c in _CLAUSES.findall(text) if item in c and not _NEGATED.search(c)), None)


def places_ruled_out(caller: str) -> list[str]:
    """The places the ``caller``'s turn says will not do (驿站不收到付的: 驿站)."""
    return [
        item
        for clause in _CLAUSES.findall(caller)
        if not m.asks_question(clause)  # 放柜子里行不行: asked, not ruled out
        for item in PLACES
        if (at := clause.find(item)) >= 0 and _RULED_OUT.search(clause, at + len(item))
    ]


def ruled_out(text: str, reference: str, caller: str) -> str | None:
    """A place the ``caller``'s turn rules out (驿站不收到付的) that ``text`` proposes (那就放驿站吧) and the
    ``reference`` does not name in a clause that denies nothing: the place, or None."""
    for item in places_ruled_out(caller):
        proposed = _affirmed(text, item)
        if proposed and _PROPOSING.search(proposed) and not _affirmed(reference, item):
            return item
    return None


# a person the caller asks for by name and title (刘师傅吧？, 是王老师吗？)
_NAMED = re.compile(r"[\u4e00-\u9fa5](?:师傅|先生|女士|老师|总|经理|医生|阿姨|叔叔|大姐|大哥)")
_UNSURE = re.compile(r"确认|是不是|是否|吗|打错|号码")


def taken_for_owner(text: str, reference: str, caller: str) -> str | None:
    """A person the ``caller`` asks for by name whom the ``reference`` only speaks of unsure (没法确认机主
    是不是您要找的刘师傅) and ``text`` speaks of as the owner (刘师傅现在不方便接): the name, or None."""
    for name in dict.fromkeys(_NAMED.findall(caller)):
        ref_clauses = [c for c in _CLAUSES.findall(reference) if name in c]
        if not ref_clauses or not all(_UNSURE.search(c) for c in ref_clauses):
            continue
        if any(name in c and not _UNSURE.search(c) for c in _CLAUSES.findall(text)):
            return name
    return None


# the owner's health and whereabouts in everyday words, beyond the preset's own
HEALTH: tuple[str, ...] = (
    *KINDS["health"], *HEALTH_MORE, "崴了", "崴脚", "拍片", "片子", "病假", "扭伤", "摔了", "受伤", "伤了",
    "病人", "病情", "内镜",
)  # fmt: skip
WHEREABOUTS: tuple[str, ...] = (
    "在公司", "在单位", "在办公室", "在外地", "在医院", "在急诊", "在老家", "在机场", "在国外", "在酒店",
    "在出差", "出差了",
)  # fmt: skip


def private_mention(text: str, reference: str, known: str, told: str = "") -> str | None:
    """The owner's health or whereabouts ``text`` tells (:func:`voice.text.matching.discloses`) where the
    ``reference`` and ``told`` (what the replies so far told the caller) say nothing of the kind and
    ``known`` (the call so far) not that word:
    ``"the owner's health ('崴了')"``, or None."""
    for kind, words in (("health", HEALTH), ("whereabouts", WHEREABOUTS)):
        if any(word in reference or word in told for word in words):  # the turn needed it, or it is told
            continue
        for word in words:
            place = word.removeprefix("在")  # 在医院 is told by a reference's 去医院了
            if word in text and word not in known and place not in reference and m.discloses(text, word):
                return f"the owner's {kind} ({word!r})"
    return None
