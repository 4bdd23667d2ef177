"""How well a judge separates good replies from bad ones (``scripts/bench_judge``).

Every dialogue's reference replies are scored as if the caller had heard them word for word; then each
deliberately bad reply of ``voice/data/bad_replies.jsonl`` is put in place of its turn's reference (the rest
of the call unchanged) and scored again.  A bad reply names the dimension it should fail (it leaks the
verification code, contradicts the emergent preset, ignores the caller's question, answers a wrong number
as if it were the owner's contact, rambles...).  Printed per judged dimension: the mean score of the
references, the mean of the bad replies meant to fail it next to their own references, and how often a bad
reply is ranked above (or level with) its reference.  Dialogue rhythm is a timing score, not judged from
text, so it is not in the table.

The dialogues are the bundled sample set plus ``voice/data/calibration_dialogues.jsonl``: calls the sample
set lacks that calibration needs (wrong numbers).  Any :class:`~voice.metrics.scoring.vocabulary.Judge` can be
measured; ``--judge checklist`` (the offline checklist judge) is the one there is for now.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import TypedDict

from voice.app.benchmarks import judge_blind as blind
from voice.app.benchmarks.replies import DATA, Rows, check_reply_row, with_reply
from voice.app.run.provenance import bench_provenance
from voice.dialogues import Dialogue, bundled_dialogues_path, load_dialogues
from voice.errors import ConfigError, DialogueError
from voice.metrics.scoring.coverage import reference_call
from voice.metrics.scoring.judges import make_judge
from voice.metrics.scoring.vocabulary import JUDGED, Judge, TurnScore

_BAD_KEYS = frozenset({"dialogue", "turn", "reply", "fails", "why"})


def calibration_dialogues_path() -> Path:
    return DATA / "calibration_dialogues.jsonl"


def bad_replies_path() -> Path:
    return DATA / "bad_replies.jsonl"


@dataclass(frozen=True)
class BadReply:
    """A reply that should score low on ``fails``, in place of the reference reply to caller turn ``turn``."""

    dialogue: str
    turn: int  # caller turn index (0-based), as in HeardTurn.turn
    reply: str
    fails: str  # the judged dimension it must fail
    why: str  # what is wrong with it, in a few words
    line: int = 0


def load_bad_replies(path: str | Path, dialogues: Sequence[Dialogue]) -> list[BadReply]:
    """Every bad reply of a JSONL file; raises DialogueError with every problem (file:line: field: reason)."""
    by_id = {d.id: d for d in dialogues}
    found: list[BadReply] = []
    rows = Rows(path, _BAD_KEYS)
    for number, obj, bad in rows:
        before = len(rows.problems)
        for key in sorted(_BAD_KEYS - set(obj)):
            bad(key, "missing")
        check_reply_row(obj, by_id, bad)
        if len(rows.problems) == before:
            did, turn, reply, fails, why = (obj[k] for k in ("dialogue", "turn", "reply", "fails", "why"))
            found.append(BadReply(did, turn, reply, fails, why, number))
    if rows.problems:
        raise DialogueError(rows.problems)
    return found


class BadScored(TypedDict):
    """A bad reply's score on the dimension it should fail, next to its reference's (``--verbose``)."""

    dialogue: str
    turn: int
    fails: str
    why: str
    reply: str
    score: int | None
    reason: str
    reference_score: int | None


class Separated(TypedDict):
    """One judged dimension: the references' scores, and the bad replies meant to fail it against theirs."""

    reference_turns: int
    reference_scored: int
    reference_mean: float | None
    bad_replies: int
    bad_scored: int
    bad_mean: float | None
    paired_reference_mean: float | None
    bad_above_reference: int
    bad_level_with_reference: int


class Separation(TypedDict):
    """What :func:`separation` finds (printed as a table, or as JSON with ``--json``)."""

    judge: str
    dialogues: int
    reference_turns: int
    bad_replies: int
    dimensions: dict[str, Separated]
    bad: list[BadScored]


class BlindSets(TypedDict):
    """``--blind`` over several sets: each set's figures, and the worst of them."""

    sets: dict[str, blind.Calibration]
    worst: blind.Worst


def _turn(scores: list[TurnScore], turn: int) -> TurnScore:
    return next(s for s in scores if s.turn == turn)


def separation(judge: Judge, dialogues: Sequence[Dialogue], bad: Sequence[BadReply]) -> Separation:
    """Reference and bad-reply scores per judged dimension, and how often a bad reply outranks its own."""
    by_id = {d.id: d for d in dialogues}
    references = {d.id: judge.judge_call(reference_call(d)).turns for d in dialogues}
    rows: list[BadScored] = []
    for b in bad:
        call = reference_call(by_id[b.dialogue])
        mine = _turn(judge.judge_call(with_reply(call, b.turn, b.reply)).turns, b.turn).scores[b.fails]
        theirs = _turn(references[b.dialogue], b.turn).scores[b.fails]
        rows.append(
            {"dialogue": b.dialogue, "turn": b.turn, "fails": b.fails, "why": b.why, "reply": b.reply,
             "score": mine.score, "reason": mine.reason, "reference_score": theirs.score}
        )  # fmt: skip
    dimensions: dict[str, Separated] = {}
    for dim in JUDGED:
        ref_scores = [s.scores[dim].score for ts in references.values() for s in ts]
        scored_refs = [x for x in ref_scores if x is not None]
        mine_rows = [r for r in rows if r["fails"] == dim]
        both = [(r["score"], r["reference_score"]) for r in mine_rows]
        pairs = [(b, r) for b, r in both if b is not None and r is not None]
        dimensions[dim] = {
            "reference_turns": len(ref_scores),
            "reference_scored": len(scored_refs),
            "reference_mean": fmean(scored_refs) if scored_refs else None,
            "bad_replies": len(mine_rows),
            "bad_scored": len(pairs),
            "bad_mean": fmean(b for b, _ in pairs) if pairs else None,
            "paired_reference_mean": fmean(r for _, r in pairs) if pairs else None,
            "bad_above_reference": sum(b > r for b, r in pairs),
            "bad_level_with_reference": sum(b == r for b, r in pairs),
        }
    return {
        "judge": judge.name,
        "dialogues": len(dialogues),
        "reference_turns": sum(len(ts) for ts in references.values()),
        "bad_replies": len(bad),
        "dimensions": dimensions,
        "bad": rows,
    }


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def render(result: Separation, verbose: bool = False) -> str:
    lines = [
        f"judge {result['judge']}: {result['dialogues']} dialogues, {result['reference_turns']} reference "
        f"turns, {result['bad_replies']} bad replies",
        f"{'dimension':<24}{'refs scored':>12}{'ref mean':>10}{'bad':>6}{'bad mean':>10}{'its refs':>10}"
        f"{'bad > ref':>11}{'bad = ref':>11}",
    ]
    for dim, d in result["dimensions"].items():
        pairs = d["bad_scored"]
        lines.append(
            f"{dim:<24}{d['reference_scored']:>5}/{d['reference_turns']:<6}{_f(d['reference_mean']):>10}"
            f"{pairs:>3}/{d['bad_replies']:<2}{_f(d['bad_mean']):>10}{_f(d['paired_reference_mean']):>10}"
            f"{d['bad_above_reference']:>7}/{pairs:<3}{d['bad_level_with_reference']:>7}/{pairs:<3}"
        )
    lines.append("dialogue_rhythm: a timing score, not judged from text (not in this table)")
    if verbose:
        for r in result["bad"]:
            lines.append(f"  {r['dialogue']} turn {r['turn']} {r['fails']}: {r['score']} (reference "
                         f"{r['reference_score']}) {r['why']}: {r['reason']}")  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/bench_judge", description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", default="checklist", help="checklist (default)")
    p.add_argument(
        "--dialogues",
        action="append",
        type=Path,
        help="dialogue file (repeatable); default: the bundled set and the calibration dialogues",
    )
    p.add_argument("--bad-replies", type=Path, default=bad_replies_path())
    p.add_argument("--annotations", type=Path, help="annotations for the dialogues, in a file of their own")
    p.add_argument(
        "--blind",
        nargs="?",
        const="",
        metavar="FOLDER",
        help="measure on a blind calibration folder instead (dialogues.jsonl, annotations.jsonl, "
        "replies.jsonl; default: every set that ships, voice/data/blind*, and the worst of them)",
    )
    p.add_argument(
        "--write-calibration",
        action="store_true",
        help="--blind: record the judge's figures in voice/metrics/scoring/calibration.json, where score "
        "output and reports read its label",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="list every bad reply's score and reason (--blind: each failure)",
    )
    args = p.parse_args(argv)
    if args.write_calibration and args.blind is None:
        p.error("--write-calibration goes with --blind: only the blind set's figures are recorded")
    provenance = bench_provenance("scripts/bench_judge", argv, json_out=args.json)
    result: Separation | blind.Calibration | BlindSets
    try:
        if args.blind is not None:
            result, text = _blind(args)
        else:
            separated = separation(
                make_judge(args.judge), *_bundled(args.dialogues, args.annotations, args.bad_replies)
            )
            result, text = separated, render(separated, args.verbose)
    except (DialogueError, ConfigError) as exc:
        print(exc, file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"scripts/bench_judge: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    print(
        json.dumps({**result, "provenance": provenance}, ensure_ascii=False, indent=2) if args.json else text
    )
    return 0


def _blind(args: argparse.Namespace) -> tuple[blind.Calibration | BlindSets, str]:
    """``--blind FOLDER``: that set; ``--blind``: every set that ships, each, then the worst of them."""
    folders = [Path(args.blind)] if args.blind else blind.blind_sets()
    shipped = {f.resolve() for f in blind.blind_sets()}
    if args.write_calibration and any(f.resolve() not in shipped for f in folders):
        raise ConfigError(
            f"--write-calibration records the blind sets that ship (voice/data/blind*/), not {folders[0]}:"
            " the score labels quote them"
        )
    judge = make_judge(args.judge)
    results: dict[str, blind.Calibration] = {}
    texts: list[str] = []
    for folder in folders:
        dialogues, replies = blind.load_blind(folder)
        results[folder.resolve().name] = result = blind.calibrate(judge, dialogues, replies)
        texts.append(f"[{folder.resolve().name}] " + blind.render(result, args.verbose))
    if args.write_calibration:
        from voice.metrics.scoring import calibration

        for name, result in results.items():
            calibration.record(result, name)
        texts.append(f"recorded in {calibration.CALIBRATION_PATH}")
    if len(results) == 1:
        return next(iter(results.values())), "\n".join(texts)
    worst = blind.worst_of(results)
    return {"sets": results, "worst": worst}, "\n\n".join([*texts, blind.render_worst(worst)])


def _bundled(
    given: list[Path] | None, annotations: Path | None, bad_replies: Path
) -> tuple[list[Dialogue], list[BadReply]]:
    """The dialogues (the bundled and calibration sets unless ``given``) and their bad replies."""
    paths = given or [bundled_dialogues_path(), calibration_dialogues_path()]
    dialogues = [d for path in paths for d in load_dialogues(path)]
    if len({d.id for d in dialogues}) < len(dialogues):
        raise ConfigError("a dialogue id appears in more than one of the dialogue files")
    if annotations is not None:
        from voice.dialogues.annotation_file import apply_annotations, drafts_warning

        dialogues, problems = apply_annotations(annotations, dialogues)
        if problems:
            raise DialogueError(problems)
        if warning := drafts_warning(annotations):  # figures on a model's unreviewed draft: provisional
            print(f"scripts/bench_judge: warning: {warning}", file=sys.stderr)
    return dialogues, load_bad_replies(bad_replies, dialogues)


if __name__ == "__main__":
    raise SystemExit(main())
