"""bench_scale's rows are real runs: the local runner and the Ray runner make the same short calls against
the echo assistant; the table and the projection are built from what they measured."""

from __future__ import annotations

import os

import pytest

from voice.app.benchmarks.scale import Row, projection, run_rows, table

if not os.environ.get("CALLSIM_REQUIRE_RAY"):
    pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")


@pytest.mark.full  # on the run's Ray cluster (tests/conftest.py), which run_rows joins
def test_both_runners_make_the_calls_and_the_table_says_what_they_measured(ray_cluster, tmp_path) -> None:
    rows = run_rows([1], 1, tmp_path, ["local", "ray"])
    assert [(r.runner, r.workers, r.calls, r.failed) for r in rows] == [("local", 1, 1, 0), ("ray", 1, 1, 0)]
    for r in rows:
        assert (
            r.wall_s > r.mean_call_s > 1 and r.bytes_per_call > 10_000 and r.pacing_p99_worst_ms is not None
        )
    text = table(rows).splitlines()
    assert text[2].startswith("| local | 1 | 1 | 0 |") and text[3].startswith("| ray | 1 | 1 | 0 |")
    assert "(wav)" in text[2] and "(flac)" in text[3] and rows[1].bytes_per_call < rows[0].bytes_per_call


def test_the_projection_scales_the_best_rows_concurrency_to_callbench() -> None:
    row = Row("ray", 4, 16, 0, wall_s=60.0, driver_cpu_ms_per_call=5, bytes_per_call=1e6, mean_call_s=15.0,
              pacing_p99_worst_ms=1.0)  # fmt: skip
    # 16 calls/min of 15 s calls: 4 at once; 50,000 calls of 30 s on 10 machines: 50000*30/(4*10)/3600 h
    text = projection([row], call_s=30.0, machines=(1, 10))
    assert "4.0 calls at once per machine" in text and f"{50000 * 30 / 40 / 3600:,.1f} h" in text
