"""The options of ``callsim serve`` / ``python -m server`` (``server/serve_options.py``) and what they
become."""

from __future__ import annotations

import argparse

import pytest

from server.__main__ import main as server_main
from server.config import ServingSettings
from server.serve_options import add_serve_options, settings_from_args
from voice.errors import ConfigError


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_serve_options(p)
    return p.parse_args(list(argv))


def test_the_serving_limits_reach_the_settings() -> None:
    args = parse(
        "--token", "t0k", "--allow-origin", "https://a.example", "--allow-origin", "https://b.example",
        "--max-calls", "3", "--idle-timeout", "2.5", "--max-call-secs", "60", "--no-prewarm",
    )  # fmt: skip
    settings = settings_from_args(args)
    serving = settings.serving
    assert (serving.token, serving.max_calls, serving.socket_idle_secs) == ("t0k", 3, 2.5)
    assert serving.allowed_origins == ("https://a.example", "https://b.example")
    assert (serving.max_call_secs, settings.prewarm) == (60, False)
    assert "t0k" not in repr(settings)  # a token is never logged with the settings


def test_unset_limits_keep_the_defaults() -> None:
    settings = settings_from_args(parse())
    assert (settings.serving, settings.prewarm) == (ServingSettings(), True)


def test_the_other_options_reach_their_groups_and_set_pairs_are_parsed_once_here() -> None:
    args = parse(
        "--tts", "memory", "--policy", "openai:qwen", "--policy-base-url", "http://127.0.0.1:9/v1",
        "--verbose", "--set", "turn_model=silence", "--set", "asr_audio_context_s=full",
    )  # fmt: skip
    settings = settings_from_args(args)
    assert (settings.speech.tts, settings.speech.asr_audio_context_s, settings.turns.turn_model) == (
        "memory", None, "silence",
    )  # fmt: skip
    assert (settings.policy.policy, settings.policy.policy_base_url) == (
        "openai:qwen",
        "http://127.0.0.1:9/v1",
    )
    assert settings.verbose
    with pytest.raises(ConfigError, match=r"^--set 'turn_modle=silence': .*did you mean turn_model\?"):
        settings_from_args(parse("--set", "turn_modle=silence"))


def test_the_token_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVE_TOKEN", "from-env")
    assert settings_from_args(parse("--token-env", "MY_SERVE_TOKEN")).serving.token == "from-env"
    with pytest.raises(ConfigError, match="not both"):
        settings_from_args(parse("--token-env", "MY_SERVE_TOKEN", "--token", "x"))
    monkeypatch.delenv("MY_SERVE_TOKEN")
    with pytest.raises(ConfigError, match="MY_SERVE_TOKEN: the environment variable is unset"):
        settings_from_args(parse("--token-env", "MY_SERVE_TOKEN"))


def test_a_network_bind_without_a_token_refuses_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert server_main(["--host", "0.0.0.0", "--port", "0"]) == 2  # bad input, as for any option
    err = capsys.readouterr().err
    assert "host '0.0.0.0' is not a loopback address" in err and "--token" in err


def test_sip_names_the_gateways_udp_port() -> None:
    assert settings_from_args(parse()).serving.sip_port is None
    assert settings_from_args(parse("--sip", "0")).serving.sip_port == 0
    with pytest.raises(ConfigError, match="sip_port"):
        settings_from_args(parse("--sip", "70000"))
