"""What a judge's scores are worth, in one place: its figures on the blind calibration set.

A score table that names its judge ("checklist/3") says nothing of how far to trust it.  The blind
benchmark (``scripts/bench_judge --blind --write-calibration``, :mod:`voice.app.benchmarks.judge_blind`)
measures a judge on replies nobody tuned it for and records, per judge name, the share of bad replies it
ranks below their reference and the share of good paraphrases it scores low, in ``calibration.json`` next
to this module.  The score output and the reports read the label from here: the figures are never typed by
hand, and a judge that was not measured says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

from voice.files import atomic_write_bytes
from voice.metrics.model.jsonio import JsonValue, as_json_object

CALIBRATION_PATH = Path(__file__).resolve().with_name("calibration.json")
WRITTEN_BY = "scripts/bench_judge --blind --write-calibration"


class BlindFigures(TypedDict):
    """One judge's figures on one blind set, as ``calibration.json`` keeps them."""

    bad_below_share: float | None
    good_low_share: float | None
    bad: int
    below: int
    not_scored: int
    good: int
    good_low: int
    dialogues: int
    goal_met: bool


class BlindTotal(TypedDict):
    """A blind run's figures over every dimension: bad replies below, good paraphrases low on any."""

    bad: int
    below: int
    not_scored: int
    bad_below_share: float | None
    good: int
    good_low: int
    good_low_share: float | None


class BlindGoal(TypedDict):
    """The goal a blind run's totals are held to, and whether they meet it."""

    bad_below: float
    good_low: float
    met: bool


class BlindRun(TypedDict):
    """What is recorded of a blind run (:func:`voice.app.benchmarks.judge_blind.calibrate`'s result, which
    holds more): its judge, how many dialogues, its totals and its goal."""

    judge: str
    dialogues: int
    total: BlindTotal
    goal: BlindGoal


def read(path: Path | None = None) -> dict[str, JsonValue]:
    """Every judge's recorded figures, ``{judge: {blind set: figures}}`` (``{}`` when the file is missing
    or unreadable)."""
    try:
        doc = json.loads((path or CALIBRATION_PATH).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    judges = doc.get("judges") if isinstance(doc, dict) else None
    return judges if isinstance(judges, dict) else {}


def _pct(share: float | None) -> str:
    return f"{100 * share:.0f} %" if isinstance(share, int | float) else "?"


def _shares(sets: Mapping[str, JsonValue], key: str) -> list[float]:
    return [v for f in sets.values() if isinstance(f, dict) and isinstance(v := f.get(key), int | float)]


def judge_label(judge: str, path: Path | None = None) -> str:
    """``checklist/3: blind separation 80 %, paraphrases low 9 % (worst of 2 blind sets)``, or the judge's
    name and that it has no blind figures (an LLM judge nobody ran the blind set with).

    With several blind sets the label quotes the worst figure of each kind: a set the judge's rules were
    later worked on flatters it, and a reader cannot tell from a label which set was still blind."""
    recorded = read(path).get(judge)
    sets: dict[str, JsonValue] = recorded if isinstance(recorded, dict) else {}
    below, low = _shares(sets, "bad_below_share"), _shares(sets, "good_low_share")
    if not below or not low:
        return f"{judge}: no blind calibration figures ({WRITTEN_BY} --judge ...)"
    which = f"worst of {len(sets)} blind sets" if len(sets) > 1 else f"blind set {next(iter(sets))}"
    return f"{judge}: blind separation {_pct(min(below))}, paraphrases low {_pct(max(low))} ({which})"


def figures(result: BlindRun) -> BlindFigures:
    """What is recorded of one blind run (:func:`voice.app.benchmarks.judge_blind.calibrate`'s result)."""
    total = result["total"]
    return {
        "bad_below_share": None if total["bad_below_share"] is None else round(total["bad_below_share"], 4),
        "good_low_share": None if total["good_low_share"] is None else round(total["good_low_share"], 4),
        "bad": total["bad"],
        "below": total["below"],
        "not_scored": total["not_scored"],
        "good": total["good"],
        "good_low": total["good_low"],
        "dialogues": result["dialogues"],
        "goal_met": result["goal"]["met"],
    }


def record(result: BlindRun, blind_set: str, path: Path | None = None) -> BlindFigures:
    """Write one blind run's figures under its judge's name and its set's name (other judges' and other
    sets' kept); the figures written."""
    judges = read(path)
    entry = figures(result)
    sets = judges.get(str(result["judge"]))
    sets = dict(sets) if isinstance(sets, dict) else {}
    sets[blind_set] = as_json_object(entry)
    judges[str(result["judge"])] = dict(sorted(sets.items()))
    doc = {"written_by": WRITTEN_BY, "judges": dict(sorted(judges.items()))}
    atomic_write_bytes(
        path or CALIBRATION_PATH, (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    )
    return entry
