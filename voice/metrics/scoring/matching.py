"""Matching what the caller heard against annotated phrases, tolerant of what ASR does to Mandarin.

Heard text is a transcript: it may be in traditional script, lack punctuation, write numbers as digits or
characters, and swap a word for one that sounds alike (门卫室 → 门位室).  So both sides are reduced first:

1. :func:`voice.speech.text.normalize_zh` (simplified script, no punctuation or spaces, halfwidth, lowercase);
2. numerals to arabic digits (二十八 → 28, 三八六 → 386), so 4点 and 四点 are the same;
3. for phrases of two syllables or more, a phrase also matches by sound: toneless pinyin with the usual
   fuzzy pairs merged (zh/z, ch/c, sh/s, l/n, ang/an, eng/en, ing/in).  *Loose* matching, used for the
   points a reply should convey, also forgives one syllable in four or more.

Digits are never matched by sound, so 四点 never passes for 十点.  Forbidden and private phrases match
by sound but never loosely: a near miss there would invent a violation.

The small vocabularies a checklist needs beyond the annotations (a goodbye, a question, a refusal) are here
too, each a plain tuple of phrases, matched literally: by sound, 再见 would be heard in 机主在见客户.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from voice.speech.text import normalize_zh, to_simplified

GOODBYE: tuple[str, ...] = ("再见", "拜拜", "挂了", "先这样", "就这样", "不打扰了", "回头见")
QUESTION_WORDS: tuple[str, ...] = (
    "吗", "请问", "是否", "能不能", "可不可以", "要不要", "是不是", "有没有", "行不行", "好不好", "对不对",
    "什么时候", "什么事", "哪位", "哪里", "哪儿", "哪个", "几点", "几号", "多少", "谁",
)  # fmt: skip
DECLINE: tuple[str, ...] = (
    "不能提供", "不提供", "不便透露", "不方便透露", "不能透露", "不能告诉", "无法提供", "不能给", "不需要",
    "不用了", "不办理", "不要再打", "别再打", "不会交", "不感兴趣", "官方渠道", "拒绝",
)  # fmt: skip

_DIGITS = {"零": 0, "〇": 0, "一": 1, "幺": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}  # fmt: skip
_UNITS = {"十": 10, "百": 100, "千": 1000}
_NUMERAL = re.compile(f"[{''.join(_DIGITS)}{''.join(_UNITS)}万]+")
_READ_OUT = re.compile(rf"[0-9{''.join(_DIGITS)}](?:[\s\-]*[0-9{''.join(_DIGITS)}])*")
_FUZZY_INITIALS = (("zh", "z"), ("ch", "c"), ("sh", "s"), ("l", "n"))
_FUZZY_FINALS = (("ang", "an"), ("eng", "en"), ("ing", "in"))
LOOSE_MIN_SYLLABLES = 4  # loose matching forgives one syllable in phrases at least this long


def _numeral_value(run: str) -> str:
    """A run of Chinese numerals as arabic: read digit by digit (三八六) or as a number (二十八, 三百零五)."""
    if not any(ch in _UNITS or ch == "万" for ch in run):
        return "".join(str(_DIGITS[ch]) for ch in run)
    total = section = number = 0
    for ch in run:
        if ch in _DIGITS:
            number = _DIGITS[ch]
        elif ch in _UNITS:
            section += (number or 1) * _UNITS[ch]
            number = 0
        else:  # 万
            total += (section + number) * 10_000
            section = number = 0
    return str(total + section + number)


@functools.lru_cache(maxsize=4096)
def canonical(text: str) -> str:
    """``normalize_zh`` with numerals as arabic digits: the form phrases are matched in."""
    # numerals first: punctuation still separates 尾号三八六，二十八块 into two numbers
    return normalize_zh(
        _NUMERAL.sub(lambda m: _numeral_value(m.group()), to_simplified(text)), say_numbers=False
    )


def _fuzzy(syllable: str) -> str:
    for a, b in _FUZZY_INITIALS:
        if syllable.startswith(a):
            syllable = b + syllable[len(a) :]
            break
    for a, b in _FUZZY_FINALS:
        if syllable.endswith(a):
            return syllable[: -len(a)] + b
    return syllable


@functools.lru_cache(maxsize=4096)
def sounds(text: str) -> tuple[str, ...]:
    """The canonical text as fuzzy toneless syllables; digits and latin letters stay one item each."""
    from pypinyin import Style, lazy_pinyin

    return tuple(_fuzzy(s) for s in lazy_pinyin(canonical(text), style=Style.NORMAL, errors=_per_character))


def _per_character(chunk: str) -> Any:
    """What pypinyin does with text that is not Chinese: one item per character (3, 8, 6), not one per run."""
    return list(chunk)


def _contains_run(hay: tuple[str, ...], needle: tuple[str, ...], misses: int) -> bool:
    n = len(needle)
    for start in range(len(hay) - n + 1):
        wrong = 0
        for a, b in zip(hay[start : start + n], needle, strict=True):
            if a != b:
                # a digit never passes for another: 四点 is not 十点
                wrong += misses + 1 if a.isdigit() or b.isdigit() else 1
                if wrong > misses:
                    break
        else:
            return True
    return False


def says(text: str, phrase: str, *, loose: bool = False, by_sound: bool = True) -> bool:
    """Whether ``text`` (heard) contains ``phrase``: literally after :func:`canonical`, or by sound."""
    if canonical(phrase) in canonical(text):
        return True
    needle = sounds(phrase)
    if not by_sound or len(needle) < 2:
        return False
    misses = 1 if loose and len(needle) >= LOOSE_MIN_SYLLABLES else 0
    return _contains_run(sounds(text), needle, misses)


def first_said(
    text: str, phrases: Iterable[str], *, loose: bool = False, by_sound: bool = True
) -> str | None:
    """The first of ``phrases`` that ``text`` says, or None."""
    return next((p for p in phrases if says(text, p, loose=loose, by_sound=by_sound)), None)


def read_out_numbers(text: str) -> list[str]:
    """Digit strings read out one digit at a time (四八三九二七, 4839 27): codes, card and ID numbers.

    Numbers said with units (二十八块, 五万元, 十点) are not read out: they are amounts and times.  Spaces
    and dashes between digits do not break a run (an ASR may put them between slow digits); punctuation
    does (尾号三八六，10点 is two numbers).
    """
    folded = unicodedata.normalize("NFKC", to_simplified(text))
    return ["".join(str(_DIGITS.get(ch, ch)) for ch in m.group() if ch.isdigit() or ch in _DIGITS)
            for m in _READ_OUT.finditer(folded)]  # fmt: skip


def asks_question(text: str) -> bool:
    """A question mark, a reply ending in 呢, or a question word (吗, 请问, 能不能, 哪里, 几点...)."""
    if "?" in text or "？" in text or canonical(text).endswith("呢"):
        return True
    return first_said(text, QUESTION_WORDS, by_sound=False) is not None


def closes_call(text: str) -> bool:
    """The reply says goodbye (再见, 拜拜, 挂了, 就这样...)."""
    return first_said(text, GOODBYE, by_sound=False) is not None


def declines(text: str) -> bool:
    """The reply refuses (不能提供, 不需要, 不办理, 请不要再打, 官方渠道...)."""
    return first_said(text, DECLINE, by_sound=False) is not None


def repeats_itself(text: str) -> str | None:
    """A stretch said over and over (4+ characters three times, or 8+ twice), or None."""
    s = canonical(text)
    for size, times in ((8, 2), (4, 3)):
        for i in range(len(s) - size + 1):
            piece = s[i : i + size]
            if s.count(piece) >= times:
                return piece
    return None


@functools.lru_cache(maxsize=1)
def _chrf_metric() -> Any:
    from sacrebleu.metrics import CHRF

    return CHRF()


def chrf(reply: str, reference: str) -> float:
    """chrF (character n-grams, sacrebleu's defaults; 0-100) of a reply against the reference, on canonical
    text: one signal of how close the wording is, never a score by itself."""
    hyp, ref = canonical(reply), canonical(reference)
    return float(_chrf_metric().sentence_score(hyp, [ref]).score) if hyp and ref else 0.0
