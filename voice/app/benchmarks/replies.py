"""Replies files, read and checked, and a reply put in place of a reference: what the bundled judge benchmark
(:mod:`voice.app.benchmarks.judge`, ``bad_replies.jsonl``) and the blind one
(:mod:`voice.app.benchmarks.judge_blind`, a blind folder's ``replies.jsonl``) share.

Both read the same kind of file, one reply per line against a dialogue's caller turn, so the reading lives
here, below both: ``judge`` runs the blind benchmark for ``--blind``, and neither imports the other back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from voice.dialogues import Dialogue
from voice.errors import DialogueProblem
from voice.metrics.scoring.vocabulary import JUDGED, ScoringInput

DATA = Path(__file__).resolve().parents[2] / "data"  # where the replies files and the blind sets ship

Bad = Callable[[str, str], None]  # (field, reason) of the line being read


class Rows:
    """A replies file read line by line: each JSON object line with a problem reporter bound to it, the
    problems (``path:line: field: reason``) collected in :attr:`problems`.  A line that is not a JSON
    object is reported and skipped; unknown keys are reported; what is required is the reader's business."""

    def __init__(self, path: str | Path, keys: frozenset[str]) -> None:
        self.path, self.keys = Path(path), keys
        self.problems: list[DialogueProblem] = []

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any], Bad]]:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue

            def bad(field: str, reason: str, number: int = number) -> None:
                self.problems.append(DialogueProblem(str(self.path), number, field, reason))

            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                bad("<json>", f"invalid JSON: {exc.msg} (col {exc.colno})")
                continue
            if not isinstance(obj, dict):
                bad("<root>", f"must be a JSON object, got {type(obj).__name__}")
                continue
            for key in sorted(set(obj) - self.keys):
                bad(key, f"unknown key (allowed: {', '.join(sorted(self.keys))})")
            yield number, obj, bad


def check_reply_row(obj: dict[str, Any], by_id: dict[str, Dialogue], bad: Bad) -> None:
    """What every replies file checks of a row: its dialogue, the caller turn it answers, its texts."""
    for key in ("reply", "why"):
        if key in obj and (not isinstance(obj[key], str) or not obj[key].strip()):
            bad(key, f"must be a non-empty string, got {obj[key]!r}")
    if "fails" in obj and obj["fails"] not in JUDGED:
        bad("fails", f"must be one of {', '.join(JUDGED)}, got {obj['fails']!r}")
    did = obj.get("dialogue")
    dialogue = by_id.get(did) if isinstance(did, str) else None
    if "dialogue" in obj and dialogue is None:
        bad("dialogue", f"no dialogue {obj['dialogue']!r} in the dialogues loaded")
    turn = obj.get("turn")
    if "turn" in obj and (not isinstance(turn, int) or isinstance(turn, bool) or turn < 0):
        bad("turn", f"must be a caller turn index (0, 1, ...), got {turn!r}")
    elif dialogue is not None and isinstance(turn, int) and turn >= len(dialogue.caller_turns):
        bad("turn", f"{dialogue.id} has {len(dialogue.caller_turns)} caller turns, got {turn}")


def with_reply(call: ScoringInput, turn: int, reply: str) -> ScoringInput:
    """``call`` with the caller having heard ``reply`` in caller turn ``turn`` instead."""
    turns = [replace(t, heard=reply) if t.turn == turn else t for t in call.turns]
    return replace(call, call_id=f"{call.call_id}#bad{turn}", turns=turns)
