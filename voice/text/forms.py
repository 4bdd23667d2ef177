"""Other ways of saying a phrase that the grammar allows, word for word the same act (checklist judge).

Used by :mod:`voice.text.matching` on canonical phrases (numerals as digits: 一下 is ``1下``).
An annotator lists the phrasings of a point; these forms spare listing what any speaker says both ways.
"""

from __future__ import annotations

import functools
import re

_GIVE_FIRST = re.compile(r"给(?P<who>[您你他她我])(?P<verb>\w{1,3})")  # 给您念 → 念给您
_GIVE_AFTER = re.compile(r"(?P<verb>\w{1,3})给(?P<who>[您你他她我])")  # 发给您 → 给您发


@functools.lru_cache(maxsize=4096)
def forms(needle: str) -> tuple[str, ...]:
    """A canonical phrase and the other ways of saying it the grammar allows, word for word the same act:

    - a verb said once, briefly (V一下), is also said reduplicated (VV, V一V): 对一下 = 对对 = 对一对,
      看一下 = 看看; and the other way round;
    - giving or telling someone something (给您念, 给他打电话) puts 给 + the person before the verb or
      after the verb phrase (念给您, 打电话给他), the same act either way."""
    found = [needle]
    for i, verb in _verbs_once(needle):
        found += [needle[:i] + verb * 2 + needle[i + 3 :], needle[:i] + f"{verb}1{verb}" + needle[i + 3 :]]
    found += [needle[:i] + f"{needle[i]}1下" + needle[i + 2 :] for i in _doubled(needle)]
    if (to := _GIVE_FIRST.fullmatch(needle)) is not None:
        found.append(f"{to['verb']}给{to['who']}")
    elif (to := _GIVE_AFTER.fullmatch(needle)) is not None:
        found.append(f"给{to['who']}{to['verb']}")
    return tuple(dict.fromkeys(found))


def _verbs_once(needle: str) -> list[tuple[int, str]]:
    """Where a verb is said once, briefly (V1下), and the verb."""
    return [(i, v) for i, v in enumerate(needle[:-2]) if needle[i + 1 : i + 3] == "1下" and _cjk(v)]


def _doubled(needle: str) -> list[int]:
    """Where a character is said twice in a row (看看)."""
    return [i for i in range(len(needle) - 1) if needle[i] == needle[i + 1] and _cjk(needle[i])]


def _cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"
