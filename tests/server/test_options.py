"""The options of ``callsim serve`` / ``python -m server`` (``server/options.py``) and what they become."""

from __future__ import annotations

import argparse

import pytest

from server.__main__ import main as server_main
from server.config import AssistantSettings
from server.options import add_serve_options, settings_kwargs
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
    settings = AssistantSettings(**settings_kwargs(args))
    assert (settings.token, settings.max_calls, settings.socket_idle_secs) == ("t0k", 3, 2.5)
    assert settings.allowed_origins == ("https://a.example", "https://b.example")
    assert (settings.max_call_secs, settings.prewarm) == (60, False)
    assert "t0k" not in repr(settings)  # a token is never logged with the settings


def test_unset_limits_keep_the_defaults() -> None:
    settings = AssistantSettings(**settings_kwargs(parse()))
    defaults = AssistantSettings()
    assert (settings.max_calls, settings.socket_idle_secs, settings.max_call_secs, settings.prewarm) == (
        defaults.max_calls, defaults.socket_idle_secs, defaults.max_call_secs, True,
    )  # fmt: skip


def test_the_token_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVE_TOKEN", "from-env")
    assert settings_kwargs(parse("--token-env", "MY_SERVE_TOKEN"))["token"] == "from-env"
    with pytest.raises(ConfigError, match="not both"):
        settings_kwargs(parse("--token-env", "MY_SERVE_TOKEN", "--token", "x"))
    monkeypatch.delenv("MY_SERVE_TOKEN")
    with pytest.raises(ConfigError, match="MY_SERVE_TOKEN: the environment variable is unset"):
        settings_kwargs(parse("--token-env", "MY_SERVE_TOKEN"))


def test_a_network_bind_without_a_token_refuses_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert server_main(["--host", "0.0.0.0", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert "host '0.0.0.0' is not a loopback address" in err and "--token" in err
