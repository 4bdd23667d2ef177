"""``callsim talk`` on the command line: files instead of devices, clear errors when there are none."""

from __future__ import annotations

import json

import numpy as np

from tests.app.live.test_talk import one_turn
from tests.fakes import tone
from tests.records import caller_first
from voice.app.cli import main
from voice.core.audio import ms_to_samples, silence
from voice.core.caller import CallerTiming
from voice.files import write_wav
from voice.speech.caller_plan import plan_call
from voice.speech.tts.memory import MemoryTTS


def test_talk_as_the_assistant_from_files_makes_a_run_folder_and_a_report(tmp_path, capsys):
    dialogue = one_turn()
    (tmp_path / "d.jsonl").write_text(json.dumps(caller_first(), ensure_ascii=False) + "\n")
    first = plan_call(dialogue, MemoryTTS(), CallerTiming(seed=0)).turns[0]
    reply_at = first.think + first.speech_end + ms_to_samples(500)
    write_wav(tmp_path / "me.wav", [np.concatenate([silence(reply_at), tone(600)])])
    args = ["talk", "--role", "assistant", "--dialogues", str(tmp_path / "d.jsonl"), "--tts", "memory"]
    args += ["--input-wav", str(tmp_path / "me.wav"), "--output-wav", str(tmp_path / "heard.wav")]
    args += ["--out", str(tmp_path / "run"), "--no-transcribe"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "you answer as the assistant" in out and "report:" in out
    assert (tmp_path / "run" / "report.html").exists() and (tmp_path / "heard.wav").exists()


def test_a_missing_input_file_or_dialogue_is_said_before_anything_starts(tmp_path, capsys):
    assert main(["talk", "--input-wav", str(tmp_path / "none.wav"), "--output-wav", "x.wav"]) == 2
    assert "no such WAV file" in capsys.readouterr().err
    write_wav(tmp_path / "me.wav", [tone(100)])
    assert main(["talk", "--id", "nope", "--input-wav", str(tmp_path / "me.wav")]) == 2
    assert "no dialogue 'nope'" in capsys.readouterr().err


def test_without_a_sound_device_the_error_says_what_to_do(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PULSE_SERVER", str(tmp_path / "no-such-socket"))  # no sound server to find
    write_wav(tmp_path / "me.wav", [tone(100)])
    code = main(["talk", "--input-wav", str(tmp_path / "me.wav"), "--output-device", "no-such-speaker-xyz"])
    assert code == 2
    err = capsys.readouterr().err
    assert "no output sound device no-such-speaker-xyz" in err and "--list-devices" in err


def test_a_bad_assistant_setting_is_one_line_before_any_device_or_dialogue(tmp_path, capsys):
    argv = ["talk", "--assistant-set", "turn_modl=silence", "--id", "nope", "--out", str(tmp_path)]
    assert main([*argv, "--input-device", "no-such-microphone-xyz"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "callsim: error: --assistant-set 'turn_modl=silence': unknown setting 'turn_modl'"
        " (did you mean turn_model?)\n"
    )
    assert not (tmp_path / "results.json").exists()


def test_a_bad_jitter_buffer_is_one_line_before_any_device_or_dialogue(tmp_path, capsys):
    argv = ["talk", "--target", "sip:bot@127.0.0.1:5070", "--jitter-buffer-ms", "5", "--id", "nope"]
    assert main([*argv, "--out", str(tmp_path), "--input-device", "no-such-microphone-xyz"]) == 2
    assert capsys.readouterr().err == (
        "callsim: error: --jitter-buffer-ms 5: takes a whole number of milliseconds, 20 to 1000\n"
    )


def test_a_talk_to_a_sip_target_takes_its_jitter_buffer_and_the_environments_credentials(monkeypatch):
    from pathlib import Path

    from voice.app.cli import build_parser
    from voice.app.live.command import _config, _sip_settings
    from voice.contract.tuning import Tuning
    from voice.lines.sip_settings import SipSettings

    monkeypatch.setenv("CALLSIM_SIP_USER", "callsim")
    monkeypatch.setenv("CALLSIM_SIP_PASSWORD", "s3cret")
    argv = ["talk", "--target", "sip:bot@127.0.0.1:5070", "--jitter-buffer-ms", "120", "--no-transcribe"]
    args = build_parser().parse_args(argv)
    config, _ = _config(args, Path("d.jsonl"), Tuning(), _sip_settings(args))
    assert config.sip == SipSettings("callsim", "s3cret", jitter_buffer_ms=120)
    args = build_parser().parse_args(["talk", "--no-transcribe"])  # the built-in over raw PCM: no SIP
    assert _sip_settings(args) == SipSettings(jitter_buffer_ms=60)


def test_the_web_page_off_loopback_needs_a_token(tmp_path, capsys, monkeypatch):
    """As ``serve``: anyone who can reach the port could call, or read the recorded calls."""
    assert main(["talk", "--web", "--host", "0.0.0.0", "--no-transcribe", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "host '0.0.0.0' is not a loopback address" in err and "--token" in err
    monkeypatch.delenv("NO_SUCH_TALK_TOKEN", raising=False)
    assert main(["talk", "--web", "--token-env", "NO_SUCH_TALK_TOKEN", "--no-transcribe"]) == 2
    assert "NO_SUCH_TALK_TOKEN: the environment variable is unset" in capsys.readouterr().err


def test_list_devices_prints_what_portaudio_sees(capsys):
    assert main(["talk", "--list-devices"]) == 0
