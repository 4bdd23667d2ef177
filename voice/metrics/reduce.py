"""The one reducer of pooled values: a mean or a linear-interpolation percentile, None for no values.

Every figure CallSim prints (latency p50/p90, stop latency, pacing, fidelity errors, bootstrap point
estimates) goes through here, so two tables can never disagree on what "p90" means.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def percentiles(values: npt.ArrayLike, qs: Sequence[float]) -> list[float | None]:
    """The ``qs``-th percentiles (linear interpolation) of ``values``; Nones for no values."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 0:
        return [None] * len(qs)
    return [float(v) for v in np.percentile(arr, list(qs))]


def percentile(values: npt.ArrayLike, q: float) -> float | None:
    """The ``q``-th percentile (linear interpolation), or None for no values."""
    return percentiles(values, (q,))[0]


def reduce(values: npt.ArrayLike, how: str) -> float | None:
    """``mean`` or ``pNN`` (``p50``, ``p90``, ``p99``...) of pooled values; None for no values."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 0:
        return None
    if how == "mean":
        return float(arr.mean())
    if not how.startswith("p"):
        raise ValueError(f"unknown reduction {how!r} (mean or pNN)")
    return percentile(arr, float(how[1:]))
