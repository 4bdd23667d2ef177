import numpy as np
import pytest

from voice.metrics.reduce import percentile, percentiles, reduce


def test_percentiles_interpolate_linearly_and_are_none_for_no_values():
    assert percentile([], 50) is None and percentile([1.0, 3.0], 50) == 2.0
    assert percentiles([1, 2, 3, 4], (50, 100)) == [2.5, 4.0]
    assert percentiles([], (50, 90)) == [None, None]
    assert percentiles(np.array([[1, 2], [3, 4]]), (0,)) == [1.0]  # any shape pools all values


def test_reductions():
    v = np.array([1.0, 2.0, 3.0, 4.0])
    assert reduce(v, "mean") == 2.5 and reduce(v, "p50") == 2.5 and reduce([1, 2], "mean") == 1.5
    assert reduce(np.zeros(0), "p90") is None
    with pytest.raises(ValueError, match="median"):
        reduce(v, "median")
