"""Chinese text normalisation and character error rate (CER), the accuracy measure for Mandarin ASR.

Mandarin is scored per character, not per word, because it is written without spaces.  Both sides are
normalised first so that script (traditional vs simplified), punctuation, width and case never count as
errors: only what was actually said does.
"""

from __future__ import annotations

import re
import unicodedata

from voice.speech.numerals import cardinal, spell
from voice.speech.readings import spoken
from voice.text.script import to_simplified

NORMALISATION = "zh-3"  # names what normalize_zh does; bump it when that changes (cached CERs key on it)


def _is_dropped(ch: str) -> bool:
    # Punctuation (P*), symbols (S*), separators (Z*) and control characters (C*) carry no speech.
    return ch.isspace() or unicodedata.category(ch)[0] in "PSZC"


def normalize_zh(text: str, *, say_numbers: bool = True) -> str:
    """Text reduced to what is spoken: simplified script, no punctuation or whitespace, halfwidth, lowercase,
    numbers in characters.

    NFKC folds fullwidth letters and digits (``Ａ１`` → ``A1``) and compatibility forms; latin is
    lowercased so ``OK`` and ``ok`` match.  Numbers are written as they are said, by the reading the
    caller's voice speaks (:func:`voice.speech.readings.spoken`, latin kept), so an ASR that writes ``9点``
    or ``8:45`` for "九点", "八点四十五" is not charged for it; 两 counts as 二 and 幺 as 一 (``两点`` and
    ``2点`` are both 二点, a phone number's 幺 and 1 the same digit).  ``say_numbers=False`` keeps digits as
    written (for matching, which reads numerals as digits instead).
    """
    simplified = to_simplified(text)
    if say_numbers:
        simplified = spoken(simplified, latin=False).replace("两", "二").replace("幺", "一")
    folded = unicodedata.normalize("NFKC", simplified).lower()
    return "".join(ch for ch in folded if not _is_dropped(ch))


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (substitutions, insertions and deletions all cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer_counts(reference: str, hypothesis: str) -> tuple[int, int]:
    """``(errors, reference_length)`` on normalised text, for summing into a corpus-level CER.

    Corpus CER is ``sum(errors) / sum(reference_length)``, which weights long utterances by their length
    rather than averaging per-utterance ratios.
    """
    ref = normalize_zh(reference)
    hyp = normalize_zh(_LONE_DIGITS.sub(lambda m: _as_the_reference_says(m[0], ref), hypothesis))
    return _edit_distance(ref, hyp), len(ref)


_LONE_DIGITS = re.compile(r"(?<![\d.:,/])\d+(?![\d.:%/,])")


def _as_the_reference_says(digits: str, ref: str) -> str:
    """A number the ASR wrote in digits, read digit by digit or as a number, whichever the reference says.

    The reading of ``3021`` depends on the words before it (取件码 3021 is 三零二一); when the ASR mishears
    those words (曲劫马士3021) it should be charged for them, not again for the digits it heard right.
    """
    for said in (spell(digits), cardinal(digits).replace("两", "二")):
        if said in ref:
            return said
    return digits


def cer(reference: str, hypothesis: str) -> float:
    """Character error rate of ``hypothesis`` against ``reference``, after :func:`normalize_zh`.

    It can exceed 1.0 when the hypothesis inserts many characters.  For an empty reference (e.g. the
    caller only said "……") the rate is 0.0 if nothing was recognised and 1.0 otherwise, so that
    hallucinated text on silence counts as a full error instead of dividing by zero.
    """
    errors, length = cer_counts(reference, hypothesis)
    if length == 0:
        return 0.0 if errors == 0 else 1.0
    return errors / length


_REPEATED = re.compile(r"(.{3,}?)\1+")


def collapse_repeats(text: str) -> str:
    """One copy of a phrase of three or more characters said twice or more in a row.

    Whisper given a short window sometimes loops ("行你等着吧行你等着吧行你等着吧…"); a caller hardly ever
    repeats a whole phrase back to back, so the copies are dropped ("好的好的", two characters, stays).  A
    loop cut off by the token bound ends in part of one more copy ("挂了啊。挂了啊。挂了"): that goes too.
    """
    loops = list(_REPEATED.finditer(text))
    if loops:
        last = loops[-1]
        tail = text[last.end() :]
        if tail and last.group(1).startswith(tail):
            text = text[: last.end()]
    return _REPEATED.sub(r"\1", text)
