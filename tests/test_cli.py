import json

from voice.cli import build_parser, main
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.run.dataset import select_dialogues


def test_data_validate_reports_every_problem_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    good = json.loads(bundled_dialogues_path().read_text(encoding="utf-8").splitlines()[0])
    wrong = dict(good, scenario="pizza")
    bad.write_text("\n".join([json.dumps(good), "{oops", json.dumps(wrong)]) + "\n", encoding="utf-8")
    assert main(["data", "validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2:" in out and f"{bad}:3: scenario:" in out


def test_data_validate_and_stats_on_the_bundled_set(capsys):
    assert main(["data", "validate", str(bundled_dialogues_path())]) == 0
    assert main(["data", "stats", str(bundled_dialogues_path())]) == 0
    out = capsys.readouterr().out
    assert "harassment" in out and "barge-ins" in out


def test_default_selection_covers_every_scenario_first():
    ds = load_dialogues(bundled_dialogues_path())
    picked = select_dialogues(ds, limit=6)
    assert len({d.scenario for d in picked}) == 6
    assert {d.preset.type for d in picked} == {"regular", "emergent", "none"}
    assert select_dialogues(ds) == ds  # no limit: every dialogue, in file order
    assert [d.id for d in select_dialogues(ds, ids=["taxi-none-01", "work-regular-01"])] == [
        "taxi-none-01",
        "work-regular-01",
    ]


def test_run_and_bench_share_one_code_path_with_different_defaults():
    run = build_parser().parse_args(["run"])
    bench = build_parser().parse_args(["bench", "--target", "builtin", "--scenario", "taxi,work"])
    assert run.func is bench.func
    assert (run.concurrency, run.limit) == (1, 6)
    assert (bench.concurrency, bench.limit) == (None, None)
    assert bench.scenario == ["taxi,work"]


def test_bench_refuses_unknown_filter_values_in_one_line(capsys):
    assert main(["bench", "--scenario", "pizza", "--no-transcribe", "--tts", "memory"]) == 2
    err = capsys.readouterr().err
    assert "--scenario" in err and "pizza" in err and "takeout" in err and "Traceback" not in err


def test_errors_are_one_line_and_exit_2(capsys):
    assert main(["run", "--ids", "no-such-id", "--no-transcribe", "--target", "pcm+ws://127.0.0.1:9/x"]) == 2
    err = capsys.readouterr().err
    assert "no-such-id" in err and "Traceback" not in err
    assert main(["measure", "/nonexistent/call.wav"]) == 2
