"""The judge on a blind calibration set (``scripts/bench_judge --blind [FOLDER]``).

The bundled separation (:mod:`voice.app.benchmarks.judge`) is partly by construction: the same hands wrote the
annotations and the bad replies.  A blind folder keeps three files apart, each written by a hand that did
not see the others' (its README records who saw what):

- ``dialogues.jsonl``: dialogues with reference replies and no annotations;
- ``annotations.jsonl``: their annotations (:mod:`voice.dialogues.annotation_file`), written without the
  replies;
- ``replies.jsonl``: ``{dialogue, turn, kind, fails, reply, why}``, written without the annotations:
  ``kind`` ``bad`` (a reply that should score below the reference on the dimension it ``fails``) or
  ``good`` (a paraphrase of the reference, as good as it; no ``fails``).

Per judged dimension: the share of bad replies scored strictly below their reference (a bad reply the
judge leaves unscored, or its reference unscored, counts against it and is counted apart), and the share
of good paraphrases scored more than one point below the reference on it.  In total: bad replies below,
and good paraphrases low on any dimension, against the goal of :data:`GOAL_BAD_BELOW` and
:data:`GOAL_GOOD_LOW`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias, TypedDict

from voice.app.benchmarks.replies import DATA, Rows, check_reply_row, with_reply
from voice.dialogues import Dialogue, load_dialogues
from voice.errors import DialogueError
from voice.metrics.scoring.calibration import BlindGoal as Goal  # the totals' goal, as recorded
from voice.metrics.scoring.calibration import BlindTotal as Total  # the figures over every dimension
from voice.metrics.scoring.coverage import reference_call
from voice.metrics.scoring.vocabulary import JUDGED, DimensionScore, Judge, TurnScore

GOAL_BAD_BELOW, GOAL_GOOD_LOW = 0.90, 0.10
GOOD_SLACK = 1  # a good paraphrase may score this much below the reference and still not be "low"
_KEYS = frozenset({"dialogue", "turn", "kind", "fails", "reply", "why"})
KINDS = ("bad", "good")


def blind_folder() -> Path:
    return DATA / "blind"


def blind_sets() -> list[Path]:
    """Every blind set that ships with CallSim (``voice/data/blind*`` folders holding replies), by name:
    the set the checklist's rules were worked on and the sets written after it, held out."""
    return sorted(p for p in DATA.glob("blind*") if (p / "replies.jsonl").is_file())


@dataclass(frozen=True)
class BlindReply:
    """A reply in place of the reference reply to caller turn ``turn``: ``bad`` (fails ``fails``) or
    ``good`` (a paraphrase)."""

    dialogue: str
    turn: int
    kind: str
    fails: str | None
    reply: str
    why: str
    line: int = 0


def load_replies(path: str | Path, dialogues: Sequence[Dialogue]) -> list[BlindReply]:
    """Every reply of a blind replies file; raises DialogueError with every problem (file:line: field:
    reason)."""
    by_id = {d.id: d for d in dialogues}
    found: list[BlindReply] = []
    rows = Rows(path, _KEYS)
    for number, obj, bad in rows:
        before = len(rows.problems)
        for key in sorted(_KEYS - {"fails"} - set(obj)):
            bad(key, "missing")
        if "kind" in obj and obj["kind"] not in KINDS:
            bad("kind", f"must be bad or good, got {obj['kind']!r}")
        if obj.get("kind") == "bad" and "fails" not in obj:
            bad("fails", "missing (a bad reply names the dimension it fails)")
        if obj.get("kind") == "good" and "fails" in obj:
            bad("fails", "a good paraphrase fails nothing: leave fails out")
        check_reply_row(obj, by_id, bad)
        if len(rows.problems) == before:
            found.append(
                BlindReply(obj["dialogue"], obj["turn"], obj["kind"], obj.get("fails"), obj["reply"],
                           obj["why"], number)
            )  # fmt: skip
    if rows.problems:
        raise DialogueError(rows.problems)
    return found


def load_blind(folder: Path) -> tuple[list[Dialogue], list[BlindReply]]:
    """The folder's dialogues with its annotations merged in, and its replies."""
    dialogues = load_dialogues(folder / "dialogues.jsonl", annotations=folder / "annotations.jsonl")
    return dialogues, load_replies(folder / "replies.jsonl", dialogues)


Outcome: TypeAlias = Literal["below", "level", "above", "not_scored"]  # a bad reply against its reference
Count: TypeAlias = Literal[
    "bad", "below", "level", "above", "not_scored", "good_scored", "good_low", "bad_below_share",
    "good_low_share",
]  # fmt: skip


class DimensionCounts(TypedDict):
    """One judged dimension's figures: bad replies failing it by outcome, good paraphrases scored on it
    and those low, and the two shares (None: nothing to share)."""

    bad: int
    below: int
    level: int
    above: int
    not_scored: int
    good_scored: int
    good_low: int
    bad_below_share: float | None
    good_low_share: float | None


class Failure(TypedDict):
    """A bad reply not below its reference, or a good one low, with the judge's reason (``--verbose``)."""

    dialogue: str
    turn: int
    kind: str
    why: str
    reply: str
    dimension: str
    outcome: Outcome | Literal["low"]
    score: int | None
    reference_score: int | None
    reason: str


class Calibration(TypedDict):
    """What :func:`calibrate` finds on a blind set (printed as JSON, recorded by ``--write-calibration``)."""

    judge: str
    dialogues: int
    replies: int
    dimensions: dict[str, DimensionCounts]
    total: Total
    goal: Goal
    failures: list[Failure]


class Share(TypedDict):
    """The worst share of one kind, and the set it comes from (None, None: no set had one)."""

    share: float | None
    of: str | None


class WorstDimension(TypedDict):
    """One dimension's worst shares over the sets."""

    bad_below: Share
    good_low: Share


class Worst(TypedDict):
    """:func:`worst_of`: the worst figures over several blind sets."""

    sets: list[str]
    bad_below: Share
    good_low: Share
    dimensions: dict[str, WorstDimension]
    goal_met: bool


def _turn(scores: list[TurnScore], turn: int) -> TurnScore:
    return next(s for s in scores if s.turn == turn)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _zero() -> DimensionCounts:
    """A dimension's counts before any reply (the shares are set once all are counted)."""
    return {"bad": 0, "below": 0, "level": 0, "above": 0, "not_scored": 0, "good_scored": 0, "good_low": 0,
            "bad_below_share": None, "good_low_share": None}  # fmt: skip


def _failure(
    r: BlindReply, dimension: str, outcome: Outcome | Literal["low"], got: DimensionScore, ref: DimensionScore
) -> Failure:
    """What ``--verbose`` lists of a reply the judge got wrong on ``dimension``."""
    return {"dialogue": r.dialogue, "turn": r.turn, "kind": r.kind, "why": r.why, "reply": r.reply,
            "dimension": dimension, "outcome": outcome, "score": got.score, "reference_score": ref.score,
            "reason": got.reason}  # fmt: skip


def calibrate(judge: Judge, dialogues: Sequence[Dialogue], replies: Sequence[BlindReply]) -> Calibration:
    """Per dimension and in total, how the judge ranks bad replies and good paraphrases against their
    references; ``failures`` lists each bad reply not below and each good one low, with the judge's reason."""
    by_id = {d.id: d for d in dialogues}
    references = {d.id: judge.judge_call(reference_call(d)).turns for d in dialogues}
    dims: dict[str, DimensionCounts] = {d: _zero() for d in JUDGED}
    failures: list[Failure] = []
    good_low_replies = 0
    for r in replies:
        mine = _turn(
            judge.judge_call(with_reply(reference_call(by_id[r.dialogue]), r.turn, r.reply)).turns, r.turn
        )
        theirs = _turn(references[r.dialogue], r.turn)
        if r.kind == "bad" and r.fails is not None:
            got, ref = mine.scores[r.fails], theirs.scores[r.fails]
            row = dims[r.fails]
            row["bad"] += 1
            outcome: Outcome
            if got.score is None or ref.score is None:
                outcome = "not_scored"
            else:
                outcome = "below" if got.score < ref.score else "level" if got.score == ref.score else "above"
            row[outcome] += 1
            if outcome != "below":
                failures.append(_failure(r, r.fails, outcome, got, ref))
            continue
        low = False
        for dim in JUDGED:
            got, ref = mine.scores[dim], theirs.scores[dim]
            if got.score is None or ref.score is None:
                continue
            dims[dim]["good_scored"] += 1
            if got.score < ref.score - GOOD_SLACK:
                dims[dim]["good_low"] += 1
                low = True
                failures.append(_failure(r, dim, "low", got, ref))
        good_low_replies += low
    for row in dims.values():
        row["bad_below_share"] = _share(row["below"], row["bad"])
        row["good_low_share"] = _share(row["good_low"], row["good_scored"])
    bad = [r for r in replies if r.kind == "bad"]
    good = len(replies) - len(bad)
    below = sum(row["below"] for row in dims.values())
    total: Total = {
        "bad": len(bad), "below": below, "not_scored": sum(row["not_scored"] for row in dims.values()),
        "bad_below_share": _share(below, len(bad)), "good": good, "good_low": good_low_replies,
        "good_low_share": _share(good_low_replies, good),
    }  # fmt: skip
    met = (
        total["bad_below_share"] is not None
        and total["bad_below_share"] >= GOAL_BAD_BELOW
        and (total["good_low_share"] or 0.0) <= GOAL_GOOD_LOW
    )
    return {
        "judge": judge.name, "dialogues": len(dialogues), "replies": len(replies), "dimensions": dims,
        "total": total, "goal": {"bad_below": GOAL_BAD_BELOW, "good_low": GOAL_GOOD_LOW, "met": met},
        "failures": failures,
    }  # fmt: skip


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def render(result: Calibration, verbose: bool = False) -> str:
    t, goal = result["total"], result["goal"]
    columns: list[tuple[Count, int]] = [
        ("bad", 5), ("below", 7), ("level", 7), ("above", 7), ("not_scored", 12), ("bad_below_share", 9),
        ("good_scored", 6), ("good_low", 5), ("good_low_share", 7),
    ]  # fmt: skip
    names = {"not_scored": "not scored", "bad_below_share": "below %", "good_scored": "good",
             "good_low": "low", "good_low_share": "low %"}  # fmt: skip
    head = "".join(f"{names.get(k, k):>{w}}" for k, w in columns)
    lines = [
        f"judge {result['judge']} on the blind set: {result['dialogues']} dialogues, {t['bad']} bad replies, "
        f"{t['good']} good paraphrases",
        f"{'dimension':<24}{head}",
    ]
    for dim, d in result["dimensions"].items():
        cells = (_pct(d[k]) if k.endswith("share") else str(d[k]) for k, _ in columns)
        lines.append(f"{dim:<24}" + "".join(f"{c:>{w}}" for c, (_, w) in zip(cells, columns, strict=True)))
    lines += [
        f"total: bad replies below their reference {t['below']}/{t['bad']} ({_pct(t['bad_below_share'])}, "
        f"{t['not_scored']} not scored); good paraphrases low on some dimension {t['good_low']}/{t['good']} "
        f"({_pct(t['good_low_share'])})",
        f"goal: bad below >= {_pct(goal['bad_below'])}, good low <= {_pct(goal['good_low'])}: "
        f"{'met' if goal['met'] else 'not met'}",
        "good: the (paraphrase, dimension) pairs both scored; low: more than one point below the reference",
    ]
    if verbose:
        for f in result["failures"]:
            lines.append(
                f"  {f['dialogue']} turn {f['turn']} {f['kind']} {f['dimension']} {f['outcome']}: "
                f"{f['score']} (reference {f['reference_score']}) {f['why']}: {f['reason']} | {f['reply']}"
            )
    return "\n".join(lines)


def worst_of(results: Mapping[str, Calibration]) -> Worst:
    """The worst figure of each kind over several blind sets' results (``{set name: calibrate(...)}``):
    the lowest share of bad replies below, the highest share of good paraphrases low, in total and per
    dimension, each with the set it comes from (``of``).  A set the rules were later worked on flatters the
    judge; the worst of them is what a reader may expect of a set nobody tuned it for."""

    def pick(values: list[tuple[float | None, str]], low: bool) -> Share:
        known = [(v, name) for v, name in values if v is not None]
        if not known:
            return {"share": None, "of": None}
        v, name = (min if low else max)(known)
        return {"share": v, "of": name}

    bad_below = pick([(r["total"]["bad_below_share"], n) for n, r in results.items()], low=True)
    good_low = pick([(r["total"]["good_low_share"], n) for n, r in results.items()], low=False)
    dimensions: dict[str, WorstDimension] = {}
    for dim in JUDGED:
        rows = {n: r["dimensions"][dim] for n, r in results.items()}
        dimensions[dim] = {
            "bad_below": pick([(row["bad_below_share"], n) for n, row in rows.items()], low=True),
            "good_low": pick([(row["good_low_share"], n) for n, row in rows.items()], low=False),
        }
    below, low = bad_below["share"], good_low["share"]
    return {
        "sets": sorted(results), "bad_below": bad_below, "good_low": good_low, "dimensions": dimensions,
        "goal_met": below is not None and below >= GOAL_BAD_BELOW and (low or 0.0) <= GOAL_GOOD_LOW,
    }  # fmt: skip


def render_worst(worst: Worst) -> str:
    """The worst-of table: per dimension the worst separation and the worst paraphrase share, and whose."""
    lines = [f"worst of {len(worst['sets'])} blind sets ({', '.join(worst['sets'])}):",
             f"{'dimension':<24}{'below %':>9}  {'of':<8}{'low %':>7}  of"]  # fmt: skip
    for dim, d in worst["dimensions"].items():
        b, g = d["bad_below"], d["good_low"]
        lines.append(
            f"{dim:<24}{_pct(b['share']):>9}  {b['of'] or '-':<8}{_pct(g['share']):>7}  {g['of'] or '-'}"
        )
    b, g = worst["bad_below"], worst["good_low"]
    lines.append(
        f"total: bad replies below their reference {_pct(b['share'])} ({b['of']}); good paraphrases low "
        f"{_pct(g['share'])} ({g['of']}); goal bad below >= {_pct(GOAL_BAD_BELOW)}, good low <= "
        f"{_pct(GOAL_GOOD_LOW)}: {'met' if worst['goal_met'] else 'not met'}"
    )
    return "\n".join(lines)
