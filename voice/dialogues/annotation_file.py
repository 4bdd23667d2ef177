"""Annotations kept in a file of their own, merged into the dialogues they describe.

Annotating is a separate job from writing dialogues (and for a blind calibration it must be done by another
hand), so the checklist's annotations (:mod:`voice.dialogues.annotations`) may live apart from the dialogue
file, one JSON object per dialogue:

    {"dialogue": "takeout-regular-01", "private": [...], "scam": false,
     "turns": [{"turn": 0, "key_points": [["门口"]], "must_not": ["下来拿"], "should_end": false}, ...]}

``turn`` is a caller turn's index (0-based, as ``scripts/bench_judge`` and the scores count them): its keys
go on the reference reply that answers that caller turn; ``private`` and ``scam`` (optional) go on the
dialogue.  The rules are those of inline annotations, the reference reply checked against its own, and
every problem is reported as ``annotations.jsonl:LINE: field: reason``.  A dialogue or a reply annotated
both inline and in the file, a dialogue named twice, a caller turn named twice or without a reply after
it, are problems too: one place says what a reply is judged on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from voice.dialogues import annotations as ann
from voice.dialogues.annotations import DialogueAnnotations, TurnAnnotations
from voice.dialogues.records import AssistantTurn, CallerTurn, Dialogue
from voice.errors import DialogueProblem

DRAFT = (
    "draft"  # ``"draft": true`` on a line: drafted by a model (``callsim annotate --judge``), not reviewed
)

ENTRY_KEYS = frozenset({"dialogue", "turns", DRAFT}) | ann.DIALOGUE_KEYS
TURN_ENTRY_KEYS = frozenset({"turn"}) | ann.TURN_KEYS

Add = Callable[[str, str], None]


class _Collector:
    """Collects one line's problems, located to the annotation file's line."""

    def __init__(self, path: str, line: int) -> None:
        self.path, self.line = path, line
        self.problems: list[DialogueProblem] = []

    def __call__(self, field: str, reason: str) -> None:
        self.problems.append(DialogueProblem(self.path, self.line, field, reason))


def _reply_index(dialogue: Dialogue, turn: Any, at: str, add: Add) -> int | None:
    """Where in ``dialogue.turns`` the reply to caller turn ``turn`` is, or None after reporting why."""
    callers = [i for i, t in enumerate(dialogue.turns) if isinstance(t, CallerTurn)]
    if not isinstance(turn, int) or isinstance(turn, bool) or not 0 <= turn < len(callers):
        add(at, f"must be a caller turn index (0..{len(callers) - 1} in {dialogue.id}), got {turn!r}")
        return None
    index = callers[turn] + 1
    if index >= len(dialogue.turns) or not isinstance(dialogue.turns[index], AssistantTurn):
        add(at, f"caller turn {turn} of {dialogue.id} has no reference reply after it to annotate")
        return None
    return index


def _turns(dialogue: Dialogue, entries: Any, add: _Collector) -> dict[int, TurnAnnotations]:
    """The annotations of each reply the entry's ``turns`` name (by index in ``dialogue.turns``)."""
    if not isinstance(entries, list):
        add("turns", f"must be a list of annotated turns, got {entries!r}")
        return {}
    found: dict[int, TurnAnnotations] = {}
    seen: dict[int, str] = {}
    for at, entry in ann.objects(entries, "turns", TURN_ENTRY_KEYS, add):
        if "turn" not in entry:
            add(f"{at}.turn", "missing")
            continue
        index = _reply_index(dialogue, entry["turn"], f"{at}.turn", add)
        if index is None:
            continue
        reply = dialogue.turns[index]
        assert isinstance(reply, AssistantTurn)
        turn = entry["turn"]
        if turn in seen:
            add(f"{at}.turn", f"caller turn {turn} is annotated twice (first in {seen[turn]})")
            continue
        seen[turn] = at
        if reply.annotations != TurnAnnotations():
            add(f"{at}.turn", f"the reply to caller turn {turn} is already annotated in the dialogue file")
            continue
        keys = {k: v for k, v in entry.items() if k in ann.TURN_KEYS}
        before = len(add.problems)
        ann.check_turn({"text": reply.text, **keys}, at, add)
        if len(add.problems) == before:  # checked: the line's annotations are a TurnNotesRow now
            found[index] = ann.turn_annotations(cast(ann.TurnNotesRow, keys))
    return found


def _entry(obj: Any, by_id: dict[str, Dialogue], add: _Collector) -> Dialogue | None:
    """The dialogue ``obj`` annotates with its annotations merged in, or None after reporting why not."""
    if not isinstance(obj, dict):
        add("<root>", f"must be a JSON object, got {type(obj).__name__}")
        return None
    for key in sorted(set(obj) - ENTRY_KEYS):
        add(key, f"unknown key (allowed: {', '.join(sorted(ENTRY_KEYS))})")
    if DRAFT in obj and not isinstance(obj[DRAFT], bool):
        add(DRAFT, f"must be true (a draft not yet reviewed) or left out, got {ann.shown(obj[DRAFT])}")
    did = obj.get("dialogue")
    dialogue = by_id.get(did) if isinstance(did, str) else None
    if dialogue is None:
        add("dialogue", f"no dialogue {did!r} in the dialogues loaded" if "dialogue" in obj else "missing")
        return None
    notes = dialogue.annotations
    if ann.DIALOGUE_KEYS & set(obj):
        if notes != DialogueAnnotations():
            add("dialogue", f"{did} already has private or scam annotations in the dialogue file")
        replies = [{"role": t.role, "text": t.text} for t in dialogue.turns]
        ann.check_dialogue({**{k: obj[k] for k in ann.DIALOGUE_KEYS & set(obj)}, "turns": replies}, add)
    turns = _turns(dialogue, obj.get("turns", []), add)
    if add.problems:
        return None
    if ann.DIALOGUE_KEYS & set(obj):  # checked, as turns were
        notes = ann.dialogue_annotations(cast(ann.DialogueNotesRow, obj))
    merged = tuple(
        replace(t, annotations=turns[i]) if i in turns and isinstance(t, AssistantTurn) else t
        for i, t in enumerate(dialogue.turns)
    )
    return replace(dialogue, turns=merged, annotations=notes)


def check_entry(
    obj: dict[str, Any], dialogue: Dialogue, path: str = "", line: int = 0
) -> list[DialogueProblem]:
    """Every problem of one line's entry ``obj`` for ``dialogue`` (as :func:`apply_annotations` finds them):
    what a drafted entry is checked with before it is written."""
    add = _Collector(path, line)
    _entry(obj, {dialogue.id: dialogue}, add)
    return add.problems


def drafts(path: str | Path) -> list[str]:
    """The dialogues whose line in the annotations file ``path`` is marked ``"draft": true`` (unreviewed);
    a line that cannot be read is left to :func:`apply_annotations` to report."""
    found: list[str] = []
    try:
        lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return found
    for text in lines:
        try:
            obj = json.loads(text) if text.strip() else None
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and obj.get(DRAFT) is True:
            found.append(str(obj.get("dialogue")))
    return found


def drafts_warning(path: str | Path) -> str | None:
    """The warning for an annotations file with unreviewed drafts in it, or None: a score or a validation
    against drafted annotations says it is provisional."""
    found = drafts(path)
    if not found:
        return None
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return (
        f"{path}: {len(found)} entr{'y is an' if len(found) == 1 else 'ies are'} unreviewed draft"
        f'{"" if len(found) == 1 else "s"} ({shown}): review each and delete its "draft": true'
    )


def apply_annotations(
    path: str | Path, dialogues: Sequence[Dialogue]
) -> tuple[list[Dialogue], list[DialogueProblem]]:
    """``dialogues`` with the annotations of the file ``path`` merged in (in their order), and every problem
    of the file (``path:LINE: field: reason``).  A dialogue whose line has a problem is left as it was."""
    name = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else f"not valid UTF-8: {exc.reason}"
        return list(dialogues), [DialogueProblem(name, 0, "<file>", f"cannot read: {why or exc}")]
    by_id = {d.id: d for d in dialogues}
    merged: dict[str, Dialogue] = {}
    first_seen: dict[str, int] = {}
    problems: list[DialogueProblem] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        add = _Collector(name, number)
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            add("<json>", f"invalid JSON: {getattr(exc, 'msg', None) or str(exc).split(';')[0]}")
            problems += add.problems
            continue
        did = obj.get("dialogue") if isinstance(obj, dict) else None
        if isinstance(did, str) and did in first_seen:
            add("dialogue", f"{did} is annotated twice (first on line {first_seen[did]})")
        elif isinstance(did, str):
            first_seen[did] = number
        if not add.problems and (done := _entry(obj, by_id, add)) is not None:
            merged[done.id] = done
        problems += add.problems
    return [merged.get(d.id, d) for d in dialogues], problems
