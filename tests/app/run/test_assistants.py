"""A run's targets, opened: settings and fingerprint per target, lines from the factories, the exit probe."""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys

from tests.fakes import reference
from voice.app.run.assistants import (
    builtin_args,
    exit_probe,
    next_log_path,
    open_target_runs,
    target_settings,
)
from voice.app.run.bench_config import BenchConfig
from voice.contract.tuning import parse_tuning
from voice.lines.memory import MemoryLine
from voice.lines.sip_settings import SipSettings
from voice.lines.targets import parse_target
from voice.lines.webrtc_settings import WebrtcSettings

PCM = "pcm+ws://127.0.0.1:9/pcm"


def test_a_remote_targets_settings_record_its_line_and_header_names_never_values(tmp_path) -> None:
    config = BenchConfig(out=tmp_path, targets=(PCM,), tts="memory", seed=7, headers=(("X-Key", "s3cret"),))
    settings = target_settings(config, parse_target(PCM), tmp_path / "t")
    assert settings.out_dir == tmp_path / "t" and settings.timing.seed == 7
    fp = settings.fingerprint()
    assert fp["headers"] == ["X-Key"] and "s3cret" not in repr(fp)
    assert "assistant_tts" not in fp  # only a built-in target records its voice


def test_the_built_in_targets_settings_record_its_voice_policy_and_overrides(tmp_path) -> None:
    config = BenchConfig(
        out=tmp_path, tts="espeak", policy="mod:make", assistant_settings=parse_tuning(["turn-model=silence"])
    )
    fp = target_settings(config, parse_target("builtin"), tmp_path).fingerprint()
    assert (fp["assistant_tts"], fp["policy"], fp["assistant_settings"]) == (
        "espeak",
        "mod:make",
        "turn_model=silence",
    )


def test_a_sip_targets_settings_record_its_sip_settings_described_never_the_password(tmp_path) -> None:
    sip = SipSettings("callsim", "s3cret", jitter_buffer_ms=120)
    config = BenchConfig(out=tmp_path, tts="memory", sip=sip, webrtc=WebrtcSettings({"mode": "eval"}))
    for target in ("sip:bot@127.0.0.1:5070", "builtin+sip"):
        fp = target_settings(config, parse_target(target), tmp_path).fingerprint()
        assert fp["sip"] == {"user": "callsim", "password_set": True, "jitter_buffer_ms": 120}
        assert "s3cret" not in repr(fp) and "webrtc" not in fp
    for target in (PCM, "builtin", "builtin+webrtc", "webrtc+http://127.0.0.1:9/api/offer"):
        assert "sip" not in target_settings(config, parse_target(target), tmp_path).fingerprint()


def test_without_sip_settings_the_record_is_the_environments(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CALLSIM_SIP_USER", "env-user")
    monkeypatch.delenv("CALLSIM_SIP_PASSWORD", raising=False)
    fp = target_settings(BenchConfig(out=tmp_path), parse_target("sip:bot@127.0.0.1"), tmp_path).fingerprint()
    assert fp["sip"] == {"user": "env-user", "password_set": False, "jitter_buffer_ms": 60}


async def test_every_line_factory_gets_the_runs_webrtc_and_sip_settings(tmp_path, monkeypatch) -> None:
    import voice.app.run.assistants as assistants

    seen: list[dict[str, object]] = []
    monkeypatch.setattr(assistants, "make_line_factory", lambda target, **kw: seen.append(kw) or MemoryLine)
    sip, webrtc = SipSettings("callsim", "s3cret", jitter_buffer_ms=120), WebrtcSettings({"mode": "eval"})
    config = BenchConfig(out=tmp_path, tts="memory", sip=sip, webrtc=webrtc)
    targets = [parse_target(t) for t in ("sip:bot@127.0.0.1:5070", PCM)]
    async with contextlib.AsyncExitStack() as stack:
        await open_target_runs(stack, config, targets, [tmp_path / "a", tmp_path / "b"], log_dir=tmp_path)
    assert [(kw["sip"], kw["webrtc"]) for kw in seen] == [(sip, webrtc), (sip, webrtc)]


def test_the_built_in_takes_twice_the_runs_concurrency_and_its_settings(tmp_path) -> None:
    """``bench --concurrency 40`` against the built-in: the server (8 calls on 2 CPUs by default) must not
    refuse calls 9..40 with 1013."""
    import argparse

    from server.serve_options import add_serve_options, settings_from_args

    tuning = parse_tuning(["vad_stop_secs=0.3"], option="--assistant-set")
    config = BenchConfig(out=tmp_path, concurrency=40, assistant_settings=tuning)
    args = builtin_args(config)
    assert args == ["--set", "vad_stop_secs=0.3", "--max-calls", "80"]
    parser = argparse.ArgumentParser()
    add_serve_options(parser)
    parsed = parser.parse_args(args)
    settings = settings_from_args(parsed)
    assert (settings.serving.max_calls, settings.turns) == (80, tuning.turns)  # the values parsed at entry
    # without --concurrency the server keeps its own bound (the run's default is below it)
    assert builtin_args(BenchConfig(out=tmp_path)) == []


async def test_targets_with_a_line_factory_open_no_assistant(tmp_path) -> None:
    config = BenchConfig(out=tmp_path, targets=(PCM,), tts="memory")
    made: list[MemoryLine] = []

    def factory() -> MemoryLine:
        made.append(MemoryLine(reference()))
        return made[-1]

    async with contextlib.AsyncExitStack() as stack:
        [run] = await open_target_runs(
            stack, config, [parse_target(PCM)], [tmp_path / "a"], log_dir=tmp_path, labels=["a"],
            line_factories={PCM: factory},
        )  # fmt: skip
        assert run.label == "a" and run.crashed is None and run.make_line() is made[0]
    assert not (tmp_path / "assistant.log").exists()


def test_the_exit_probe_says_why_a_process_is_gone(tmp_path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"])
    probe = exit_probe(proc, tmp_path / "assistant.log")
    proc.wait()
    assert probe() == f"the built-in assistant exited (code 3; its log: {tmp_path / 'assistant.log'})"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert exit_probe(sleeper, tmp_path / "x.log")() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_bench_config_travels_to_ray_workers(tmp_path) -> None:
    config = BenchConfig(out=tmp_path, targets=(PCM,), tts="memory", ray="auto", sip=SipSettings("u", "p"))
    assert pickle.loads(pickle.dumps(config)) == config


def test_each_run_start_logs_the_assistant_to_a_new_file(tmp_path):
    assert next_log_path(tmp_path) == tmp_path / "assistant.1.log"
    for name in ("assistant.1.log", "assistant.7.log", "assistant.log", "assistant.x.log"):
        (tmp_path / name).write_text("")
    assert next_log_path(tmp_path) == tmp_path / "assistant.8.log"
