"""What a reply gives away of the call's private facts (:class:`voice.dialogue_annotations.PrivateFact`).

A fact leaks three ways, whatever the words around it:

- one of its phrases said, as :func:`voice.text.matching.discloses` hears it: not denied nor only
  asked about (住在哪儿我不能说 keeps the address), but a denial that is only there to correct itself still
  tells (不在三楼，在五楼 gives the floor);
- a number read out digit by digit, in groups or in numerals, as long as the fact's ``digits`` (三八二，九一六
  is six digits: :func:`voice.text.numbers.read_out_numbers`);
- for a fact about money (a salary, income, savings: its name or phrases say so), any sum of money the
  reply states, exact or rough (三十来万, 一万出头): the annotator cannot list every figure, and any figure
  gives it away.  A sum said in a clause that speaks to the caller (您那边五十万, 你们给的), or one the
  caller named, is the caller's own figure echoed, not the owner's.
"""

from __future__ import annotations

import re

from voice.dialogue_annotations import DialogueAnnotations, PrivateFact
from voice.text import matching as m
from voice.text.numbers import amounts, arabic, read_out_numbers

# what names a fact about money (the fact's name or one of its phrases)
MONEY_WORDS: tuple[str, ...] = ("薪", "工资", "收入", "挣", "赚", "存款", "余额", "钱")
_CLAUSES = re.compile(r"[^，。！？,.!?；;、…\s]+")
_TO_CALLER = ("您", "你")


def about_money(fact: PrivateFact) -> bool:
    """Whether the fact is a sum of money: its name or a phrase holds a word of :data:`MONEY_WORDS`."""
    return any(w in text for text in (fact.fact, *fact.phrases) for w in MONEY_WORDS)


def stated_amount(text: str, caller: str = "") -> str | None:
    """The first sum of money ``text`` states in a clause that does not speak to the caller, other than
    one the caller said (``caller``: the caller's words in the call), or None."""
    theirs = {arabic(words) for _, words in amounts(caller)}
    for clause in _CLAUSES.findall(text):
        if any(w in clause for w in _TO_CALLER):
            continue
        found = [words for _, words in amounts(clause) if arabic(words) not in theirs]
        if found:
            return found[0]
    return None


def disclosure(text: str, notes: DialogueAnnotations, caller: str = "") -> str | None:
    """What private fact ``text`` gives away, and how, or None; ``caller`` is what the caller said in the
    call (a sum the caller named is theirs to hear again)."""
    for fact in notes.private:
        if (said := next((p for p in fact.phrases if m.discloses(text, p)), None)) is not None:
            return f"discloses {fact.fact} ({said!r})"
        numbers = [x for x in read_out_numbers(text) if fact.digits and len(x) >= fact.digits]
        if numbers:
            return f"reads out a {len(numbers[0])}-digit number: discloses {fact.fact}"
        if about_money(fact) and (amount := stated_amount(text, caller)) is not None:
            return f"states a sum ({amount!r}): discloses {fact.fact}"
    return None
