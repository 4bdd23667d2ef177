"""Resuming a folder: the settings it was made with, which finished calls it holds, how they are read back."""

import json

import pytest

from tests.records import short_delivery
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError
from voice.run.resume import check_resumable, dialogue_sha, kept_call, load_done, remove_partial_files


def test_a_half_written_metrics_file_does_not_count_as_done(tmp_path):
    (tmp_path / "d-1.metrics.json").write_text("{trunc")
    assert load_done(tmp_path, "d-1") is None
    assert load_done(tmp_path, "d-2") is None


def test_a_call_is_kept_only_for_the_same_dialogue_content(tmp_path):
    d = parse_dialogue(short_delivery("d-1"), "mem", 1)
    edited = parse_dialogue({**short_delivery("d-1"), "owner_goal": "别打扰我"}, "mem", 1)
    assert dialogue_sha(d) != dialogue_sha(edited) and dialogue_sha(d) == dialogue_sha(d)
    done = {"call_id": "d-1", "dialogue_sha": dialogue_sha(d)}
    (tmp_path / "d-1.metrics.json").write_text(json.dumps(done))
    assert kept_call(tmp_path, "d-1", dialogue_sha(d)) is not None
    assert kept_call(tmp_path, "d-1", dialogue_sha(edited)) is None


def test_the_settings_fingerprint_is_written_and_a_different_one_refused(tmp_path):
    check_resumable(tmp_path, {"tts": "memory", "timing": {"seed": 0}})
    assert json.loads((tmp_path / "run.json").read_text())["settings"]["tts"] == "memory"
    check_resumable(tmp_path, {"tts": "memory", "timing": {"seed": 0}})  # the same: resumes
    with pytest.raises(ConfigError, match="other settings"):
        check_resumable(tmp_path, {"tts": "memory", "timing": {"seed": 1}})


def test_leftover_temporary_files_are_removed(tmp_path):
    (tmp_path / ".d-1.metrics.json.x1y2.tmp").write_text('{"half')
    (tmp_path / "d-2.metrics.json").write_text("{}")
    assert remove_partial_files(tmp_path) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["d-2.metrics.json"]
