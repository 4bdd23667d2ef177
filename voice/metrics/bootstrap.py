"""Bootstrap confidence intervals for the difference of a pooled figure between two sets of calls.

Turns of one call are not independent (the same assistant state, the same dialogue), so the call is the
resampling unit: each resample draws calls with replacement and pools their values before reducing them
(mean or percentile), exactly as the point estimate does.  When both sides ran the same calls (two
assistants on one dataset, or two runs of one assistant), the resample is *paired*: the same call ids are
drawn on both sides, which removes the between-dialogue variance from the difference.

Percentile intervals (2.5 % and 97.5 % of the resampled differences) from ``n_resamples`` draws of a
seeded numpy generator: the same inputs always give the same interval.  No interval at all when a side has
fewer than :data:`MIN_CI_CALLS` calls with values: resampling one call always draws that call, so its
"interval" is a point (``safety −2.00 [−2.00, −2.00]``) that says nothing of the spread; tables show
``n=1`` there instead (:func:`interval_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from voice.metrics.reduce import reduce

Units = Sequence[Sequence[float]]  # one list of values per call

DEFAULT_RESAMPLES = 2000
MIN_CI_CALLS = 2  # calls with values a side needs for an interval


@dataclass(frozen=True)
class Difference:
    """``b - a`` with its bootstrap interval; None where a side has no values at all."""

    a: float | None
    b: float | None
    diff: float | None
    lo: float | None
    hi: float | None
    n_a: int  # calls on each side that contribute values
    n_b: int
    paired: bool

    @property
    def significant(self) -> bool:
        """The interval excludes 0."""
        return self.lo is not None and self.hi is not None and (self.lo > 0 or self.hi < 0)


def _resampled(units: Units, idx: npt.NDArray[np.int64], how: str) -> npt.NDArray[np.float64]:
    """The statistic for every row of call indices ``idx`` (shape: resamples × calls); NaN if no values."""
    arrays = [np.asarray(u, dtype=np.float64) for u in units]
    if how == "mean":  # vectorised: pooled mean = sum of sums / sum of counts
        sums = np.array([a.sum() for a in arrays])
        counts = np.array([a.size for a in arrays], dtype=np.float64)
        s, n = sums[idx].sum(axis=1), counts[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, s / np.where(n > 0, n, 1), np.nan)
    out = np.full(idx.shape[0], np.nan)
    for r, row in enumerate(idx):
        pooled = np.concatenate([arrays[i] for i in row]) if len(row) else np.zeros(0)
        value = reduce(pooled, how)
        if value is not None:
            out[r] = value
    return out


def bootstrap_difference(
    a: Units,
    b: Units,
    how: str,
    *,
    paired: bool = False,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> Difference:
    """The difference ``b - a`` of a pooled figure with a percentile bootstrap interval over calls.

    ``a`` and ``b`` hold one list of values per call (possibly empty: a call without barge-ins has no
    barge-in values but still counts as a unit).  ``paired`` needs equal lengths, the i-th call of ``a``
    matching the i-th of ``b``.
    """
    if paired and len(a) != len(b):
        raise ValueError("a paired bootstrap needs the same calls on both sides")
    va = reduce(np.asarray([x for u in a for x in u], dtype=np.float64), how)
    vb = reduce(np.asarray([x for u in b for x in u], dtype=np.float64), how)
    n_a, n_b = sum(1 for u in a if len(u)), sum(1 for u in b if len(u))
    if va is None or vb is None:
        return Difference(va, vb, None, None, None, n_a, n_b, paired)
    if min(n_a, n_b) < MIN_CI_CALLS:  # one call resamples to itself: a point, not an interval
        return Difference(va, vb, vb - va, None, None, n_a, n_b, paired)
    rng = np.random.default_rng(seed)
    idx_a = rng.integers(0, len(a), size=(n_resamples, len(a)))
    idx_b = idx_a if paired else rng.integers(0, len(b), size=(n_resamples, len(b)))
    diffs = _resampled(b, idx_b, how) - _resampled(a, idx_a, how)
    diffs = diffs[~np.isnan(diffs)]  # resamples that drew no call with values on one side
    if diffs.size == 0:
        return Difference(va, vb, vb - va, None, None, n_a, n_b, paired)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(diffs, [tail, 100 - tail])
    return Difference(va, vb, vb - va, float(lo), float(hi), n_a, n_b, paired)


def interval_text(lo: float | None, hi: float | None, n: int, fmt: Callable[[float], str]) -> str:
    """An interval as tables show it: ``[lo, hi]``; ``n=1`` where a side had too few calls for one (``n``:
    the smaller side's calls with values); ``-`` where there is nothing to compare."""
    if lo is not None and hi is not None:
        return f"[{fmt(lo)}, {fmt(hi)}]"
    return f"n={n}" if 0 < n < MIN_CI_CALLS else "-"


def bootstrap_interval(
    units: Units, how: str, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """A pooled figure's own percentile interval over calls (one group: a voice's calls); None with fewer
    than :data:`MIN_CI_CALLS` calls that have values, or no values at all."""
    if sum(1 for u in units if len(u)) < MIN_CI_CALLS:
        return None
    rng = np.random.default_rng(seed)
    values = _resampled(units, rng.integers(0, len(units), size=(n_resamples, len(units))), how)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)
