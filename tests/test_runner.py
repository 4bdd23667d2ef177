"""Runs: many calls, resumable, atomic — on virtual time with the in-memory line, TTS and ASR doubles."""

import json

import pytest

from tests.fakes import MemoryBot, ScriptedAssistant
from voice.caller import CallerTiming
from voice.clock import VirtualClock
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError, LineError
from voice.lines.memory import MemoryLine
from voice.runner import RunSettings, load_done, run_dialogues
from voice.speech.asr import MemoryASR
from voice.speech.tts import MemoryTTS


def dialogue(i: int):
    return parse_dialogue(
        {
            "id": f"d-{i}",
            "scenario": "delivery",
            "preset": {"type": "none", "text": ""},
            "owner_goal": "收快递",
            "caller_goal": "送快递",
            "relation": "alignment",
            "turns": [
                {"role": "assistant", "text": "您好。"},
                {"role": "caller", "text": "快递到了。"},
                {"role": "assistant", "text": "放驿站吧。"},
            ],
        },
        "mem",
        i,
    )


class Lines:
    def __init__(self, fail_on: int | None = None):
        self.made = 0
        self.fail_on = fail_on

    def __call__(self):
        self.made += 1
        if self.made == self.fail_on:
            raise LineError("assistant unreachable")
        return MemoryLine(MemoryBot(ScriptedAssistant(reply_len_ms=600, greeting_ms=200)))


def settings(tmp_path, **kw):
    return RunSettings(out_dir=tmp_path, target="memory", tts_name="memory", timing=CallerTiming(**kw))


async def run(tmp_path, lines, dialogues, **kw):
    return await run_dialogues(
        dialogues,
        settings(tmp_path, **kw),
        lines,
        MemoryTTS(),
        MemoryASR(["放驿站吧"] * 10),
        clock=VirtualClock(),
    )


async def test_a_run_writes_recordings_metrics_and_results(tmp_path):
    results = await run(tmp_path, Lines(), [dialogue(1), dialogue(2)])
    assert [m.call_id for m in results] == ["d-1", "d-2"]
    for cid in ("d-1", "d-2"):
        for suffix in (".wav", ".events.jsonl", ".metrics.json"):
            assert (tmp_path / f"{cid}{suffix}").exists()
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["summary"]["calls"] == 2 and data["summary"]["turns_completed"] == 2
    assert data["calls"][0]["turns"][0]["heard_text"] == "放驿站吧"
    assert data["calls"][0]["turns"][0]["reference"] == "放驿站吧。"
    assert not list(tmp_path.glob("*.tmp"))


async def test_an_interrupted_run_resumes_without_redoing_finished_calls(tmp_path):
    first = await run(tmp_path, Lines(fail_on=2), [dialogue(1), dialogue(2)])
    assert [(m.outcome, m.failed) for m in first] == [("completed", False), ("connect_failed", True)]
    assert load_done(tmp_path, "d-1") is not None and load_done(tmp_path, "d-2") is None
    lines = Lines()
    results = await run(tmp_path, lines, [dialogue(1), dialogue(2)])
    assert lines.made == 1  # only the missing call was made
    assert [m.turns_completed for m in results] == [1, 1]


async def test_a_folder_with_other_settings_is_refused(tmp_path):
    await run(tmp_path, Lines(), [dialogue(1)])
    with pytest.raises(ConfigError, match="other settings"):
        await run(tmp_path, Lines(), [dialogue(1)], seed=99)


async def test_a_half_written_metrics_file_does_not_count_as_done(tmp_path):
    (tmp_path / "d-1.metrics.json").write_text("{trunc")
    assert load_done(tmp_path, "d-1") is None
