"""What bench and run print at the end: the banner of CallSim's own failures, and a Ray run's nodes."""

import json

from voice.app.run.console import print_banner, print_nodes
from voice.app.run.failures import CONNECT_FAILED, failed_call
from voice.metrics.model.call_record import call_to_json
from voice.metrics.results import summarize_run


def run_doc(partial=None):
    calls = [
        failed_call("k-1", "k", 1, "caller_speech_failed", "no voice"),
        failed_call("k-2", "k", 1, "x", ""),
    ]
    summary = summarize_run(calls, [{}, {}], redo="callsim run --out r")
    doc = {"kind": "run", "targets": [{"target": "bot", "folder": "bot", "summary": summary.to_json()}]}
    return {**doc, **({"partial": partial} if partial else {})}


def test_the_banner_is_printed_from_results_json_and_a_stopped_run_prints_only_its_own(tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(run_doc()))
    print_banner(path)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("CALLSIM FAILED on 1 of 2 call(s). This is CallSim's failure, not the assistant")
    assert out[1].endswith(": k-1") and out[-1] == "  redo them: callsim run --out r"
    print_banner(path, stopped=True)  # an earlier, complete run's file: not this stopped run's news
    assert capsys.readouterr().out == ""
    path.write_text(json.dumps(run_doc({"stopped": "cannot write x: disk full", "calls_not_made": 4})))
    print_banner(path, stopped=True)
    out = capsys.readouterr().out
    assert "and the run stopped (cannot write x: disk full)" in out and "not made: 4 call(s)" in out
    print_banner(tmp_path / "none.json")  # a stopped run that could not write it: its error says so
    assert capsys.readouterr().out == ""


def test_a_ray_runs_nodes_are_printed_with_a_flag_on_bad_pacing(tmp_path, capsys):
    def node(name, calls, rate, worst, flagged):
        keys = ("node", "calls", "calls_per_min", "pacing_p99_ms_worst", "pacing_flagged")
        return dict(zip(keys, (name, calls, rate, worst, flagged), strict=True))

    doc = {"nodes": [node("a:1", 4, 8.0, 1.5, False), node("b:2", 2, None, 7.25, True)]}
    (tmp_path / "results.json").write_text(json.dumps(doc))
    print_nodes(tmp_path / "results.json")
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "  a:1: 4 calls, 8.0 calls/min, worst frame-pacing p99 1.50 ms"
    assert out[-1] == "  b:2: 2 calls, -, worst frame-pacing p99 7.25 ms (FLAGGED: over 5 ms)"


def test_the_assistants_failed_calls_are_printed_on_top_with_what_to_do(tmp_path, capsys):
    refused = "cannot connect to ws://127.0.0.1:8765/pcm: [Errno 111] Connection refused"
    calls = [failed_call(f"k-{i}", "k", 2, CONNECT_FAILED, refused) for i in (1, 2)]
    summary = summarize_run(calls, [{}, {}])
    target = {
        "kind": "target",
        "target": "ws://bot",
        "summary": summary.to_json(),
        "calls": [call_to_json(c) for c in calls],
    }
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "results.json").write_text(json.dumps(target))
    run = {"kind": "run", "targets": [{"target": "ws://bot", "folder": "bot", "summary": summary.to_json()}]}
    (tmp_path / "results.json").write_text(json.dumps(run))
    print_banner(tmp_path / "results.json")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("FAILED CALLS: 2 of 2 call(s) failed (each kind below")
    assert (
        out[1].startswith("  connect_failed: 2 call(s), the assistant was not listening")
        and "k-1, k-2" in out[1]
    )
    assert out[2] == f"    e.g. {refused}" and "--wait-for-target 60" in out[3]
