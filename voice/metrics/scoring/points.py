"""Whether a reply conveys an annotated point, denies it, or contradicts it (checklist judge).

A point is a list of phrasings, any of which conveys it (:mod:`voice.dialogues.annotations`).  Beyond
matching them (:mod:`voice.text.matching`, with the actions of
:mod:`voice.text.synonyms` said any way), the checklist reads three things a phrase list does
not say by itself:

- a point said only under a negation is denied, not conveyed (这单先别取消 denies 取消, 不是不需要 denies
  不需要);
- a refusal point (不太方便说) is conveyed by any refusal to tell or give (不便透露);
- a fact from earlier that the reply asks for again (请问是什么岗位？) is not carried over (``stated``);
- a number the point gives, said otherwise, contradicts it: the same measure word with another number (the
  point says 3栋, the reply 5栋 and never 3栋), or a number read out digit by digit as long as the point's
  and different (13908765512 for 13908765521) is a misheard or wrong fact, not the point.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voice.text import matching as m
from voice.text.numbers import read_out_numbers
from voice.text.synonyms import expand

Point = tuple[str, ...]
# a number with the measure word that says what it counts: a building, a unit, a floor, a room, a time of
# day, a wait
_COUNTED = re.compile(r"(\d+)(号楼|单元|栋|楼|层|室|号|点|分钟|个小时|小时)")
READ_OUT_MIN = 4  # a number read out digit by digit this long or more is a fact that can be wrong


# two neighbouring numerals say a rough range, not a number (一两个小时, 三四点, 五六分钟, 二三十层): the
# canonical form would read them as 12, 34, 56 and 30
_RANGE = re.compile(
    r"(?:一两|两三|二三|三四|四五|五六|六七|七八|八九)十?(?=号楼|单元|栋|楼|层|室|号|点|分钟|个小时|小时)"
)
# 一点 is "a little" (晚一点, 快一点, 多一点) unless a time of day is named around it
_ONE_OCLOCK = re.compile(
    r"(?:上午|下午|中午|晚上|早上|凌晨|今天|明天|后天|周.|星期.|礼拜.)1点|1点(?:钟|半|整|\d+分?)"
)


def counted(text: str, hay: str) -> list[tuple[str, str]]:
    """(number with its measure word, the measure word) for each ``text`` says (``hay`` its canonical
    form), rough ranges and the "a little" 一点 left out."""
    ranges = {m.canonical(r.group(0) + text[r.end()]) for r in _RANGE.finditer(text) if r.end() < len(text)}
    found = []
    for match in _COUNTED.finditer(hay):
        said = match.group(0)
        if any(said.startswith(r) or r.startswith(said) for r in ranges):
            continue
        near = hay[max(0, match.start() - 3) : match.end() + 2]
        if match.group(2) == "点" and (
            int(match.group(1)) > 24 or (match.group(1) == "1" and not _ONE_OCLOCK.search(near))
        ):  # no hour (星期三一点 reads 31点), or "a little"
            continue
        found.append((said, match.group(2)))
    return found


def contradiction(text: str, point: Point) -> tuple[str, str] | None:
    """The words of ``text`` that give the point's number otherwise (5栋 for 3栋, a phone number with two
    digits swapped), when it says none of the point's phrasings, and that phrasing; or None.

    Every phrasing of a point is the same fact (三点, 下午3点, 十五点): a reply that says any of them is not
    contradicted by the others, and a number that is itself one of the phrasings is never "another"."""
    hay = m.canonical(text)
    own = {m.canonical(phrase) for phrase in point}
    said_units = {u[2] for w in own if w in hay and (u := _COUNTED.fullmatch(w)) is not None}
    found = counted(text, hay)
    read_out = read_out_numbers(text)
    for phrase in point:
        wanted = m.canonical(phrase)
        if wanted in hay:
            continue
        if (unit := _COUNTED.fullmatch(wanted)) is not None and unit[2] not in said_units:
            other = next((c for c, u in found if u == unit[2] and c not in own), None)
            if other is not None:
                return other, phrase
        if wanted.isdigit() and len(wanted) >= READ_OUT_MIN:
            other = next((n for n in read_out if len(n) == len(wanted) and n not in own), None)
            if other is not None:
                return other, phrase
    return None


# the verbs of telling or giving a refusal point keeps back (不方便说, 不会提供, 不能给)
_TELLING = ("说", "讲", "提供", "给", "透露", "告诉", "报", "念", "核对")


def refusal(point: Point) -> bool:
    """A point that is a refusal to tell or give (不太方便说, 不会提供): every phrasing declines a verb of
    telling or giving."""
    return bool(point) and all(m.declines(p) and any(v in p for v in _TELLING) for p in point)


def conveys(text: str, point: Point, *, stated: bool = False) -> bool:
    """Whether ``text`` conveys the point: one phrasing said (loosely, any synonym of its action), not
    denied, not contradicted by a number, and if ``stated`` not only asked about.  A refusal point is
    conveyed by a refusal to tell or give in any words (不便透露 for 不太方便说, 都不会给 for 不会提供)."""
    said = m.first_said(text, expand(point), loose=True, stated=stated) is not None
    if not said and refusal(point):
        said = m.declines(text)
    return said and contradiction(text, point) is None


def missing(text: str, points: Sequence[Point], *, stated: bool = False) -> list[Point]:
    """The points ``text`` does not convey (:func:`conveys`)."""
    return [p for p in points if not conveys(text, p, stated=stated)]


def denied(text: str, points: Sequence[Point]) -> Point | None:
    """The first point ``text`` names only to deny it (明天下午不可以 for 可以), or None."""
    for point in points:
        phrases = expand(point)
        if m.first_said(text, phrases, loose=True) is None and any(m.denies(text, p) for p in phrases):
            return point
    return None


def clash(text: str, points: Sequence[Point]) -> str | None:
    """How a number of ``text`` contradicts one of ``points`` (:func:`contradiction`), or None."""
    for point in points:
        if (found := contradiction(text, point)) is not None:
            return f"says {found[0]} where the call had {found[1]}"
    return None
