"""The one reviewed table of synonyms the checklist knows: the handful of actions the scenarios turn on.

An annotator lists the phrasings of a point, but a good paraphrase may name the action another way
(这趟车不要了，您那边撤单就行 cancels as surely as 取消).  A phrase naming one of these actions also matches
with the action said another way: 帮您取消 is said by 帮您撤单 too.  The judge invents no other synonym;
each group here is words a Mandarin speaker would take for the same action in a call, and nothing looser
(退款 is not 取消, 放门卫 is not 放门口).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from voice.text.matching import canonical

ACTIONS: dict[str, tuple[str, ...]] = {
    "cancel": ("取消", "撤单", "退单", "撤销"),
    "leave at the door": ("放门口", "放在门口", "放到门口", "搁门口", "搁在门口", "放门外"),
    "call back": ("回电话", "回个电话", "回电", "回拨", "打回来", "再打来", "再打过来"),
    "sign": ("签收", "签字", "签名"),
    "refuse": ("拒绝", "谢绝", "拒收"),
    # saying or telling: 讲 is 说 in everyday speech (跟您讲 = 跟您说, 不能讲 = 不能说)
    "say": ("说", "讲"),
    # declining: what one is not in a position to do, said with any of the modals of refusal (不能说,
    # 不好说, 不方便说, 没法说, 不便透露; 不好替他定 = 没法替他定).  Only before the verb that follows it in
    # the phrase: the modal alone (不好 is also "not good") is never a point.
    "cannot": ("不能", "不方便", "不便", "没法", "无法", "不好"),
    # not needing what the caller offers: 不需要 = 不用 = 用不上 = 用不着 (保险也用不上 turns it down)
    "not needing": ("不需要", "不用", "用不上", "用不着"),
    # as soon as possible: 尽快过来 = 抓紧过来 = 赶紧过来 = 赶快过来
    "hurry": ("尽快", "抓紧", "赶紧", "赶快"),
    # not sure: 不确定 = 说不准 = 拿不准 = 不敢确定 (what one cannot confirm yet)
    "not sure": ("不确定", "说不准", "拿不准", "不敢确定"),
}
# the groups whose word must not be the whole phrase to be replaced (a modal says nothing by itself)
_NOT_ALONE = frozenset({"cannot"})


@functools.lru_cache(maxsize=4096)
def _variants(phrase: str) -> tuple[str, ...]:
    said = canonical(phrase)
    found: list[str] = []
    for name, group in ACTIONS.items():
        inside = [w for w in group if w in said]
        if not inside:
            continue
        word = max(inside, key=len)  # 回电话, not the 回电 inside it
        if name in _NOT_ALONE and word == said:
            continue
        found += [said.replace(word, other) for other in group if other != word]
    return tuple(found)


def expand(phrases: Iterable[str]) -> tuple[str, ...]:
    """``phrases`` first, then each with its action said another way (duplicates dropped)."""
    given = tuple(phrases)
    return tuple(dict.fromkeys([*given, *(v for p in given for v in _variants(p))]))
