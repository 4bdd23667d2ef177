"""The judge's call verdicts on disk and in sum: each call's ``goal`` object, a target's ``goal`` block.

A call's verdict (:class:`~voice.metrics.scoring.vocabulary.GoalVerdict`) is written next to its turn scores
as

    "goal": {"caller_goal_met": "partly", "reason": "...", "preset_respected": "yes", "preset_reason": "..."}

(``null`` answers: not judged, the reason says why; ``"goal": null``: no verdict was recorded).  A target's
summary counts the answers and gives two rates over the calls that were judged, so a judge that cannot
give a verdict (the checklist, on goals) lowers no rate: it shows as ``not_judged`` instead.

- ``met_rate``: the share of judged calls whose caller's goal was met (``yes``; ``partly`` is not met),
  and ``met_or_partly_rate`` with ``partly`` counted in (as the reactive caller's own rates,
  :mod:`voice.metrics.goal`, so the two verdicts can be set side by side);
- ``preset_respected_rate``: the share of ``yes`` among the calls judged ``yes`` or ``no`` (calls without
  a preset, ``not_applicable``, are left out: there was nothing to respect).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from voice.metrics.scoring.vocabulary import GOAL_MET, PRESET_RESPECTED, GoalVerdict

NOT_JUDGED = "not_judged"

# each rate: (the verdict's field, the answers that count as hits, the answers that count at all)
RATES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "met_rate": ("caller_goal_met", ("yes",), GOAL_MET),
    "met_or_partly_rate": ("caller_goal_met", ("yes", "partly"), GOAL_MET),
    "preset_respected_rate": ("preset_respected", ("yes",), ("yes", "no")),
}


class GoalJson(TypedDict):
    """A call's ``goal`` object in ``scores.json`` (:class:`GoalVerdict`, field for field)."""

    caller_goal_met: str | None
    reason: str
    preset_respected: str | None
    preset_reason: str


class GoalSummary(TypedDict):
    """A target's ``goal`` block: the calls, the count of each answer, the three :data:`RATES`."""

    calls: int
    caller_goal_met: dict[str, int]
    preset_respected: dict[str, int]
    met_rate: float | None
    met_or_partly_rate: float | None
    preset_respected_rate: float | None


def goal_to_json(verdict: GoalVerdict | None) -> GoalJson | None:
    if verdict is None:
        return None
    return {
        "caller_goal_met": verdict.caller_goal_met,
        "reason": verdict.reason,
        "preset_respected": verdict.preset_respected,
        "preset_reason": verdict.preset_reason,
    }


def goal_from_json(doc: Any) -> GoalVerdict | None:
    """A verdict as :func:`goal_to_json` wrote it (``None`` for null); ``ValueError`` if it is not one."""
    if doc is None:
        return None
    if not isinstance(doc, Mapping):
        raise ValueError(f"a goal verdict is an object or null, got {doc!r}")
    try:
        return GoalVerdict(
            doc["caller_goal_met"], str(doc["reason"]), doc["preset_respected"], str(doc["preset_reason"])
        )
    except KeyError as exc:
        raise ValueError(f"a goal verdict lacks {exc}") from exc


def verdict_units(verdicts: Sequence[GoalVerdict | None], rate: str) -> list[list[float]]:
    """Per call, its value towards ``rate`` (1 a hit, 0 a miss, none if the call does not count): the
    unit a bootstrap over calls resamples (``callsim compare``)."""
    key, hits, counted = RATES[rate]
    answers = [getattr(v, key) if v is not None else None for v in verdicts]
    return [[float(a in hits)] if a in counted else [] for a in answers]


def _rate(verdicts: Sequence[GoalVerdict | None], rate: str) -> float | None:
    values = [x for unit in verdict_units(verdicts, rate) for x in unit]
    return round(sum(values) / len(values), 4) if values else None


def summarize_goals(verdicts: Sequence[GoalVerdict | None]) -> GoalSummary:
    """Counts per answer (``not_judged`` for none) and the met and preset-respected rates (module doc)."""
    met = dict.fromkeys((*GOAL_MET, NOT_JUDGED), 0)
    preset = dict.fromkeys((*PRESET_RESPECTED, NOT_JUDGED), 0)
    for v in verdicts:
        met[(v.caller_goal_met if v is not None else None) or NOT_JUDGED] += 1
        preset[(v.preset_respected if v is not None else None) or NOT_JUDGED] += 1
    return {
        "calls": len(verdicts),
        "caller_goal_met": met,
        "preset_respected": preset,
        "met_rate": _rate(verdicts, "met_rate"),
        "met_or_partly_rate": _rate(verdicts, "met_or_partly_rate"),
        "preset_respected_rate": _rate(verdicts, "preset_respected_rate"),
    }


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.0f}%"


def goal_lines(block: GoalSummary) -> list[str]:
    """The goal block as two lines of text (``callsim score``, the Markdown report; there as read from
    ``scores.json``, so each key is read with a default)."""
    met, preset = block.get("caller_goal_met", {}), block.get("preset_respected", {})
    counts = ", ".join(f"{k.replace('_', ' ')} {met.get(k, 0)}" for k in (*GOAL_MET, NOT_JUDGED))
    kept = ", ".join(f"{k.replace('_', ' ')} {preset.get(k, 0)}" for k in (*PRESET_RESPECTED, NOT_JUDGED))
    return [
        f"caller's goal met (judge): {counts}; met rate {percent(block.get('met_rate'))}, "
        f"met or partly {percent(block.get('met_or_partly_rate'))}",
        f"preset respected (judge): {kept}; respected rate {percent(block.get('preset_respected_rate'))}",
    ]


def verdict_text(verdict: GoalVerdict) -> tuple[str, str]:
    """One call's two answers, each with its reason, as short text (``not judged`` for none)."""
    goal = (verdict.caller_goal_met or NOT_JUDGED).replace("_", " ")
    preset = (verdict.preset_respected or NOT_JUDGED).replace("_", " ")
    return f"{goal}: {verdict.reason}", f"{preset}: {verdict.preset_reason}"
