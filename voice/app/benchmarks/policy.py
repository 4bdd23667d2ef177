"""What the built-in assistant's policy says, scored by a judge, with no audio (``scripts/bench_policy``).

Each dialogue's caller lines go to a fresh policy exactly as written (as if its ASR were perfect), its
replies stand in for what the caller heard, and the judge scores them against the dialogue's annotations.
This isolates the policy: what a live run adds (ASR errors, timing) is measured by ``callsim bench`` and
``callsim score``.  A reply that ends the call makes the following caller lines its ending (as a hang-up
does in a live call).  Printed: per judged dimension, the mean score and how many replies scored 1-2, and
with ``--verbose`` every such reply with the judge's reason.

The dialogues are the bundled sample set plus the calibration set (wrong numbers), as in
``scripts/bench_judge``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import TypedDict

from server.policy.rules import RulePolicy
from voice.app.benchmarks.judge import calibration_dialogues_path
from voice.app.run.provenance import bench_provenance
from voice.dialogues import AssistantTurn, CallerTurn, Dialogue, bundled_dialogues_path, load_dialogues
from voice.metrics.scoring.judges import make_judge
from voice.metrics.scoring.vocabulary import JUDGED, HeardTurn, Judge, ScoringInput, TurnScore


def policy_call(dialogue: Dialogue) -> tuple[ScoringInput, list[str]]:
    """The dialogue played to a fresh rules policy: the judge's input, and the replies in order."""
    policy = RulePolicy(dialogue.assistant_view())
    greeting = policy.greeting() if dialogue.turns and isinstance(dialogue.turns[0], AssistantTurn) else None
    heard: list[HeardTurn] = []
    replies: list[str] = []
    ended = False
    caller_index = 0
    for i, turn in enumerate(dialogue.turns):
        if not isinstance(turn, CallerTurn):
            continue
        nxt = dialogue.turns[i + 1] if i + 1 < len(dialogue.turns) else None
        reference = nxt.text if isinstance(nxt, AssistantTurn) else None
        if ended:
            heard.append(
                HeardTurn(
                    caller_index,
                    i,
                    turn.text,
                    "[assistant hung up]",
                    reference,
                    ("after_hangup",),
                    None,
                    True,
                )
            )
        else:
            reply = policy.respond(turn.text)
            replies.append(reply.text)
            text = reply.text + (" [assistant hung up]" if reply.end_call else "")
            heard.append(
                HeardTurn(caller_index, i, turn.text, text, reference, ("hung_up",) if reply.end_call else ())
            )
            ended = reply.end_call
        caller_index += 1
    ended_by = "assistant_hangup" if ended else "completed"
    return ScoringInput(
        dialogue.id, dialogue, heard, greeting=greeting, ended_by=ended_by, transcriber="text"
    ), replies


def score_policy(dialogues: Sequence[Dialogue], judge: Judge) -> list[tuple[ScoringInput, list[TurnScore]]]:
    out = []
    for d in dialogues:
        call, _ = policy_call(d)
        out.append((call, judge.judge_call(call).turns))
    return out


class Dimension(TypedDict):
    """One judged dimension's figures, as printed and under ``dimensions`` in ``--json``."""

    n: int  # replies scored on it
    mean: float | None
    low: int  # replies scored 1-2


def summarize(scored: Sequence[tuple[ScoringInput, list[TurnScore]]]) -> dict[str, Dimension]:
    """Per judged dimension: scored replies, mean, and replies at 1-2."""
    rows: dict[str, Dimension] = {}
    for dim in JUDGED:
        values = [s.scores[dim].score for _, turns in scored for s in turns if dim in s.scores]
        got = [v for v in values if v is not None]
        rows[dim] = {
            "n": len(got),
            "mean": round(fmean(got), 3) if got else None,
            "low": sum(v <= 2 for v in got),
        }
    return rows


def low_replies(scored: Sequence[tuple[ScoringInput, list[TurnScore]]]) -> list[str]:
    """Every reply scored 1-2 on some dimension: dialogue, turn, what was said and why it scored low."""
    lines = []
    for call, turns in scored:
        by_turn = {t.turn: t for t in call.turns}
        for s in turns:
            for dim, d in s.scores.items():
                if d.score is not None and d.score <= 2:
                    t = by_turn.get(s.turn)
                    said = t.heard if t else ""
                    lines.append(f"{call.call_id} turn {s.turn} {dim} {d.score}: {said}  ({d.reason})")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench_policy", description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="checklist", help="checklist (default) or openai:MODEL")
    ap.add_argument("--dialogues", action="append", help="dialogue files (default: bundled + calibration)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--verbose", action="store_true", help="list every reply scored 1-2, with the reason")
    args = ap.parse_args(argv)
    provenance = bench_provenance("scripts/bench_policy", argv, json_out=args.json)
    paths = (
        [Path(p) for p in args.dialogues]
        if args.dialogues
        else [bundled_dialogues_path(), calibration_dialogues_path()]
    )
    dialogues = [d for p in paths for d in load_dialogues(p)]
    scored = score_policy(dialogues, make_judge(args.judge))
    summary = summarize(scored)
    if args.json:
        doc = {
            "dialogues": len(dialogues),
            "judge": args.judge,
            "dimensions": summary,
            "provenance": provenance,
        }
        print(json.dumps(doc, indent=1))
    else:
        print(f"{len(dialogues)} dialogues, rules policy, judge {args.judge}")
        print(f"{'dimension':<24}{'n':>5}{'mean':>8}{'  1-2':>6}")
        for dim, row in summary.items():
            mean = "-" if row["mean"] is None else f"{row['mean']:.2f}"
            print(f"{dim.replace('_', ' '):<24}{row['n']:>5}{mean:>8}{row['low']:>6}")
    if args.verbose:
        print("\n".join(low_replies(scored)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
