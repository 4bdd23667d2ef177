"""A stopped run still writes what it can: partial results.json files, and an error that says it all."""

import json

from tests.records import short_delivery
from voice.app.run.calls import RunSettings, TargetRun
from voice.app.run.failures import failed_call
from voice.app.run.jobs import plan_jobs
from voice.app.run.outcome import finish_run
from voice.dialogues import parse_dialogue
from voice.errors import AssistantCrashed, StorageError


def jobs():
    return plan_jobs([parse_dialogue(short_delivery(f"d-{i}"), "mem", i) for i in (1, 2, 3)])


def test_a_stopped_run_writes_partial_results_and_says_what_it_kept(tmp_path):
    run = TargetRun(RunSettings(tmp_path, "t", "memory"), lambda: None)  # type: ignore[arg-type,return-value]
    made = [
        failed_call("d-1", "d-1", 1, "line_closed", ""),
        failed_call("d-2", "d-2", 1, "assistant_crashed", "x"),
    ]
    outcome = finish_run([run], jobs(), [[*made, None]], AssistantCrashed("the built-in assistant exited"))
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["partial"] == {"stopped": "the built-in assistant exited", "calls_not_made": 1}
    assert [c["call_id"] for c in doc["calls"]] == ["d-1", "d-2"]
    # the crashed call is CallSim's failure: in the calls, but in no figure of the assistant
    assert doc["summary"]["calls"] == doc["summary"]["calls_failed"] == 1
    assert doc["summary"]["simulator_failures"]["calls"] == ["d-2"]
    error = outcome.stopped_error()
    assert isinstance(error, AssistantCrashed)
    assert str(error) == (
        "the built-in assistant exited; the batch stopped: 2 call(s) recorded (1 assistant_crashed),"
        " 1 not made; a rerun resumes and makes those CallSim failed on again; partial results.json"
    )


def test_a_folder_that_refuses_results_json_is_said(tmp_path):
    run = TargetRun(RunSettings(tmp_path / "gone" / "x", "t", "memory"), lambda: None)  # type: ignore[arg-type,return-value]
    (tmp_path / "gone").write_text("a file where the folder should be")
    outcome = finish_run([run], jobs(), [[None, None, None]], StorageError("cannot write x: disk full"))
    error = outcome.stopped_error()
    assert isinstance(error, StorageError) and "results.json not written: " in str(error)
    assert "0 call(s) recorded, 3 not made; a rerun resumes;" in str(error)


def test_a_complete_run_has_no_partial_key(tmp_path):
    run = TargetRun(RunSettings(tmp_path, "t", "memory"), lambda: None)  # type: ignore[arg-type,return-value]
    outcome = finish_run([run], jobs()[:1], [[failed_call("d-1", "d-1", 1, "connect_failed", "x")]], None)
    assert outcome.stopped_error() is None and "partial" not in json.loads(
        (tmp_path / "results.json").read_text()
    )
