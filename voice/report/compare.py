"""``callsim compare``: two assistants, or two runs of one, figure by figure with bootstrap 95 % CIs.

Each side is read from a ``results.json`` (a target folder, or a run folder holding exactly one target; a run
folder with two targets compares those two).  The figures are :data:`voice.metrics.results.FIGURES`, pooled
exactly as in the summary; intervals come from :mod:`voice.metrics.bootstrap`, resampling calls. When both
sides hold the same call ids the bootstrap is paired.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice.errors import ConfigError
from voice.metrics.bootstrap import DEFAULT_RESAMPLES, bootstrap_difference
from voice.metrics.measure import CallMetrics
from voice.metrics.results import FIGURES, fmt_figure, read_results, target_folders, text_table, unit_values
from voice.run.resume import metrics_from_json


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a target's calls with their labels (scenario, preset type, relation)."""

    name: str
    folder: Path
    calls: list[CallMetrics]
    labels: list[dict[str, Any]]


def load_side(name: str, folder: Path) -> Side:
    doc = read_results(folder)
    calls = [metrics_from_json(c) for c in doc.get("calls", [])]
    labels = [{k: c.get(k) for k in ("scenario", "preset_type", "relation")} for c in doc.get("calls", [])]
    return Side(name, folder, calls, labels)


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
    a: Sequence[CallMetrics], b: Sequence[CallMetrics], *, n_resamples: int, seed: int, level: float
) -> dict[str, Any]:
    ids_a, ids_b = [c.call_id for c in a], [c.call_id for c in b]
    paired = len(set(ids_a)) == len(ids_a) and sorted(ids_a) == sorted(ids_b)
    if paired:
        by_id = {c.call_id: c for c in b}
        b = [by_id[i] for i in ids_a]
    rows = []
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
        rows.append(
            {
                "key": f.key,
                "label": f.label,
                "unit": f.unit,
                "a": d.a,
                "b": d.b,
                "diff": d.diff,
                "ci": [d.lo, d.hi],
                "significant": d.significant,
                "n_calls_with_values": [d.n_a, d.n_b],
            }
        )
    return {"calls": [len(a), len(b)], "paired": paired, "figures": rows}


def compare_sides(
    a: Side,
    b: Side,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
    by: str | None = None,
) -> dict[str, Any]:
    """Every headline figure of ``b`` minus ``a`` with its bootstrap interval; per group with ``by``."""
    if not a.calls or not b.calls:
        raise ConfigError("both sides need at least one call")
    kw: dict[str, Any] = {"n_resamples": n_resamples, "seed": seed, "level": level}
    doc: dict[str, Any] = {
        "a": {"name": a.name, "folder": str(a.folder)},
        "b": {"name": b.name, "folder": str(b.folder)},
        "resamples": n_resamples,
        "seed": seed,
        "level": level,
        "overall": _compare_calls(a.calls, b.calls, **kw),
    }
    if by:
        groups: dict[str, Any] = {}
        values = dict.fromkeys(str(lab.get(by)) for lab in [*a.labels, *b.labels])
        for v in values:
            ca = [c for c, lab in zip(a.calls, a.labels, strict=True) if str(lab.get(by)) == v]
            cb = [c for c, lab in zip(b.calls, b.labels, strict=True) if str(lab.get(by)) == v]
            if ca and cb:
                groups[v] = _compare_calls(ca, cb, **kw)
        doc["by"], doc["groups"] = by, groups
    return doc


def _signed(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    text = fmt_figure(abs(value), unit) if unit != "rate" else f"{100 * abs(value):.0f}pp"
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def _rows(block: Mapping[str, Any], prefix: str = "") -> list[list[str]]:
    rows = []
    for r in block["figures"]:
        lo, hi = r["ci"]
        ci = "-" if lo is None else f"[{_signed(lo, r['unit'])}, {_signed(hi, r['unit'])}]"
        rows.append(
            [
                prefix + r["label"] + (" (ms)" if r["unit"] == "ms" else ""),
                fmt_figure(r["a"], r["unit"]),
                fmt_figure(r["b"], r["unit"]),
                _signed(r["diff"], r["unit"]),
                ci + (" *" if r["significant"] else ""),
            ]
        )
    return rows


def format_comparison(doc: Mapping[str, Any]) -> str:
    """The comparison as a text table; ``*`` marks intervals that exclude 0."""
    overall = doc["overall"]
    pct = f"{100 * doc['level']:.0f}%"
    head = [
        f"A = {doc['a']['name']}  ({overall['calls'][0]} calls, {doc['a']['folder']})",
        f"B = {doc['b']['name']}  ({overall['calls'][1]} calls, {doc['b']['folder']})",
        f"bootstrap over calls: {doc['resamples']} resamples, seed {doc['seed']}, "
        + ("paired (same calls on both sides)" if overall["paired"] else "independent samples"),
        "",
    ]
    rows = _rows(overall)
    for value, block in doc.get("groups", {}).items():
        rows += _rows(block, f"{doc['by']}={value}: ")
    table = text_table(["figure", "A", "B", "B − A", f"{pct} CI"], rows)
    return "\n".join([*head, table, "", f"* the {pct} interval excludes 0; pp = percentage points"])
