"""Bootstrap intervals over calls: they cover the truth, sit on 0 for identical runs, and are reproducible."""

import numpy as np
import pytest

from voice.metrics.bootstrap import bootstrap_difference, interval_text


def calls(rng, n_calls, mean, spread=200.0, call_sd=150.0):
    """Latency lists per call: each call has its own offset (turns of one call are correlated)."""
    out = []
    for _ in range(n_calls):
        offset = rng.normal(0, call_sd)
        out.append(list(rng.normal(mean + offset, spread, size=rng.integers(1, 6))))
    return out


def test_identical_runs_give_an_interval_on_zero():
    a = calls(np.random.default_rng(1), 30, 1000)
    d = bootstrap_difference(a, a, "p50", paired=True)
    assert d.diff == 0 and d.lo == 0 and d.hi == 0 and not d.significant
    d = bootstrap_difference(a, a, "mean", paired=False)  # independent resamples still straddle 0
    assert d.diff == 0 and d.lo < 0 < d.hi and not d.significant


def test_a_real_shift_is_found_and_covered():
    rng = np.random.default_rng(2)
    a = calls(rng, 40, 1000)
    b = [[x + 300 for x in u] for u in a]  # the same calls, 300 ms slower
    for how in ("mean", "p50", "p90"):
        d = bootstrap_difference(a, b, how, paired=True)
        assert d.lo <= 300 <= d.hi and d.significant
        assert d.diff == pytest.approx(300)


def test_intervals_cover_the_true_difference_about_95_percent_of_the_time():
    rng = np.random.default_rng(3)
    covered = 0
    trials = 120
    for k in range(trials):
        a, b = calls(rng, 25, 1000), calls(rng, 25, 1100)
        d = bootstrap_difference(a, b, "mean", n_resamples=1000, seed=k)
        covered += d.lo <= 100 <= d.hi
    assert 0.85 <= covered / trials <= 1.0


def test_rates_of_booleans_and_calls_without_values():
    a = [[1.0, 1.0], [], [0.0]]  # a call with no barge-ins still counts as a unit
    b = [[0.0], [0.0, 0.0], []]
    d = bootstrap_difference(a, b, "mean")
    assert d.a == pytest.approx(2 / 3) and d.b == 0 and d.diff == pytest.approx(-2 / 3)
    assert d.n_a == 2 and d.n_b == 2
    assert bootstrap_difference([[]], b, "mean").diff is None  # nothing to compare on one side


def test_same_seed_same_interval_and_paired_needs_the_same_calls():
    a, b = calls(np.random.default_rng(4), 10, 1000), calls(np.random.default_rng(5), 10, 900)
    assert bootstrap_difference(a, b, "p90", seed=9) == bootstrap_difference(a, b, "p90", seed=9)
    with pytest.raises(ValueError):
        bootstrap_difference(a, b[:5], "mean", paired=True)


def test_one_call_a_side_gives_the_difference_but_no_interval():
    one, many = [[-2.0]], [[1.0], [2.0], [3.0]]
    d = bootstrap_difference(one, [[0.0]], "mean", paired=True)  # a resampled single call is itself
    assert d.diff == 2.0 and d.lo is None and d.hi is None and not d.significant
    assert bootstrap_difference(one, many, "mean").lo is None  # too few on one side is enough
    assert bootstrap_difference(many, [[4.0], [5.0]], "mean").lo is not None  # two calls: an interval


def test_an_interval_is_shown_only_where_there_is_one():
    assert interval_text(-1.0, 2.5, 5, lambda x: f"{x:+.2f}") == "[-1.00, +2.50]"
    assert interval_text(None, None, 1, str) == "n=1"  # one call: the difference alone
    assert interval_text(None, None, 0, str) == interval_text(None, None, 4, str) == "-"
