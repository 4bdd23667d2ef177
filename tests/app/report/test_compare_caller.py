"""``callsim compare`` with a reactive caller: its goal figures side by side, and a caller that differs."""

import json

import pytest

from tests.reactive_runs import reactive_bench
from tests.runs import bench, mini
from voice.app.cli import main
from voice.app.report.compare import compare_sides, pick_sides
from voice.app.report.comparison import format_comparison

GOAL_KEYS = ["goal_met_rate", "goal_met_or_partly_rate", "goal_time_p50_ms", "goal_turns_mean"]


@pytest.fixture
async def reactive_dir(tmp_path, no_openai_env):
    out = tmp_path / "reactive"
    await reactive_bench(out, [mini(i, barge=i % 2 == 0) for i in range(3)])
    return out


async def test_two_reactive_sides_compare_the_callers_goal_figures(reactive_dir, capsys):
    a, b = pick_sides(reactive_dir, None)
    assert a.labels[0]["persona"] == "patient" and a.calls[0].goal is not None
    doc = compare_sides(a, b, n_resamples=200, by="persona")
    rows = {r["key"]: r for r in doc["overall"]["figures"]}
    assert [k for k in rows if k.startswith("goal_")] == GOAL_KEYS
    summary_b = json.loads((b.folder / "results.json").read_text())["summary"]
    assert rows["goal_met_rate"]["b"] == summary_b["goal"]["goal_met_rate"] == 1.0
    assert rows["goal_time_p50_ms"]["b"] == summary_b["goal"]["time_p50_ms"]
    assert rows["goal_time_p50_ms"]["diff"] > 0  # the slower assistant takes longer to get the caller there
    assert list(doc["groups"]) == ["patient"] and not doc["mismatch"]
    text = format_comparison(doc)
    assert "caller: goal met" in text and "caller: time to outcome p50 (ms)" in text
    gate = ["--fail-if", "delta.goal_time_p50_ms>100", "--fail-if", "b.goal.time_p90_ms>600000"]
    assert main(["compare", str(reactive_dir), "--resamples", "100", *gate]) == 4
    assert "GATE BROKEN: B − A" in capsys.readouterr().err


async def test_a_scripted_side_shows_no_goal_rows_and_the_caller_is_a_difference(reactive_dir, tmp_path):
    scripted = tmp_path / "scripted"
    await bench(scripted, [mini(i, barge=i % 2 == 0) for i in range(3)])
    a, b = pick_sides(scripted / "pcm-ws-a.test-pcm", reactive_dir / "pcm-ws-a.test-pcm")
    assert "persona" not in a.labels[0]  # a scripted call has no persona to group by
    doc = compare_sides(a, b, n_resamples=100)
    assert not [r for r in doc["overall"]["figures"] if r["key"].startswith("goal_")]
    assert "reactive caller: caller: (none) → openai:rules" in doc["mismatch"]
    assert "reactive caller: persona: (none) → patient" in doc["mismatch"]
