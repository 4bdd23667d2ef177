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
from collections.abc import Iterable, Iterator
from typing import Any

from voice.speech.text import to_simplified

GOODBYE: tuple[str, ...] = (
    "再见", "拜拜", "挂了", "先这样", "就这样", "不打扰了", "回头见", "回见", "再会", "先挂", "挂电话",
)  # fmt: skip
QUESTION_WORDS: tuple[str, ...] = (
    "吗", "请问", "是否", "能不能", "可不可以", "要不要", "是不是", "有没有", "行不行", "好不好", "对不对",
    "什么时候", "什么事", "哪位", "哪里", "哪儿", "哪个", "几点", "几号", "多少", "谁", "需不需要",
    "方不方便", "怎么样", "怎么称呼", "哪天", "几时", "多久", "能否", "啥",
)  # fmt: skip
DECLINE: tuple[str, ...] = (
    "不能提供", "不提供", "不便透露", "不方便透露", "不能透露", "不能告诉", "无法提供", "不能给", "不需要",
    "不用了", "不办理", "不要再打", "别再打", "不会交", "不感兴趣", "官方", "拒绝", "诈骗", "骗子", "报警",
    "核实",
)  # fmt: skip
# Giving or telling, which a refusal denies in any words: 验证码我不能给您, 我不会告诉您, 这个没法透露.
GIVING: tuple[str, ...] = (
    "提供", "透露", "告诉", "给", "说", "念", "报", "发", "转账", "转", "汇", "交", "办理", "操作", "帮",
    "配合", "点", "下载", "登录", "相信", "信",
)  # fmt: skip

_DIGITS = {"零": 0, "〇": 0, "一": 1, "幺": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}  # fmt: skip
_UNITS = {"十": 10, "百": 100, "千": 1000}
_NUMERAL = re.compile(f"[{''.join(_DIGITS)}{''.join(_UNITS)}万]+")
_DIGIT_RUN = re.compile(f"[0-9{''.join(_DIGITS)}]+")
_UNITS_BEFORE = frozenset("十百千万亿")
_UNITS_AFTER = frozenset("十百千万亿点块元角毛分秒号月年日天岁个位楼层栋单室次遍条张件台辆米斤克公里周倍%")
_TIME_MARKS = frozenset(":.")  # 10:30, 3.5: a time or an amount when there is a digit on either side
_JOINERS = re.compile(r"[\s\-,，、;；]+")  # between groups of a number read out: 三八二，九一六
# Negation before a phrase, with up to four words or verbs of telling between (先别取消, 不用再帮您取消, 明天
# 下午不可以, 我不会说验证码是多少).  Matched within a clause: 不，取消吧 is a "no" and then a cancellation.
_NEGATION_BEFORE = re.compile(
    r"(?P<neg>无需|无须|无法|不必|没|不|别|未|甭|勿|莫)(?:[要用必能会可以再先给帮您你他她去急着需有法得]|说|告诉|透露|提供){0,4}$"
)
# after it: 取消不了; what it says is kept back (验证码是不能说的, 验证码是保密的)
_NEGATED_AFTER = re.compile(
    r"不了|不成|[的呢嘛]?是?(?:不能|不便|不方便|没法|无法|不可以|不会)(?:说|告诉|透露|提供|给)|.{0,2}保密"
)
_BIE_WORDS = frozenset("特区告分个级类性识辨鉴离送")  # 特别, 区别, 告别...: 别 in a word, not "don't"
# Words an annotated phrase may be said with slipped in (按一下门铃 is 按门铃, 敲了门 is 敲门): at most
# GAP_MAX_STRICT of these in a forbidden or private phrase; in a point a reply should convey, GAP_MAX of any
# characters in a phrase of three or more (那您明天下午再打来 conveys 明天再打), these only in a shorter one.
GAP_CHARS = frozenset("1下了个过着好在到给把再就也都")  # 一 is 1 once numerals are digits
GAP_MAX, GAP_MAX_STRICT = 2, 2
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
def marked(text: str) -> tuple[str, tuple[int, ...]]:
    """:func:`canonical` text, and where each of its clauses starts (after punctuation in ``text``)."""
    # numerals first: punctuation still separates 尾号三八六，二十八块 into two numbers
    numbered = _NUMERAL.sub(lambda m: _numeral_value(m.group()), to_simplified(text))
    kept: list[str] = []
    starts, pause = [0], False
    for ch in unicodedata.normalize("NFKC", numbered).lower():  # as normalize_zh(say_numbers=False)
        if unicodedata.category(ch)[0] == "P":
            pause = True
        if ch.isspace() or unicodedata.category(ch)[0] in "PSZC":
            continue
        if pause and kept and starts[-1] != len(kept):
            starts.append(len(kept))
        pause = False
        kept.append(ch)
    return "".join(kept), tuple(starts)


def canonical(text: str) -> str:
    """``normalize_zh`` with numerals as arabic digits: the form phrases are matched in."""
    return marked(text)[0]


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


def _run_starts(hay: tuple[str, ...], needle: tuple[str, ...], misses: int) -> Iterator[int]:
    """Where ``needle`` occurs in ``hay`` with at most ``misses`` syllables wrong (never a digit)."""
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
            yield start


def _gapped(hay: str, needle: str, clause_end: int, start: int, free: int, loose: bool) -> int | None:
    """Where ``needle`` ends if it is said from ``start`` with at most ``free`` words slipped in (see
    :data:`GAP_CHARS`), inside one clause; None if it is not."""
    at = start
    for k, ch in enumerate(needle):
        skipped = 0
        while at < clause_end and hay[at] != ch:
            if k == 0 or skipped >= free or not (hay[at] in GAP_CHARS or (loose and not hay[at].isdigit())):
                return None
            at, skipped = at + 1, skipped + 1
        if at >= clause_end:
            return None
        free -= skipped
        at += 1
    return at


def _spans(text: str, phrase: str, loose: bool, by_sound: bool) -> Iterator[tuple[int, int]]:
    """Every (start, end) in ``canonical(text)`` where ``phrase`` is said: literally, by sound, or (unless
    literal only) with a word or two slipped in."""
    hay, starts = marked(text)
    needle = canonical(phrase)
    if not needle:
        return
    at = hay.find(needle)
    while at >= 0:
        yield at, at + len(needle)
        at = hay.find(needle, at + 1)
    if not by_sound:
        return
    heard, wanted = sounds(text), sounds(phrase)
    if len(wanted) >= 2 and len(heard) == len(hay):  # one syllable per character: positions line up
        misses = 1 if loose and len(wanted) >= LOOSE_MIN_SYLLABLES else 0
        yield from ((s, s + len(wanted)) for s in _run_starts(heard, wanted, misses))
    if len(needle) >= 2 and not any(ch.isdigit() for ch in needle):
        any_gap = loose and len(needle) >= 3  # a shorter point takes only GAP_CHARS (取消 is not 取件消息)
        free = GAP_MAX if any_gap else GAP_MAX_STRICT
        ends = [*starts[1:], len(hay)]
        for begin, end in zip(starts, ends, strict=True):
            for s in range(begin, end):
                if hay[s] == needle[0] and (e := _gapped(hay, needle, end, s, free, any_gap)) is not None:
                    yield s, e


def negated(text: str, start: int, end: int) -> bool:
    """Whether the words ``canonical(text)[start:end]`` are denied in their clause: a negation just before
    (不, 没, 别, 未, 无需, 无法..., with a few words between: 先别取消, 不用再帮您取消) or 不了 just after
    (取消不了).  A question (能不能取消, 要不要), 要不 (how about) and 特别 are not negations."""
    hay, starts = marked(text)
    clause = max(s for s in starts if s <= start)
    ends = [s for s in starts if s > start]
    before, after = hay[clause:start], hay[end : ends[0] if ends else len(hay)]
    if _NEGATED_AFTER.match(after):
        return True
    found = _NEGATION_BEFORE.search(before)
    if found is None:
        return False
    at = found.start()  # the negation word's first character
    prev = before[at - 1] if at > 0 else ""
    nxt = before[found.end("neg")] if found.end("neg") < len(before) else ""
    if found["neg"] == "不" and ((prev == "要" and nxt != "要") or (prev and prev == nxt)):
        return False  # 要不您取消吧 (how about), 能不能取消 (a question)
    return not (found["neg"] == "别" and prev in _BIE_WORDS)


def says(text: str, phrase: str, *, loose: bool = False, by_sound: bool = True) -> bool:
    """Whether ``text`` (heard) says ``phrase``, not denied (:func:`negated`): literally after
    :func:`canonical`, or (unless ``by_sound`` is false) by sound or with a word or two slipped in."""
    return any(not negated(text, s, e) for s, e in _spans(text, phrase, loose, by_sound))


def first_said(
    text: str, phrases: Iterable[str], *, loose: bool = False, by_sound: bool = True
) -> str | None:
    """The first of ``phrases`` that ``text`` says, or None."""
    return next((p for p in phrases if says(text, p, loose=loose, by_sound=by_sound)), None)


def read_out_numbers(text: str) -> list[str]:
    """Digit strings read out one digit at a time (四八三九二七, 4839 27, 三八二，九一六): codes, card and ID
    numbers.

    Numbers said with units (二十八块, 五万元, 十点, 两个) or as times (10:30) are not read out: they are
    amounts and times.  Spaces and dashes between digits never break a run (an ASR may put them between
    slow digits); a comma or a pause mark between runs of two digits or more does not either (a code read
    in groups), but a lone digit is not joined (一下，一会儿).
    """
    folded = unicodedata.normalize("NFKC", to_simplified(text))
    runs: list[tuple[int, int]] = []
    for found in _DIGIT_RUN.finditer(folded):
        s, e = found.span()
        before, after = folded[s - 1 : s], folded[e : e + 1]
        if before in _UNITS_BEFORE or after in _UNITS_AFTER:
            continue
        if (before in _TIME_MARKS and folded[s - 2 : s - 1].isdigit()) or (
            after in _TIME_MARKS and folded[e + 1 : e + 2].isdigit()
        ):
            continue
        runs.append((s, e))
    numbers: list[str] = []
    last_end, last_len = -1, 0
    for s, e in runs:
        gap = folded[last_end:s] if last_end >= 0 else None
        spaced = gap is not None and all(ch.isspace() or ch == "-" for ch in gap)
        grouped = gap is not None and _JOINERS.fullmatch(gap) and last_len >= 2 and e - s >= 2
        digits = "".join(str(_DIGITS.get(ch, ch)) for ch in folded[s:e])
        if numbers and (spaced or grouped):
            numbers[-1] += digits
        else:
            numbers.append(digits)
        last_end, last_len = e, e - s
    return numbers


def asks_question(text: str) -> bool:
    """A question mark, a reply ending in 呢, or a question word (吗, 请问, 能不能, 哪里, 几点...)."""
    if "?" in text or "？" in text or canonical(text).endswith("呢"):
        return True
    return first_said(text, QUESTION_WORDS, by_sound=False) is not None


def closes_call(text: str) -> bool:
    """The reply says goodbye (再见, 拜拜, 挂了, 就这样...)."""
    return first_said(text, GOODBYE, by_sound=False) is not None


def declines(text: str) -> bool:
    """The reply refuses (不能提供, 不需要, 不办理, 请不要再打, 官方渠道...), or denies giving or telling in
    any words (验证码我不能给您, 我不会告诉您的, 这个没法透露)."""
    if first_said(text, DECLINE, by_sound=False) is not None:
        return True
    return any(negated(text, s, e) for verb in GIVING for s, e in _spans(text, verb, False, False))


def repeats_itself(text: str) -> str | None:
    """A stretch said over and over (4+ characters three times, or 8+ twice), or None."""
    s = canonical(text)
    for size, times in ((8, 2), (4, 3)):
        for i in range(len(s) - size + 1):
            piece = s[i : i + size]
            if s.count(piece) >= times:
                return piece
    return None


def repetition(text: str) -> tuple[float, int]:
    """How much of a reply says again what it already said: the share of its character pairs (bigrams)
    that came earlier in it, and how many did.  Whatever the length, plain speech repeats few pairs (the
    bundled references at most 5 %); 好的，我会转告他。好的，我会转告他的。好的好的，我一定转告他。 half."""
    s = canonical(text)
    pairs = [s[i : i + 2] for i in range(len(s) - 1)]
    again = len(pairs) - len(set(pairs))
    return (again / len(pairs) if pairs else 0.0), again


@functools.lru_cache(maxsize=1)
def _chrf_metric() -> Any:
    from sacrebleu.metrics import CHRF

    return CHRF()


def chrf(reply: str, reference: str) -> float:
    """chrF (character n-grams, sacrebleu's defaults; 0-100) of a reply against the reference, on canonical
    text: one signal of how close the wording is, never a score by itself."""
    hyp, ref = canonical(reply), canonical(reference)
    return float(_chrf_metric().sentence_score(hyp, [ref]).score) if hyp and ref else 0.0
