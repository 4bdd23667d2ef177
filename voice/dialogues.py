"""CallBench dialogues: frozen records and a strict JSONL loader that reports every problem at once.

A dialogue file holds one JSON object per line.  Each dialogue is a scripted call: the owner's preset, both
parties' goals, and alternating caller/assistant turns, where caller turns may carry timing cues (a pause
before speaking, a barge-in, a mid-turn pause, a backchannel).  The assistant's turns are reference replies,
never played to the assistant under test.

Validation is strict (unknown keys are errors) because a typo such as ``barge_in`` silently dropping a cue
would corrupt a benchmark run without anyone noticing.  All problems are collected, not just the first, so
an author can fix a whole file in one pass.  Coverage counts of a loaded set are in ``voice.dataset_stats``;
the optional annotations the checklist judge reads (key points, forbidden phrases...) in
``voice.annotations``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args

from voice import dialogue_annotations as ann
from voice.dialogue_annotations import DialogueAnnotations, TurnAnnotations
from voice.errors import DialogueError, DialogueProblem

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
_DIALOGUE_KEYS = frozenset(_REQUIRED_KEYS) | ann.DIALOGUE_KEYS
_PRESET_KEYS = frozenset({"type", "text"})
_CALLER_KEYS = frozenset({"role", "text", "pause_before_ms", "barge_in_ms", "pause_inside", "backchannel"})
_ASSISTANT_KEYS = frozenset({"role", "text"}) | ann.TURN_KEYS
_PAUSE_INSIDE_KEYS = frozenset({"after", "ms"})
_BACKCHANNEL_KEYS = frozenset({"text", "at_ms"})
BUNDLED_FILE = "callbench_sample.jsonl"


@dataclass(frozen=True)
class Preset:
    """The owner's explicit instruction; ``text`` is "" when ``type`` is "none"."""

    type: PresetType
    text: str


@dataclass(frozen=True)
class PauseInside:
    """The caller stops after ``after`` for ``ms``, then goes on; the assistant should not take the turn."""

    after: str
    ms: int


@dataclass(frozen=True)
class Backchannel:
    """A short acknowledgement said ``at_ms`` after the onset of the assistant's previous reply."""

    text: str
    at_ms: int


@dataclass(frozen=True)
class CallerTurn:
    """What the simulated caller says, with optional timing cues (all in ms, ``None`` when absent)."""

    text: str
    pause_before_ms: int | None = None
    barge_in_ms: int | None = None
    pause_inside: PauseInside | None = None
    backchannel: Backchannel | None = None

    @property
    def role(self) -> Literal["caller"]:
        return "caller"

    def segments(self) -> tuple[str, ...]:
        """The text as spoken: split in two around a mid-turn pause, else one piece."""
        if self.pause_inside is None:
            return (self.text,)
        cut = len(self.pause_inside.after)
        return (self.text[:cut], self.text[cut:])


@dataclass(frozen=True)
class AssistantTurn:
    """A reference reply: what an excellent assistant would say here (used for scoring, never played)."""

    text: str
    annotations: TurnAnnotations = field(default_factory=TurnAnnotations)

    @property
    def role(self) -> Literal["assistant"]:
        return "assistant"


Turn: TypeAlias = CallerTurn | AssistantTurn


@dataclass(frozen=True)
class Dialogue:
    """One scripted call; ``source``/``line`` locate it in its file for error messages and reports."""

    id: str
    scenario: Scenario
    preset: Preset
    owner_goal: str
    caller_goal: str
    relation: Relation
    turns: tuple[Turn, ...]
    source: str = ""
    line: int = 0
    annotations: DialogueAnnotations = field(default_factory=DialogueAnnotations)

    @property
    def caller_turns(self) -> tuple[CallerTurn, ...]:
        return tuple(t for t in self.turns if isinstance(t, CallerTurn))

    @property
    def assistant_turns(self) -> tuple[AssistantTurn, ...]:
        return tuple(t for t in self.turns if isinstance(t, AssistantTurn))

    def previous_assistant(self, index: int) -> AssistantTurn | None:
        """The assistant turn right before ``turns[index]`` (what a barge-in or backchannel overlaps)."""
        if index > 0 and isinstance(prev := self.turns[index - 1], AssistantTurn):
            return prev
        return None

    def assistant_view(self) -> dict[str, Any]:
        """Only what the assistant under test may know; the caller's goal would leak the answer key."""
        return {
            "id": self.id,
            "scenario": self.scenario,
            "preset": {"type": self.preset.type, "text": self.preset.text},
            "owner_goal": self.owner_goal,
        }


class _Checker:
    """Collects the problems of one dialogue object; checks never stop at the first problem."""

    def __init__(self, path: str, line: int) -> None:
        self.path = path
        self.line = line
        self.problems: list[DialogueProblem] = []

    def add(self, field: str, reason: str) -> None:
        self.problems.append(DialogueProblem(self.path, self.line, field, reason))

    def keys(self, obj: Mapping[str, Any], allowed: frozenset[str], required: Iterable[str], at: str) -> None:
        prefix = f"{at}." if at else ""
        for key in sorted(set(obj) - allowed):
            self.add(f"{prefix}{key}", f"unknown key (allowed: {', '.join(sorted(allowed))})")
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
            self.add(field, f"must be a non-empty string, got {value!r}")
        elif cjk and not _CJK.search(value):
            self.add(field, f"must contain Chinese characters, got {value!r}")
        elif max_len and len(value.strip()) > max_len:
            self.add(field, f"must be at most {max_len} characters, got {value!r}")

    def enum(self, obj: Mapping[str, Any], key: str, allowed: tuple[str, ...], field: str) -> None:
        if key in obj and obj[key] not in allowed:
            self.add(field, f"must be one of {', '.join(allowed)}, got {obj[key]!r}")

    def ms(self, obj: Mapping[str, Any], key: str, bounds: tuple[int, int], field: str) -> None:
        if key not in obj:
            return
        value, (lo, hi) = obj[key], bounds
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(field, f"must be an integer number of ms, got {value!r}")
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
            self.add(field, f"must be an object, got {type(value).__name__}")
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


def check_caller_turn(obj: Mapping[str, Any], source: str, at: str) -> list[DialogueProblem]:
    """The problems of one caller turn object (text and cues, same bounds as a file): for generated turns."""
    c = _Checker(source, 0)
    c.keys(obj, _CALLER_KEYS, ["text"], at)
    c.text(obj, "text", f"{at}.text", cjk=True)
    _check_caller(c, dict(obj), at, first=False)
    return c.problems


def _check_turns(c: _Checker, turns: Any) -> None:
    if not isinstance(turns, list) or not turns:
        c.add("turns", "must be a non-empty list of turns")
        return
    prev_role: Any = None
    for i, turn in enumerate(turns):
        at = f"turns[{i}]"
        if not isinstance(turn, dict):
            c.add(at, f"must be an object, got {type(turn).__name__}")
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
        elif role == "assistant":
            ann.check_turn(turn, at, c.add, greeting=i == 0)
        prev_role = role
    if not any(isinstance(t, dict) and t.get("role") == "caller" for t in turns):
        c.add("turns", "needs at least one caller turn")


def _build(obj: dict[str, Any], path: str, line: int) -> Dialogue:
    """Construct a Dialogue from an object that passed every check (so indexing cannot fail)."""
    turns: list[Turn] = []
    for t in obj["turns"]:
        if t["role"] == "assistant":
            turns.append(AssistantTurn(t["text"], ann.turn_annotations(t)))
            continue
        pause = (
            PauseInside(t["pause_inside"]["after"], t["pause_inside"]["ms"]) if "pause_inside" in t else None
        )
        bc = (
            Backchannel(t["backchannel"]["text"].strip(), t["backchannel"]["at_ms"])
            if "backchannel" in t
            else None
        )
        turns.append(CallerTurn(t["text"], t.get("pause_before_ms"), t.get("barge_in_ms"), pause, bc))
    preset = Preset(obj["preset"]["type"], obj["preset"].get("text") or "")
    fields = {k: obj[k] for k in ("id", "scenario", "owner_goal", "caller_goal", "relation")}
    notes = ann.dialogue_annotations(obj)
    return Dialogue(**fields, preset=preset, turns=tuple(turns), source=path, line=line, annotations=notes)


def _check_dialogue(obj: Any, path: str, line: int) -> tuple[Dialogue | None, list[DialogueProblem]]:
    c = _Checker(path, line)
    if not isinstance(obj, dict):
        c.add("<root>", f"must be a JSON object, got {type(obj).__name__}")
        return None, c.problems
    c.keys(obj, _DIALOGUE_KEYS, _REQUIRED_KEYS, "")
    c.text(obj, "id", "id")
    if isinstance(obj.get("id"), str) and obj["id"].strip() and not ID_PATTERN.match(obj["id"]):
        c.add("id", f"must match {ID_PATTERN.pattern}, got {obj['id']!r}")
    c.enum(obj, "scenario", SCENARIOS, "scenario")
    c.enum(obj, "relation", RELATIONS, "relation")
    _check_preset(c, obj)
    c.text(obj, "owner_goal", "owner_goal")
    c.text(obj, "caller_goal", "caller_goal")
    if "turns" in obj:
        _check_turns(c, obj["turns"])
    ann.check_dialogue(obj, c.add)
    return (None, c.problems) if c.problems else (_build(obj, path, line), [])


def parse_dialogue(obj: Any, path: str | Path = "<memory>", line: int = 0) -> Dialogue:
    """Validate one decoded JSON object; raises DialogueError listing every problem found in it."""
    dialogue, problems = _check_dialogue(obj, str(path), line)
    if dialogue is None:
        raise DialogueError(problems)
    return dialogue


def _scan(path: str | Path) -> tuple[list[Dialogue], list[DialogueProblem]]:
    """Parse a whole file, collecting dialogues and problems (decoding, JSON, schema, duplicate ids)."""
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return [], [DialogueProblem(name, 0, "<file>", f"cannot read: {exc.strerror or exc}")]
    dialogues: list[Dialogue] = []
    problems: list[DialogueProblem] = []
    first_seen: dict[str, int] = {}

    def bad(number: int, field: str, reason: str) -> None:
        problems.append(DialogueProblem(name, number, field, reason))

    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        try:
            text = chunk.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            bad(number, "<line>", f"not valid UTF-8: {exc.reason}")
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            bad(number, "<json>", f"invalid JSON: {exc.msg} (col {exc.colno})")
            continue
        dialogue, found = _check_dialogue(obj, name, number)
        problems.extend(found)
        did = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(did, str) and did in first_seen:
            bad(number, "id", f"duplicate id {did!r} (first on line {first_seen[did]})")
            continue
        if isinstance(did, str) and did:
            first_seen[did] = number
        if dialogue is not None:
            dialogues.append(dialogue)
    if not dialogues and not problems:
        problems.append(DialogueProblem(name, 0, "<file>", "no dialogues"))
    return dialogues, problems


def validate_file(path: str | Path) -> list[DialogueProblem]:
    """Every problem in the file, in line order; an empty list means it loads cleanly.  Never raises."""
    return _scan(path)[1]


def load_dialogues(path: str | Path) -> list[Dialogue]:
    """All dialogues of a JSONL file, in file order; raises one DialogueError carrying every problem."""
    dialogues, problems = _scan(path)
    if problems:
        raise DialogueError(problems)
    return dialogues


def bundled_dialogues_path() -> Path:
    """The sample set shipped as package data, so a fresh install can run a call without any download."""
    return Path(str(files("voice").joinpath("data", BUNDLED_FILE)))
