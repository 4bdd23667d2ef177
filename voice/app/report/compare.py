"""``callsim compare``: two assistants, or two runs of one, figure by figure with bootstrap 95 % CIs.

Each side is read from a ``results.json`` (a target folder, or a run folder holding exactly one target; a run
folder with two targets compares those two).  The figures are :data:`voice.metrics.figures.FIGURES`, pooled
exactly as in the summary; intervals come from :mod:`voice.metrics.bootstrap`, resampling calls. When both
sides hold the same call ids the bootstrap is paired.  A block (overall, or a group of ``--by``) with fewer
than ``min_n`` calls on a side is shown but never starred.  The two sides' conditions (dialogues, network,
caller voices, caller timing, a reactive caller's model and persona, seeds) are compared too: ``mismatch``
lists every difference.  A reactive caller's goal figures are compared only when both sides have them; the
machines' speed indices are held against each other (``speed_index``, :mod:`voice.app.report.machine`).
The result is the document of :mod:`voice.app.report.comparison`, which also prints it as a table.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from voice.app.report.comparison import (
    Block,
    Comparison,
    ComparisonHead,
    DiffRow,
    FigureDiff,
    diff_row,
    small_n_warnings,
)
from voice.app.report.machine import compare_speed
from voice.app.run.score import load_scores, scored_by
from voice.errors import ConfigError
from voice.metrics.bootstrap import DEFAULT_RESAMPLES, bootstrap_difference
from voice.metrics.figures import FIGURES, unit_values
from voice.metrics.measure import CallMetrics
from voice.metrics.model.jsonio import JsonValue
from voice.metrics.model.provenance_record import Provenance
from voice.metrics.model.run_results import Settings, load_target, settings_diff, target_folders
from voice.metrics.scoring.verdicts import RATES, verdict_units
from voice.metrics.scoring.vocabulary import DIMENSIONS, GoalVerdict, TurnScore
from voice.metrics.simulator import assistant_calls

DEFAULT_MIN_N = 5  # calls a side below which a difference is not starred
VOICE_LABELS = ("voice", "voice_sex", "caller_speed")  # who called, per call (voice.app.run.caller_voices)
LABELS = ("scenario", "preset_type", "relation", "dialogue_sha", "seed", "caller", "persona", *VOICE_LABELS)


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a target's calls with their labels (scenario, preset type, relation)."""

    name: str
    folder: Path
    calls: list[CallMetrics]
    labels: list[dict[str, JsonValue]]
    settings: Settings = field(default_factory=Settings)  # the run's fingerprint (``results.json``)
    provenance: Provenance | None = None  # where it was made, with the machine's speed index

    def assistant_side(self) -> Side:
        """The side without the calls CallSim failed on (:mod:`voice.metrics.simulator`): what is compared."""
        calls, labels = assistant_calls(self.calls, self.labels)
        return replace(self, calls=calls, labels=labels)


def load_side(name: str, folder: Path) -> Side:
    """A target folder's calls, labels, settings and provenance, as its ``results.json`` holds them."""
    results = load_target(folder)
    calls = [c.metrics for c in results.calls]
    # only the labels a call has: a scripted call has no persona to break a summary down by
    labels = [{k: c.labels[k] for k in LABELS if k in c.labels} for c in results.calls]
    return Side(name, folder, calls, labels, results.settings, results.provenance)


def _ids(ids: Sequence[str], most: int = 5) -> str:
    return ", ".join(ids[:most]) + (f" and {len(ids) - most} more" if len(ids) > most else "")


# What a difference in the settings is, by its first key; the protocol (and codec) is the target's own.
# A reactive caller's model, persona, prompt and turn limit shape the conversations as much as the script.
CONDITIONS = {
    "line": "network",
    "tts": "caller voice",
    **dict.fromkeys(("voices", "caller_speed"), "caller voices"),
    "timing": "caller timing",
    **dict.fromkeys(("caller", "persona", "caller_prompt", "caller_max_turns"), "reactive caller"),
}
NOT_CONDITIONS = {"line.protocol", "line.codec"}


def conditions_differ(a: Side, b: Side) -> list[str]:
    """Every way the two sides' calls were not made under the same conditions, one line each."""
    out = []
    da = {c.dialogue_id: lab.get("dialogue_sha") for c, lab in zip(a.calls, a.labels, strict=True)}
    db = {c.dialogue_id: lab.get("dialogue_sha") for c, lab in zip(b.calls, b.labels, strict=True)}
    for side, ids in (("A", [i for i in da if i not in db]), ("B", [i for i in db if i not in da])):
        if ids:
            out.append(f"dialogues: {len(ids)} only in {side}: {_ids(ids)}")
    if edited := [i for i in da if i in db and da[i] != db[i]]:
        out.append(f"dialogues: {len(edited)} with other content (dialogue_sha): {_ids(edited)}")
    # a setting a side does not have is absent, not null (a scripted run has no caller model)
    conditions_a, conditions_b = ({k: s.settings[k] for k in CONDITIONS if k in s.settings} for s in (a, b))
    for diff in settings_diff(conditions_a, conditions_b):
        key = diff.partition(":")[0]
        if key not in NOT_CONDITIONS:
            out.append(f"{'seeds' if key.endswith('seed') else CONDITIONS[key.split('.')[0]]}: {diff}")
    for keys, head, what in (
        (("seed",), "seeds", "caller seed"),
        (VOICE_LABELS, "caller voices", "voice or pace"),
    ):
        sa = {c.call_id: [lab.get(k) for k in keys] for c, lab in zip(a.calls, a.labels, strict=True)}
        sb = {c.call_id: [lab.get(k) for k in keys] for c, lab in zip(b.calls, b.labels, strict=True)}
        other = [i for i in sa if i in sb and sa[i] != sb[i]]
        if other and not any(line.startswith(head) for line in out):  # not already said by the settings
            out.append(f"{head}: {len(other)} call(s) with another {what}: {_ids(other)}")
    return out


def mismatch_text(mismatch: Sequence[str], *, refused: bool) -> str:
    """The differences, one a line, and what to do about them."""
    lines = ["the two sides were not run under the same conditions:", *(f"  {m}" for m in mismatch)]
    if refused:
        lines.append(
            "compare them anyway with --allow-mismatch (the differences are then shown as a warning)"
        )
    if any("mulaw_band_limit" in m for m in mismatch):
        lines.append(
            "(a Twilio target is always band-limited: compare it with a PCM run made with --band-limit on)"
        )
    return "\n".join(lines)


def pick_sides(a: Path, b: Path | None) -> tuple[Side, Side]:
    """``A B``: one target each; ``A`` alone: a run folder with exactly two targets."""
    ta = target_folders(a)
    if b is None:
        if len(ta) != 2:
            raise ConfigError(f"{a} holds {len(ta)} target(s); give two folders to compare")
        return load_side(*ta[0]), load_side(*ta[1])
    tb = target_folders(b)
    for path, found in ((a, ta), (b, tb)):
        if len(found) != 1:
            names = ", ".join(str(f) for _, f in found)
            raise ConfigError(f"{path} holds {len(found)} targets; name one of its folders: {names}")
    (na, fa), (nb, fb) = ta[0], tb[0]
    if na == nb:  # two runs of one assistant: name them by folder
        na, nb = f"{na} ({fa})", f"{nb} ({fb})"
    return load_side(na, fa), load_side(nb, fb)


def _compare_calls(
    a: Sequence[CallMetrics],
    b: Sequence[CallMetrics],
    *,
    n_resamples: int,
    seed: int,
    level: float,
    min_n: int = DEFAULT_MIN_N,
) -> Block:
    ids_a, ids_b = [c.call_id for c in a], [c.call_id for c in b]
    paired = len(set(ids_a)) == len(ids_a) and sorted(ids_a) == sorted(ids_b)
    if paired:
        by_id = {c.call_id: c for c in b}
        b = [by_id[i] for i in ids_a]
    small = min(len(a), len(b)) < min_n
    rows: list[FigureDiff] = []
    for f in FIGURES:
        d = bootstrap_difference(
            [unit_values(c)[f.values] for c in a],
            [unit_values(c)[f.values] for c in b],
            f.reduce,
            paired=paired,
            n_resamples=n_resamples,
            seed=seed,
            level=level,
        )
        if f.goal and (d.a is None or d.b is None):
            continue  # the caller's goal: side by side only when both sides had a reactive caller
        rows.append(
            {
                "key": f.key,
                "label": f.label,
                "unit": f.unit,
                "a": d.a,
                "b": d.b,
                "diff": d.diff,
                "ci": [d.lo, d.hi],
                "significant": d.significant and not small,
                "n_calls_with_values": [d.n_a, d.n_b],
            }
        )
    return {"calls": [len(a), len(b)], "paired": paired, "small_n": small, "figures": rows}


def compare_sides(
    a: Side,
    b: Side,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
    by: str | None = None,
    min_n: int = DEFAULT_MIN_N,
) -> Comparison:
    """Every headline figure of ``b`` minus ``a`` with its bootstrap interval; per group with ``by``.

    Blocks with fewer than ``min_n`` calls on a side are never starred (``small_n``); ``mismatch`` lists
    how the two sides' conditions differ (:func:`conditions_differ`) and ``warnings`` both.  The calls
    CallSim failed on are compared on neither side (``simulator_failures``: how many, A and B; a warning).
    """
    mismatch = conditions_differ(a, b)  # on every call made: CallSim's failures were made on the same terms
    left_out = [len(a.calls), len(b.calls)]
    a, b = a.assistant_side(), b.assistant_side()
    left_out = [left_out[0] - len(a.calls), left_out[1] - len(b.calls)]
    if not a.calls or not b.calls:
        raise ConfigError("both sides need at least one call (not counting those CallSim failed on)")
    compare = functools.partial(_compare_calls, n_resamples=n_resamples, seed=seed, level=level, min_n=min_n)
    doc: ComparisonHead = {
        "a": {"name": a.name, "folder": str(a.folder)},
        "b": {"name": b.name, "folder": str(b.folder)},
        "resamples": n_resamples,
        "seed": seed,
        "level": level,
        "min_n": min_n,
        "mismatch": mismatch,
        "simulator_failures": left_out,
        "speed_index": compare_speed(a.provenance, b.provenance),
        "overall": compare(a.calls, b.calls),
    }
    if by:
        groups: dict[str, Block] = {}
        values = dict.fromkeys(str(lab.get(by)) for lab in [*a.labels, *b.labels])
        for v in values:
            ca = [c for c, lab in zip(a.calls, a.labels, strict=True) if str(lab.get(by)) == v]
            cb = [c for c, lab in zip(b.calls, b.labels, strict=True) if str(lab.get(by)) == v]
            if ca and cb:
                groups[v] = compare(ca, cb)
        doc["by"], doc["groups"] = by, groups
    dims = compare_dimensions(a, b, n_resamples=n_resamples, seed=seed, level=level)
    if dims:
        doc["dimensions"] = dims
    if goals := compare_judge_goals(a, b, n_resamples=n_resamples, seed=seed, level=level):
        doc["judge_goals"] = goals
    warnings = small_n_warnings(doc) + [
        f"{side.name}: {n} call(s) CallSim failed on (not the assistant's) left out: redo them first"
        for side, n in ((a, left_out[0]), (b, left_out[1]))
        if n
    ]
    return {**doc, "warnings": warnings}


def _side_scores(side: Side) -> dict[str, list[TurnScore]] | None:
    """Each call's heard turn scores (``callsim score``), or None if the side is not (fully) scored."""
    judge = scored_by(side.folder)
    if judge is None:
        return None
    out = {}
    for c in side.calls:
        scores = load_scores(side.folder, c.call_id, judge)
        if scores is None:
            return None
        out[c.call_id] = list(scores.versions.get("heard", []))
    return out


def _values(turns: Sequence[TurnScore], dim: str) -> list[float]:
    return [float(v) for t in turns if (v := t.scores[dim].score if dim in t.scores else None) is not None]


def compare_dimensions(
    a: Side, b: Side, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95
) -> dict[str, DiffRow] | None:
    """Each CallBench dimension's mean, B - A, with the bootstrap over calls (paired on the same calls)."""
    sa, sb = _side_scores(a), _side_scores(b)
    if sa is None or sb is None:
        return None
    paired = sorted(sa) == sorted(sb)
    ids_a, ids_b = sorted(sa), sorted(sb) if not paired else sorted(sa)
    out: dict[str, DiffRow] = {}
    for dim in DIMENSIONS:
        ua, ub = [_values(sa[i], dim) for i in ids_a], [_values(sb[i], dim) for i in ids_b]
        d = bootstrap_difference(
            ua, ub, "mean", paired=paired, n_resamples=n_resamples, seed=seed, level=level
        )
        out[dim] = diff_row(d)
    return out


def compare_judge_goals(
    a: Side, b: Side, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95
) -> dict[str, DiffRow] | None:
    """The judge's call verdicts as rates (goal met, met or partly, preset respected), B - A, bootstrapped
    over the calls each rate counts (:mod:`voice.metrics.scoring.verdicts`); None if a side is not scored
    or no rate has a value (the checklist judges no goal)."""
    ga, gb = _side_goals(a), _side_goals(b)
    if not ga or not gb:
        return None
    paired = sorted(ga) == sorted(gb)
    va, vb = [ga[i] for i in sorted(ga)], [gb[i] for i in sorted(gb)]
    out: dict[str, DiffRow] = {}
    for rate in RATES:
        ua, ub = verdict_units(va, rate), verdict_units(vb, rate)
        d = bootstrap_difference(
            ua, ub, "mean", paired=paired, n_resamples=n_resamples, seed=seed, level=level
        )
        if d.a is not None or d.b is not None:
            out[rate] = diff_row(d)
    return out or None


def _side_goals(side: Side) -> dict[str, GoalVerdict | None]:
    """Each call's verdict by the judge the side was scored with (empty unless every call is scored, as
    for the dimensions)."""
    judge = scored_by(side.folder)
    scores = [load_scores(side.folder, c.call_id, judge) for c in side.calls] if judge else []
    if not scores or any(s is None for s in scores):
        return {}
    return {s.call_id: s.goal for s in scores if s is not None}
