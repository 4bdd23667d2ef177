"""CallBench dialogues: a strict JSONL loader that reports every problem at once.

A dialogue file holds one JSON object per line, read into the frozen records of
:mod:`voice.dialogues.records` (importable from here too), with a file of annotations merged in if one is
given (:mod:`voice.dialogues.annotation_file`).  Each dialogue is a scripted call: the owner's preset, both
parties' goals, and alternating caller/assistant turns, where caller turns may carry timing cues (a pause
before speaking, a barge-in, a mid-turn pause, a backchannel).  The assistant's turns are reference replies,
never played to the assistant under test.

Validation (:mod:`voice.dialogues.validation`) is strict and collects every problem of a file; it catches
everything that would break a call later (file-name-safe ids, valid Unicode, sane sizes, speakable text).
Decoding a line never raises: JSON nested too deep or with a number too long is a located problem too.
Coverage counts of a loaded set are in ``voice.dialogues.stats``;
the optional annotations the checklist judge reads (key points, forbidden phrases...) in
:mod:`voice.dialogues.annotations`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

from voice.dialogues import annotations as ann
from voice.dialogues.annotation_file import apply_annotations
from voice.dialogues.records import (
    AssistantTurn,
    Backchannel,
    CallerTurn,
    Dialogue,
    PauseInside,
    Preset,
    Turn,
)
from voice.dialogues.rows import DialogueRow
from voice.dialogues.validation import MAX_LINE_BYTES, VoiceCheck, check_dialogue_object
from voice.errors import FILE, DialogueError, DialogueProblem

BUNDLED_FILE = "callbench_sample.jsonl"


def _build(obj: DialogueRow, path: str, line: int) -> Dialogue:
    """Construct a Dialogue from a line that passed every check (so indexing cannot fail)."""
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
    return Dialogue(
        id=obj["id"],
        scenario=obj["scenario"],
        preset=Preset(obj["preset"]["type"], obj["preset"].get("text") or ""),
        owner_goal=obj["owner_goal"],
        caller_goal=obj["caller_goal"],
        relation=obj["relation"],
        turns=tuple(turns),
        source=path,
        line=line,
        annotations=ann.dialogue_annotations(obj),
        caller_voice=obj.get("caller_voice"),
        caller_sex=obj.get("caller_sex"),
    )


def _check_dialogue(
    obj: Any, path: str, line: int, voice: VoiceCheck | None = None
) -> tuple[Dialogue | None, list[DialogueProblem]]:
    problems = check_dialogue_object(obj, path, line, voice)
    return (None, problems) if problems else (_build(cast(DialogueRow, obj), path, line), [])


def parse_dialogue(obj: Any, path: str | Path = "<memory>", line: int = 0) -> Dialogue:
    """Validate one decoded JSON object; raises DialogueError listing every problem found in it."""
    dialogue, problems = _check_dialogue(obj, str(path), line)
    if dialogue is None:
        raise DialogueError(problems)
    return dialogue


_UNDECODABLE = object()
_JSON_SPACE = re.compile(r"[ \t\n\r]*")  # what JSON allows between values


def _decode(text: str, bad: Callable[[str, str], None]) -> Any:
    """One line's JSON, or :data:`_UNDECODABLE` after reporting why (the json module's limits included:
    nesting that exhausts its recursion, an integer of more than 4,300 digits)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        bad("<json>", f"invalid JSON: {exc.msg} (col {exc.colno})")
    except RecursionError:
        bad("<json>", "invalid JSON: nested too deeply to decode")
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion..."
        bad("<json>", f"invalid JSON: {str(exc).split(';')[0]}")
    return _UNDECODABLE


def _scan(path: str | Path, voice: VoiceCheck | None = None) -> tuple[list[Dialogue], list[DialogueProblem]]:
    """Parse a whole file, collecting dialogues and problems (decoding, JSON, schema, duplicate ids, and
    with ``voice``, caller lines that voice cannot speak)."""
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return [], [DialogueProblem(name, 0, FILE, f"cannot read: {exc.strerror or exc}")]
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
        if len(chunk) > MAX_LINE_BYTES:
            bad(number, "<line>", f"longer than {MAX_LINE_BYTES:,} bytes ({len(chunk):,}); not a dialogue")
            continue
        if (obj := _decode(text, functools.partial(bad, number))) is _UNDECODABLE:
            continue
        dialogue, found = _check_dialogue(obj, name, number, voice)
        problems.extend(found)
        did = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(did, str) and did in first_seen:
            bad(number, "id", f"duplicate id {did!r} (first on line {first_seen[did]})")
            continue
        if isinstance(did, str) and did:
            first_seen[did] = number
        if dialogue is not None:
            dialogues.append(dialogue)
    if any(p.field == "<json>" for p in problems):  # one pretty-printed object is not 79 broken lines
        if spread := _spread_json(raw):
            problems = [_spread_problem(name, spread)] + [p for p in problems if not _within(p.line, spread)]
        elif not dialogues and (broken := _broken_spread(name, raw, problems)) is not None:
            problems = [broken]
    if not dialogues and not problems:
        problems.append(DialogueProblem(name, 0, FILE, "no dialogues"))
    return dialogues, problems


def _spread_json(raw: bytes) -> list[tuple[int, int, Any]]:
    """The JSON values of a file that holds nothing else, as ``(first line, last line, value)``, if any of
    them is written over several lines (pretty-printed); [] otherwise (a JSONL file, or not JSON at all)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return []
    decoder, out, at, line = json.JSONDecoder(), [], 0, 1
    while (start := _JSON_SPACE.match(text, at).end()) < len(text):  # type: ignore[union-attr]
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            return []
        line += text.count("\n", at, start)
        out.append((line, line + text.count("\n", start, end), value))
        at, line = end, out[-1][1]
    return out if any(first < last for first, last, _ in out) else []


def _within(line: int, spread: list[tuple[int, int, Any]]) -> bool:
    return any(first <= line <= last for first, last, _ in spread if first < last)


def _spread_problem(name: str, spread: list[tuple[int, int, Any]]) -> DialogueProblem:
    """The one problem of JSON written over several lines: where, and the command that makes it JSONL."""
    multi = [(first, last, value) for first, last, value in spread if first < last]
    what = ", ".join(
        f"{'an array' if isinstance(value, list) else 'an object'} over lines {first}-{last}"
        for first, last, value in multi[:3]
    ) + (f" and {len(multi) - 3} more" if len(multi) > 3 else "")
    array = any(isinstance(v, list) for _, _, v in multi)
    fix = f"jq -c '{'.[]' if array else '.'}' {name} > fixed.jsonl"
    return DialogueProblem(
        name,
        0,
        FILE,
        f"JSON written over several lines ({what}): a dialogue file is JSONL, one dialogue "
        f"object per line; `{fix}` rewrites it so",
    )


def _broken_spread(name: str, raw: bytes, problems: list[DialogueProblem]) -> DialogueProblem | None:
    """A file no line of which is an object, opened like pretty-printed JSON (a lone ``{`` or ``[``) that does
    not parse as a whole either: one problem, where it breaks (None: not such a file)."""
    text = raw.decode("utf-8-sig", errors="replace")
    opening = text.lstrip().split("\n", 1)[0].strip()
    pieces = all(p.field in ("<json>", "<root>") for p in problems)  # lines that are no object, or no JSON
    if len(problems) < 2 or opening not in ("{", "[", "[{") or not pieces:
        return None
    try:
        json.loads(text)
        return None
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno}, col {exc.colno}"
    except (ValueError, RecursionError):
        where = "it does not parse"
    return DialogueProblem(
        name,
        0,
        FILE,
        f"JSON written over several lines, and broken ({where}): a dialogue file is JSONL, one "
        "dialogue object per line",
    )


def _annotated(
    path: str | Path, voice: VoiceCheck | None, annotations: str | Path | None
) -> tuple[list[Dialogue], list[DialogueProblem]]:
    """:func:`_scan`, then the annotations of a separate file merged in (:mod:`.annotation_file`)."""
    dialogues, problems = _scan(path, voice)
    if annotations is None:
        return dialogues, problems
    dialogues, more = apply_annotations(annotations, dialogues)
    return dialogues, [*problems, *more]


def validate_file(
    path: str | Path, voice: VoiceCheck | None = None, annotations: str | Path | None = None
) -> list[DialogueProblem]:
    """Every problem in the file, in line order; an empty list means it loads cleanly.  Never raises.

    ``voice`` also refuses the caller lines that voice cannot speak (:func:`voice.speech.tts.voice_check`);
    ``annotations``, a file of annotations for these dialogues, is checked too (its problems come after).
    """
    return _annotated(path, voice, annotations)[1]


def load_dialogues(
    path: str | Path, voice: VoiceCheck | None = None, annotations: str | Path | None = None
) -> list[Dialogue]:
    """All dialogues of a JSONL file, in file order, with the annotations of the file ``annotations`` (if
    given) merged in; raises one DialogueError carrying every problem."""
    dialogues, problems = _annotated(path, voice, annotations)
    if problems:
        raise DialogueError(problems)
    return dialogues


def bundled_dialogues_path() -> Path:
    """The sample set shipped as package data, so a fresh install can run a call without any download."""
    return Path(str(files("voice").joinpath("data", BUNDLED_FILE)))
