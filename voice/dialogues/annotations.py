"""Annotations on a dialogue: what a good reply conveys or must avoid, read by the offline checklist judge.

They are optional and live in the dialogue file next to what they describe.  On an assistant turn (a reply,
not the opening greeting):

- ``key_points``: what the reply must convey to answer the caller's turn; a list of points, each a list
  of acceptable phrasings (any one of them conveys the point);
- ``context_points``: the same, for facts the reply carries over from earlier in the call or the preset;
- ``must_not``: phrases that contradict the preset or give away what it keeps private;
- ``should_ask``: ``true`` when the reply should ask the caller a question;
- ``should_end``: ``true`` when ending the call after this reply is right (a goodbye, or hanging up on a
  scammer), ``false`` when the caller still needs something (a goodbye or hang-up here abandons them).

On the dialogue: ``private`` (facts that must not be disclosed to this caller, each ``{fact, phrases,
digits}``: phrases that disclose it, and/or a run of at least ``digits`` digits read out, as a
verification code or card number is) and ``scam`` (``true`` when the caller is after money, codes or
personal data: every reply should decline or end the call).

The checks are as strict as the rest of the loader, and a reference reply must satisfy its own
annotations as the checklist judge hears them (:mod:`voice.text.matching`: script, punctuation
and width do not matter, a phrase said denied is not said): it conveys every point and says no forbidden
or private phrase, so the reference scores 5 where it is annotated.  Annotations may also come in a file of
their own (:mod:`voice.dialogues.annotation_file`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Required, TypedDict

from voice.errors import nearest

TURN_KEYS = frozenset({"key_points", "context_points", "must_not", "should_ask", "should_end"})
DIALOGUE_KEYS = frozenset({"private", "scam"})
_PRIVATE_KEYS = frozenset({"fact", "phrases", "digits"})
PHRASE_MAX_CHARS = 16  # a phrasing is a phrase, not a sentence: short phrases survive ASR errors
DIGITS_RANGE = (3, 20)  # a run of this many digits read out discloses a code, a card or an ID number
_SPOKEN = re.compile(r"[\w\u3400-\u9fff]")

Problem = Callable[[str, str], None]  # (field, reason): how a check reports what is wrong


@dataclass(frozen=True)
class TurnAnnotations:
    """What a good reply conveys and avoids; empty tuples and ``None`` mean "not annotated"."""

    key_points: tuple[tuple[str, ...], ...] = ()
    context_points: tuple[tuple[str, ...], ...] = ()
    must_not: tuple[str, ...] = ()
    should_ask: bool | None = None
    should_end: bool | None = None


@dataclass(frozen=True)
class PrivateFact:
    """Something this caller must not learn: said by any of ``phrases``, or read out as ``digits`` digits."""

    fact: str
    phrases: tuple[str, ...] = ()
    digits: int | None = None


@dataclass(frozen=True)
class DialogueAnnotations:
    """What the judge needs to know about the whole call."""

    private: tuple[PrivateFact, ...] = ()
    scam: bool = False


class TurnNotesRow(TypedDict, total=False):
    """An assistant turn's annotations as its line holds them once :func:`check_turn` found no problem."""

    key_points: list[list[str]]
    context_points: list[list[str]]
    must_not: list[str]
    should_ask: bool
    should_end: bool


class PrivateFactRow(TypedDict, total=False):
    """One of ``private`` once checked: phrases, digits or both."""

    fact: Required[str]
    phrases: list[str]
    digits: int


class DialogueNotesRow(TypedDict, total=False):
    """A dialogue's own annotations as its line holds them once :func:`check_dialogue` found no problem."""

    private: list[PrivateFactRow]
    scam: bool


def json_kind(value: Any) -> str:
    """What a decoded JSON value is, in JSON's words (``null``, ``true``, ``a number``, ``text``, ``a list``,
    ``an object``): a problem names what the file holds, never a Python type (``NoneType``, ``dict``)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    noun = "list" if isinstance(value, list) else "object"
    return f"an empty {noun}" if not value else "a list" if noun == "list" else "an object"


def shown(value: Any) -> str:
    """A value as a problem quotes it: text and numbers as they are, anything else by :func:`json_kind`."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    return json_kind(value)


def unknown_key(key: str, allowed: Iterable[str], present: Iterable[str] = ()) -> str:
    """The problem of a key the schema does not have: the nearest allowed one not already there, if any is
    close enough to be a typo of it (:func:`voice.errors.nearest`), then every allowed key."""
    names = sorted(allowed)
    guess = nearest(key, [k for k in names if k not in set(present)])
    return "unknown key" + (f", did you mean {guess!r}?" if guess else "") + f" (allowed: {', '.join(names)})"


def _phrases(value: Any, field: str, add: Problem) -> bool:
    """A non-empty list of short, distinct, spoken phrases; reports what is wrong and says if it was fine."""
    if not isinstance(value, list) or not value:
        add(field, f"must be a non-empty list of phrases, got {shown(value)}")
        return False
    fine = True
    for i, phrase in enumerate(value):
        if not isinstance(phrase, str) or not _SPOKEN.search(phrase):
            add(f"{field}[{i}]", f"must be a phrase with words in it, got {shown(phrase)}")
            fine = False
        elif len(phrase.strip()) > PHRASE_MAX_CHARS:
            add(f"{field}[{i}]", f"must be at most {PHRASE_MAX_CHARS} characters, got {phrase!r}")
            fine = False
        elif phrase in value[:i]:
            add(f"{field}[{i}]", f"{phrase!r} is listed twice")
            fine = False
    return fine


def _points(value: Any, field: str, add: Problem, reference: str) -> None:
    """A non-empty list of points, each a list of phrasings of which the reference says at least one."""
    if not isinstance(value, list) or not value:
        add(field, f"must be a non-empty list of points (each a list of phrasings), got {shown(value)}")
        return
    for i, point in enumerate(value):
        if _phrases(point, f"{field}[{i}]", add) and reference and not _says(reference, point, loose=True):
            add(f"{field}[{i}]", f"the reference reply conveys none of {point}")


def _spoken(value: Any) -> list[str]:
    """The items of a list of phrases, "" for those that are not phrases (already reported)."""
    items = value if isinstance(value, list) else []
    return [p if isinstance(p, str) and _SPOKEN.search(p) else "" for p in items]


def _says(reference: str, phrases: Sequence[str], *, loose: bool = False, actions: bool = True) -> bool:
    """Whether the judge would hear the reference say one of ``phrases``: the checklist's own matching
    (:mod:`voice.text.matching`), so a phrase the reference says only denied (不要敲门 for a
    forbidden 敲门) is not said, and a point it conveys with a word slipped in is conveyed."""
    from voice.text.matching import first_said
    from voice.text.synonyms import expand

    return first_said(reference, expand(phrases) if actions else phrases, loose=loose) is not None


def check_turn(obj: Mapping[str, Any], at: str, add: Problem, *, greeting: bool = False) -> None:
    """Check the annotations of one assistant turn ``obj`` (its other keys are checked elsewhere)."""
    present = sorted(TURN_KEYS & set(obj))
    if greeting:
        for key in present:
            add(f"{at}.{key}", "the opening greeting is not scored: annotate the replies")
        return
    reference = obj["text"] if isinstance(obj.get("text"), str) else ""
    for key in ("key_points", "context_points"):
        if key in obj:
            _points(obj[key], f"{at}.{key}", add, reference)
    if "must_not" in obj:
        _phrases(obj["must_not"], f"{at}.must_not", add)
        for i, phrase in enumerate(_spoken(obj["must_not"])):
            if phrase and reference and _says(reference, [phrase]):
                add(f"{at}.must_not[{i}]", f"the reference reply says {phrase!r}")
    for key in ("should_ask", "should_end"):
        if key in obj and not isinstance(obj[key], bool):
            add(f"{at}.{key}", f"must be true or false, got {shown(obj[key])}")


def check_dialogue(obj: Mapping[str, Any], add: Problem) -> None:
    """Check a dialogue's own annotations; ``private`` phrases are checked against every reference reply."""
    if "scam" in obj and not isinstance(obj["scam"], bool):
        add("scam", f"must be true or false, got {shown(obj['scam'])}")
    if "private" not in obj:
        return
    facts = obj["private"]
    if not isinstance(facts, list) or not facts:
        add("private", f"must be a non-empty list of facts, got {shown(facts)}")
        return
    turns: list[Any] = obj["turns"] if isinstance(obj.get("turns"), list) else []
    replies = [t["text"] for t in turns if isinstance(t, dict) and t.get("role") == "assistant"]
    for at, fact in objects(facts, "private", _PRIVATE_KEYS, add):
        if not isinstance(fact.get("fact"), str) or not fact["fact"].strip():
            add(f"{at}.fact", f"must be a non-empty string naming the fact, got {shown(fact.get('fact'))}")
        if "phrases" not in fact and "digits" not in fact:
            add(at, "needs phrases, digits or both: how a reply would disclose it")
        digits, (lo, hi) = fact.get("digits"), DIGITS_RANGE
        if "digits" in fact and not (type(digits) is int and lo <= digits <= hi):
            add(f"{at}.digits", f"must be an integer in {lo}..{hi}, got {shown(digits)}")
        if "phrases" in fact:
            _phrases(fact["phrases"], f"{at}.phrases", add)
            for j, phrase in enumerate(_spoken(fact["phrases"])):
                said = [
                    r for r in replies if phrase and isinstance(r, str) and _says(r, [phrase], actions=False)
                ]
                if said:
                    add(f"{at}.phrases[{j}]", f"a reference reply discloses it ({phrase!r} in {said[0]!r})")


def objects(
    items: Sequence[Any], field: str, keys: frozenset[str], add: Problem
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each item of a list that must hold objects with only ``keys``, with its field (``private[1]``); an
    item that is not an object is reported and skipped, unknown keys are reported."""
    for i, item in enumerate(items):
        at = f"{field}[{i}]"
        if not isinstance(item, dict):
            add(at, f"must be an object, got {json_kind(item)}")
            continue
        for key in sorted(set(item) - keys):
            add(f"{at}.{key}", unknown_key(key, keys, item))
        yield at, item


def _tuple(value: Sequence[str]) -> tuple[str, ...]:
    return tuple(p.strip() for p in value)


def turn_annotations(obj: TurnNotesRow) -> TurnAnnotations:
    """Build the annotations of an assistant turn that passed :func:`check_turn`."""
    return TurnAnnotations(
        key_points=tuple(_tuple(p) for p in obj.get("key_points", ())),
        context_points=tuple(_tuple(p) for p in obj.get("context_points", ())),
        must_not=_tuple(obj.get("must_not", ())),
        should_ask=obj.get("should_ask"),
        should_end=obj.get("should_end"),
    )


def dialogue_annotations(obj: DialogueNotesRow) -> DialogueAnnotations:
    """Build the annotations of a dialogue that passed :func:`check_dialogue`."""
    private = tuple(
        PrivateFact(f["fact"].strip(), _tuple(f.get("phrases", ())), f.get("digits"))
        for f in obj.get("private", ())
    )
    return DialogueAnnotations(private=private, scam=obj.get("scam", False))
