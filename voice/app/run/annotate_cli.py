"""``callsim annotate DIALOGUES``: draft annotations with a chat model, or check what annotations cover.

- ``--judge openai:MODEL [--base-url URL] [--out FILE]``: a model drafts an annotations file
  (:mod:`voice.metrics.scoring.draft`), every entry marked ``"draft": true`` until a person reviews it;
  written atomically, or not at all when an answer is malformed.
- ``--check [--annotations FILE]``: no model; per scored reply, what the checklist judge gives the
  reference reply on each dimension and why, and which dimensions the annotations leave uncovered
  (:mod:`voice.metrics.scoring.coverage`), then a summary line of the gaps.  Exit 0: gaps are facts to
  see, not errors.

Kept apart from :mod:`voice.app.cli` (which registers it) so the command line stays thin.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from voice.errors import ConfigError

DEFAULT_TIMEOUT_S = 120.0


def register(sub: Any) -> None:
    """Add ``annotate`` to the ``callsim`` subcommands."""
    a = sub.add_parser(
        "annotate",
        help="draft a dialogue file's annotations with a chat model, or --check what annotations cover",
        description="With --judge: a model drafts the annotations of every scored reply into an annotations "
        'file, each entry marked "draft": true until reviewed.  With --check: what the checklist judge '
        "scores each reference reply on, and what the annotations leave uncovered.",
    )
    a.add_argument("dialogues", help="a dialogue file (JSONL)")
    a.add_argument("--judge", help="draft with this model: openai:MODEL (any OpenAI-compatible server)")
    a.add_argument("--base-url", help="the model's OpenAI-compatible server (default $OPENAI_BASE_URL)")
    a.add_argument("--out", help="the drafted annotations file (default: DIALOGUES' name .draft.jsonl)")
    a.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds a model request may take before it is retried (default {DEFAULT_TIMEOUT_S:g})",
    )
    a.add_argument("--annotations", help="the annotations to --check, in a file apart from the dialogues")
    a.add_argument("--check", action="store_true", help="score each reference reply and list the gaps")
    a.set_defaults(func=cmd_annotate)


def cmd_annotate(args: argparse.Namespace) -> int:
    if args.check == bool(args.judge):
        raise ConfigError("annotate: give --judge openai:MODEL (draft) or --check (no model), one of them")
    if args.check:
        return check(Path(args.dialogues), args.annotations)
    if args.annotations:
        raise ConfigError("--annotations goes with --check; a draft is written to --out")
    if args.timeout <= 0:
        raise ConfigError(f"--timeout must be more than 0 seconds, got {args.timeout:g}")
    return draft(Path(args.dialogues), args.judge, args.base_url, args.out, args.timeout)


def check(path: Path, annotations: str | None) -> int:
    """Print every reference reply's checklist scores and the gaps; a warning for drafted annotations."""
    from voice.dialogues import load_dialogues
    from voice.dialogues.annotation_file import drafts_warning
    from voice.metrics.scoring.checklist import ChecklistJudge
    from voice.metrics.scoring.coverage import check_dialogues, render_checks

    dialogues = load_dialogues(path, annotations=annotations)
    print(render_checks(list(check_dialogues(ChecklistJudge(), dialogues))))
    if annotations and (warning := drafts_warning(annotations)):
        print(f"callsim: warning: {warning}", file=sys.stderr)
    return 0


def default_out(path: Path) -> Path:
    """``dialogues.jsonl`` → ``dialogues.annotations.draft.jsonl`` next to it."""
    return path.with_name(f"{path.stem}.annotations.draft.jsonl")


def draft(path: Path, judge: str, base_url: str | None, out: str | None, timeout_s: float) -> int:
    """Draft every dialogue's annotations, then write them all at once (atomically), or nothing."""
    from voice.dialogues import AssistantTurn, load_dialogues
    from voice.dialogues.annotations import DialogueAnnotations, TurnAnnotations
    from voice.files import atomic_write_bytes
    from voice.llm.client import LLMClient
    from voice.llm.settings import LLMSettings, parse_model_spec
    from voice.metrics.scoring.draft import draft_entry

    try:
        model = parse_model_spec(judge).model
    except ConfigError as exc:
        raise ConfigError(f"--judge: {exc}") from exc
    target = Path(out) if out else default_out(path)
    if target.exists():
        raise ConfigError(f"--out {target} exists (maybe reviewed): give another --out, or delete it first")
    dialogues = load_dialogues(path)

    def warn(text: str) -> None:
        print(f"callsim: warning: {text}", file=sys.stderr)

    lines: list[str] = []
    settings = LLMSettings(model, base_url=base_url or "", timeout_s=timeout_s)
    with LLMClient(settings) as client:
        for d in dialogues:
            inline = d.annotations != DialogueAnnotations() or any(
                isinstance(t, AssistantTurn) and t.annotations != TurnAnnotations() for t in d.turns
            )
            if inline:
                warn(f"{d.id}: already annotated in {path}: not drafted")
                continue
            entry = draft_entry(client, d, warn)
            if entry is not None:
                lines.append(json.dumps(entry, ensure_ascii=False))
                print(f"{d.id}: drafted {len(entry['turns'])} replies", file=sys.stderr)
    atomic_write_bytes(target, "".join(f"{line}\n" for line in lines).encode("utf-8"))
    print(
        f"{target}: {len(lines)} draft entr{'y' if len(lines) == 1 else 'ies'} by {model}; review each, "
        f'delete its "draft": true, then: callsim annotate {path} --annotations {target} --check'
    )
    return 0
