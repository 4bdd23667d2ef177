"""What the call has settled, held against a reply (checklist judge, :mod:`voice.metrics.scoring.grounded`).

A call settles facts as it goes: the caller names a building (3栋), reads a code (8271), changes a time
(三点半, then 五点半) or a count (十二杯, then 剩下十杯), moves the pickup to another gate (东门).  A reply
that says them otherwise has misheard or forgotten; these helpers find that, from the text alone:

- :func:`number_clash`: a number with the same measure word, or read out as long, as none the call gave;
- :func:`count_clash`, :func:`old_time`: a count or a time the call said before and has since changed;
- :func:`place_clash`, :func:`asked_side`: a side of a gate or a square other than the one last agreed,
  or asked for again.
"""

from __future__ import annotations

import re

from voice.metrics.scoring import points as pt
from voice.text import matching as m
from voice.text.numbers import read_out_numbers

READ_OUT_MIN, CLASH_MIN = 4, 3  # digits read out: a leak from 4, a misread from 3

# asking for what the call settled: the question and the fact that settles it (a side of a gate, a time)
_ASKED_SIDE = re.compile(r"哪个(门|口|广场|出口)|哪(?:一)?边")
_SIDE = re.compile(r"([东南西北])(门|广场|口|侧|站台|出口)")
# a count the call may settle and then change (十二杯, then 剩下十杯): the last one said is the one agreed
_COUNT = re.compile(r"(\d+)(杯|份|箱|件|寸|袋|盒)")


def numbers(text: str) -> dict[str, set[str]]:
    """The call's numbers by measure word (``read`` for those read out digit by digit)."""
    out: dict[str, set[str]] = {}
    for said, unit in pt.counted(text, m.canonical(text)):
        out.setdefault(unit, set()).add(said)
    for n in read_out_numbers(text):
        if len(n) >= CLASH_MIN:
            out.setdefault("read", set()).add(n)
    return out


def number_clash(text: str, facts: str, any_new: bool = False) -> str | None:
    """A number of ``text`` said with a measure word (or read out) the ``facts`` use, as none of theirs:
    ``"says 5栋 where the call had 3栋"``, or None; ``any_new``: one such number not among theirs is
    enough (the caller's own turn: 5点以后 heard as 4点半), else only when none of them is."""
    known = numbers(facts)
    for unit, said in numbers(text).items():
        theirs = known.get(unit)
        if not theirs or (said <= theirs if any_new else said & theirs):
            continue
        said = said - theirs
        if unit == "read":
            other = next((n for n in said if any(len(n) == len(t) for t in theirs)), None)
            if other is None:
                continue
            return f"reads out {other} where the call had {'、'.join(sorted(theirs))}"
        return f"says {'、'.join(sorted(said))} where the call had {'、'.join(sorted(theirs))}"
    return None


def sides(text: str) -> list[tuple[str, str]]:
    """(the kind of place, the side) for each 东门, 南广场... a text states (not denied), in order."""
    found: list[tuple[int, str, str]] = []
    for match in _SIDE.finditer(text):
        if m.discloses(text, match.group(0)):
            found.append((match.start(), match.group(2), match.group(1)))
    return [(kind, side) for _, kind, side in sorted(found)]


def _counts(text: str) -> dict[str, str]:
    """The last number said for each measure word of :data:`_COUNT`."""
    return {unit: n + unit for n, unit in _COUNT.findall(m.canonical(text))}


def count_clash(text: str, facts: str) -> str | None:
    """A count of ``text`` (十二杯) that the call said before but then changed (剩下十杯): the old figure."""
    latest, said_before = _counts(facts), set(_COUNT.findall(m.canonical(facts)))
    for unit, said in _counts(text).items():
        if unit in latest and said != latest[unit] and (said[: -len(unit)], unit) in said_before:
            return f"says {said} where the call settled on {latest[unit]}"
    return None


def old_time(text: str, facts: str, ref: str) -> str | None:
    """A time the call said before (三点半) where the call has since settled on another (五点半: this
    turn's reference, else the last turn that gave a time), and the reply gives none of the new one."""

    def times(t: str) -> set[str]:
        return {said for said, unit in pt.counted(t, m.canonical(t)) if unit == "点"}

    lines = [line for line in facts.splitlines() if times(line)]
    now, said = times(ref) or (times(lines[-1]) if lines else set()), times(text)
    if not now or not said or said & now:
        return None
    old = said & (times(facts) - now)
    return next(iter(sorted(old)), None)


def place_clash(text: str, facts: str) -> str | None:
    """A side of a gate or a square (南门 for 东门) other than the one ``facts`` name last for it."""
    latest = dict(sides(facts))
    for kind, side in dict(sides(text)).items():  # what the reply settles on (北门不对，在南门: 南门)
        if kind in latest and latest[kind] != side:
            return f"says {side}{kind} where the call had {latest[kind]}{kind}"
    return None


def asked_side(text: str) -> str | None:
    """The reply asks which gate or side (哪个门), or None."""
    found = _ASKED_SIDE.search(text)
    return found.group(0) if found else None
