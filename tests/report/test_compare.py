"""``callsim compare``: two targets of a run, or two runs, with bootstrap intervals read from results.json."""

import json

import pytest

from tests.runs import bench, mini
from voice.cli import main
from voice.errors import ConfigError
from voice.metrics.results import FIGURES
from voice.report.compare import compare_sides, format_comparison, pick_sides


@pytest.fixture
async def run_dir(tmp_path):
    ds = [mini(i, barge=i % 2 == 0) for i in range(4)]
    await bench(tmp_path, ds, repeats=2, concurrency=4)
    return tmp_path


async def test_a_slower_assistant_shows_a_significant_latency_difference(run_dir):
    a, b = pick_sides(run_dir, None)
    doc = compare_sides(a, b, n_resamples=500)
    assert doc["overall"]["paired"] and doc["overall"]["calls"] == [8, 8]
    rows = {r["key"]: r for r in doc["overall"]["figures"]}
    lat = rows["latency_p50_ms"]
    summary_a = json.loads((a.folder / "results.json").read_text())["summary"]
    assert lat["a"] == summary_a["latency_ms"]["p50"]  # the same figure as the summary
    assert lat["diff"] == pytest.approx(600, abs=40)  # scripted: 300 ms vs 900 ms after the caller
    assert lat["ci"][0] <= lat["diff"] <= lat["ci"][1] and lat["significant"]
    assert rows["barge_in_success_rate"]["a"] == 1.0
    text = format_comparison(doc)
    assert "latency p50" in text and "paired" in text and "*" in text


async def test_two_runs_of_one_assistant_and_groups(run_dir, tmp_path_factory):
    folder_a = run_dir / "pcm-ws-a.test-pcm"
    a, b = pick_sides(folder_a, folder_a)  # the same run twice: every difference is exactly 0
    doc = compare_sides(a, b, n_resamples=200, by="scenario")
    assert all(r["diff"] in (0, None) and not r["significant"] for r in doc["overall"]["figures"])
    assert list(doc["groups"]) == ["delivery"]
    with pytest.raises(ConfigError, match="name one of its folders"):
        pick_sides(run_dir, folder_a)


async def test_the_command_prints_a_table_and_writes_json(run_dir, capsys):
    out = run_dir / "cmp.json"
    assert main(["compare", str(run_dir), "--json", str(out), "--resamples", "300"]) == 0
    printed = capsys.readouterr().out
    assert "B − A" in printed and "95% CI" in printed
    doc = json.loads(out.read_text())
    assert doc["resamples"] == 300 and len(doc["overall"]["figures"]) == len(FIGURES)
    assert main(["compare", str(run_dir / "nowhere")]) == 2
