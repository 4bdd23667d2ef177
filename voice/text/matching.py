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

from voice.text.forms import forms
from voice.text.numbers import arabic

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
    "不用了", "不办理", "不要再打", "别再打", "不会交", "不感兴趣", "官方", "正规", "拒绝", "诈骗", "骗子",
    "报警", "核实",
)  # fmt: skip
# Leaving the caller to work out what happens next (the rubric's 3 for active guidance), and proposing a
# next step (the caller's or the assistant's), which a reply that needs no question still offers.
HANDS_BACK: tuple[str, ...] = (
    "看着办", "自己看吧", "您自己看", "你自己看", "自己决定吧", "自己想办法", "随便您", "随便你",
    "我也不清楚", "我也不知道", "我也没办法", "我也管不了",
)  # fmt: skip
NEXT_STEP: tuple[str, ...] = (
    "我帮您", "我先帮您", "帮您记", "我给您", "我会", "我马上", "我这就", "我去", "我来", "您再", "您先",
    "请您", "麻烦您", "您可以", "您直接", "您稍等", "稍等", "您留", "留个",
    "转告", "转达", "告诉他", "跟他说", "让他", "给您回", "回电", "回个电话", "联系您", "跟您确认", "会确认",
)  # fmt: skip
# Giving or telling, which a refusal denies in any words: 验证码我不能给您, 我不会告诉您, 这个没法透露.
GIVING: tuple[str, ...] = (
    "提供", "透露", "告诉", "给", "说", "念", "报", "发", "转账", "转", "汇", "交", "办理", "操作", "帮",
    "配合", "点", "下载", "登录", "相信", "信",
)  # fmt: skip

# Negation before a phrase, with up to four words or verbs of telling between (先别取消,
# 不用再帮您取消, 明天下午不可以, 我不会说验证码是多少, 不好透露, 不方便说).  Matched within a clause:
# 不，取消吧 is a "no" and then a cancellation.  不是 denies what follows it (不是明天，是今天), and so
# flips a negation back (不是不需要).
_NEGATION_BEFORE = re.compile(
    r"(?P<neg>无需|无须|无法|不必|不是|没|不|别|未|甭|勿|莫)"
    r"(?:[要用必能会可以再先给帮您你他她去急着需有法得好便太跟和向对]|方便|说|告诉|透露|提供){0,4}$"
)
# A "don't" said to someone (别, 不要, 不用...) denies the whole verb phrase after it, its object too:
# 不用找副经理李娜, 别上楼敲门; up to four words, none that starts a new statement (别急我就帮您取消).  Not
# a "don't" about a feeling or a courtesy (别担心, 不用谢, 不要紧), nor 别忘了 (don't forget: do it).
_COMMAND_BEFORE = re.compile(
    r"(?P<neg>不要|不用|无需|无须|不必|别|甭)(?!担心|着急|急|客气|谢|介意|怕|害怕|紧|忘)(?:(?![就才但而我还])\w){0,4}$"
)
# A negation that is itself denied says the thing after all: 不是不需要, 不能不去, 没有不同意.
_DOUBLE = re.compile(r"(?:不是|不会|不能|没有|并非)$")
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
_NEVER_SLIPPED = frozenset("不没别未无非")  # a negation slipped in says the opposite (不是不需要)
_ROUGH, _NUMBER_UNITS = frozenset("多来余几"), frozenset("十百千万点块岁个")
# A point asked for is not stated: 是什么岗位, 住在哪儿 (a question word just before or after it)
_ASKED_BEFORE = re.compile(r"(?:什么|哪个|哪些|哪家|哪|啥|几|多少)个?$")
_ASKED_AFTER = re.compile(r"(?:是|在)?(?:什么|哪|啥|多少)")  # not 几: 明天几点 states 明天


@functools.lru_cache(maxsize=4096)
def marked(text: str) -> tuple[str, tuple[int, ...]]:
    """:func:`canonical` text, and where each of its clauses starts (after punctuation in ``text``)."""
    # numerals first: punctuation still separates 尾号三八六，二十八块 into two numbers
    numbered = arabic(text)
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
            slipped = hay[at] in GAP_CHARS or (loose and not hay[at].isdigit()) or _rough(hay, at)
            if k == 0 or skipped >= free or not slipped or hay[at] in _NEVER_SLIPPED:
                return None
            at, skipped = at + 1, skipped + 1
        if at >= clause_end:
            return None
        free -= skipped
        at += 1
    return at


def _rough(hay: str, at: int) -> bool:
    """Whether ``hay[at]`` makes the number before it rough (十一点多, 三十来万, 十几个, 两百余): a word that
    slips into a phrase without changing what it says (十一点多下手术 says 点下手术)."""
    return hay[at] in _ROUGH and (
        hay[at - 1 : at].isdigit() or (hay[at - 1 : at] in _NUMBER_UNITS and hay[at - 2 : at - 1].isdigit())
    )


def _one_clause(starts: tuple[int, ...], start: int, end: int) -> bool:
    """Whether ``start:end`` lies in one clause (no clause starts inside it)."""
    return not any(start < s < end for s in starts)


def _spans(text: str, phrase: str, loose: bool, by_sound: bool) -> Iterator[tuple[int, int]]:
    """Every (start, end) in ``canonical(text)`` where ``phrase`` is said: literally (or in another of its
    :func:`forms`), by sound, or (unless literal only) with a word or two slipped in."""
    hay, starts = marked(text)
    if not canonical(phrase):
        return
    for needle in forms(canonical(phrase)):
        at = hay.find(needle)
        while at >= 0:
            if _one_clause(starts, at, at + len(needle)):  # 不好说，明天 does not say 说明
                yield at, at + len(needle)
            at = hay.find(needle, at + 1)
    if not by_sound:
        return
    heard, wanted = sounds(text), sounds(phrase)
    if len(wanted) >= 2 and len(heard) == len(hay):  # one syllable per character: positions line up
        misses = 1 if loose and len(wanted) >= LOOSE_MIN_SYLLABLES else 0
        found = ((s, s + len(wanted)) for s in _run_starts(heard, wanted, misses))
        yield from (span for span in found if _one_clause(starts, *span))
    for needle in forms(canonical(phrase)):
        if len(needle) < 2 or any(ch.isdigit() for ch in needle.replace("1下", "")):
            continue
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
    found = _NEGATION_BEFORE.search(before) or _COMMAND_BEFORE.search(before)
    if found is None:
        return False
    at = found.start()  # the negation word's first character
    prev = before[at - 1] if at > 0 else ""
    nxt = before[at + 1 : at + 2]  # 能不能, 用不用, 是不是: the word after 不 is the word before it
    if found["neg"][0] == "不" and ((prev == "要" and nxt != "要") or (prev and prev == nxt)):
        return False  # 要不您取消吧 (how about), 能不能取消, 要不要, 用不用, 是不是 (a question)
    if _DOUBLE.search(before[:at]) and found["neg"] != "不是":
        return False  # 不是不需要: the negation is denied
    return not (found["neg"] == "别" and prev in _BIE_WORDS)


def asked_for(text: str, start: int, end: int) -> bool:
    """Whether the words ``canonical(text)[start:end]`` are asked about, not stated: a question word just
    before (请问是什么岗位) or after (住在哪儿我不能说).  Asking again for a fact does not carry it over, and
    naming what one will not tell does not tell it."""
    hay, starts = marked(text)
    clause = max(s for s in starts if s <= start)
    return bool(_ASKED_BEFORE.search(hay[clause:start]) or _ASKED_AFTER.match(hay[end:]))


def corrected(text: str, start: int, end: int) -> bool:
    """Whether the words ``canonical(text)[start:end]`` are denied only to be corrected: 不在X，在Y or 不是X，
    是Y (with the next clause starting 在, 是, 而是).  The correction says what kind of thing Y is as surely
    as X would have: 不在三楼，在五楼 discloses the floor."""
    hay, starts = marked(text)
    clause = max(s for s in starts if s <= start)
    nxt = [s for s in starts if s > start]
    denial = hay[clause:start].endswith(("不在", "不是")) or (
        hay[start : start + 1] in ("在", "是") and hay[clause:start].endswith("不")
    )
    return denial and bool(nxt) and hay[nxt[0] :].startswith(("在", "是", "而是", "而在"))


def says(text: str, phrase: str, *, loose: bool = False, by_sound: bool = True, stated: bool = False) -> bool:
    """Whether ``text`` (heard) says ``phrase``, not denied (:func:`negated`) nor, if ``stated``, only asked
    about (:func:`asked_for`): literally after :func:`canonical`, or (unless ``by_sound`` is false) by sound
    or with a word or two slipped in."""
    return any(
        not negated(text, s, e) and not (stated and asked_for(text, s, e))
        for s, e in _spans(text, phrase, loose, by_sound)
    )


def denies(text: str, phrase: str, *, loose: bool = False) -> bool:
    """Whether ``text`` says ``phrase`` only to deny it (这单先别取消 for 取消, 不是不需要 for 不需要): heard,
    and every time under a negation."""
    spans = list(_spans(text, phrase, loose, True))
    return bool(spans) and all(negated(text, s, e) for s, e in spans)


def discloses(text: str, phrase: str) -> bool:
    """Whether ``text`` gives away what the private ``phrase`` names: said (by sound, never loosely) and
    not asked about, whether plainly or in a correction after a denial (:func:`corrected`)."""
    return any(
        (not negated(text, s, e) or corrected(text, s, e)) and not asked_for(text, s, e)
        for s, e in _spans(text, phrase, False, True)
    )


def first_said(
    text: str, phrases: Iterable[str], *, loose: bool = False, by_sound: bool = True, stated: bool = False
) -> str | None:
    """The first of ``phrases`` that ``text`` says, or None."""
    return next((p for p in phrases if says(text, p, loose=loose, by_sound=by_sound, stated=stated)), None)


def asks_question(text: str) -> bool:
    """A question mark, a reply ending in 呢, or a question word (吗, 请问, 能不能, 哪里, 几点...)."""
    if "?" in text or "？" in text or canonical(text).endswith("呢"):
        return True
    return first_said(text, QUESTION_WORDS, by_sound=False) is not None


def closes_call(text: str) -> bool:
    """The reply says goodbye (再见, 拜拜, 挂了, 就这样...)."""
    return first_said(text, GOODBYE, by_sound=False) is not None


def hands_back(text: str) -> bool:
    """The reply leaves the caller to work out what happens next (您看着办吧, 您自己看吧, 我也不清楚) and
    proposes nothing: no next step of :data:`NEXT_STEP` (我也不清楚，我帮您问问机主 does guide) and no
    question (我也不知道，您是哪位？)."""
    said = first_said(text, HANDS_BACK, by_sound=False) is not None
    return said and not proposes_next_step(text) and not asks_question(text)


def proposes_next_step(text: str) -> bool:
    """The reply proposes what happens next: asks the caller to do something (您再等一两分钟, 麻烦您) or
    offers to (我先帮您记一下, 我马上转告)."""
    return first_said(text, NEXT_STEP, by_sound=False) is not None


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
