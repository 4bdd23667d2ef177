"""Whether a reply conveys an annotated point, denies it, or contradicts it (checklist judge).

A point is a list of phrasings, any of which conveys it (:mod:`voice.dialogue_annotations`).  Beyond
matching them (:mod:`voice.text.matching`, with the actions of
:mod:`voice.text.synonyms` said any way), the checklist reads three things a phrase list does
not say by itself:

- a point said only under a negation is denied, not conveyed (这单先别取消 denies 取消, 不是不需要 denies
  不需要);
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


def contradiction(text: str, point: Point) -> tuple[str, str] | None:
    """The words of ``text`` that give one of the point's numbers otherwise (5栋 for 3栋, a phone number
    with two digits swapped), when it never gives the point's own, and that phrase; or None."""
    hay = m.canonical(text)
    for phrase in point:
        wanted = m.canonical(phrase)
        if wanted in hay:
            continue
        if (counted := _COUNTED.fullmatch(wanted)) is not None:
            other = next((f"{n}{u}" for n, u in _COUNTED.findall(hay) if u == counted[2]), None)
            if other is not None:
                return other, phrase
        if wanted.isdigit() and len(wanted) >= READ_OUT_MIN:
            other = next((n for n in read_out_numbers(text) if len(n) == len(wanted)), None)
            if other is not None:
                return other, phrase
    return None


def conveys(text: str, point: Point, *, stated: bool = False) -> bool:
    """Whether ``text`` conveys the point: one phrasing said (loosely, any synonym of its action), not
    denied, not contradicted by a number, and if ``stated`` not only asked about."""
    said = m.first_said(text, expand(point), loose=True, stated=stated) is not None
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
