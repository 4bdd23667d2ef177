"""openai:MODEL specs and the client's settings: flags first, then OPENAI_BASE_URL / OPENAI_API_KEY."""

import pytest

from voice.errors import ConfigError
from voice.llm.settings import DEFAULT_BASE_URL, LLMSettings, ModelSpec, parse_model_spec


def test_a_model_spec_names_an_openai_compatible_model():
    assert parse_model_spec("openai:deepseek-chat") == ModelSpec("openai", "deepseek-chat")
    assert parse_model_spec("openai:qwen2.5:7b").model == "qwen2.5:7b"  # Ollama tags keep their colon
    assert parse_model_spec("openai:Qwen/Qwen2.5-7B-Instruct").model == "Qwen/Qwen2.5-7B-Instruct"


@pytest.mark.parametrize("spec", ["checklist", "openai:", "openai: ", "anthropic:claude", "gpt-4o"])
def test_anything_else_is_a_config_error_that_shows_the_form(spec):
    with pytest.raises(ConfigError, match="openai:MODEL"):
        parse_model_spec(spec)


def test_flags_win_over_the_environment_which_wins_over_the_default():
    env = {"OPENAI_BASE_URL": "http://gpu:8000/v1/", "OPENAI_API_KEY": "sk-env"}
    from_env = LLMSettings("m").resolved(env)
    assert (from_env.base_url, from_env.api_key) == ("http://gpu:8000/v1", "sk-env")
    flags = LLMSettings("m", base_url="http://localhost:11434/v1", api_key="sk-flag").resolved(env)
    assert (flags.base_url, flags.api_key) == ("http://localhost:11434/v1", "sk-flag")
    bare = LLMSettings("m").resolved({})
    assert (bare.base_url, bare.api_key) == (DEFAULT_BASE_URL, "")


def test_the_key_never_shows_in_the_settings_repr():
    assert "sk-secret" not in repr(LLMSettings("m", api_key="sk-secret"))


@pytest.mark.parametrize(
    "bad",
    [
        {"model": " "},
        {"model": "m", "attempts": 0},
        {"model": "m", "concurrency": 0},
        {"model": "m", "timeout_s": 0},
        {"model": "m", "json_mode": "grammar"},
        {"model": "m", "cache": "sometimes"},
    ],
)
def test_bad_settings_are_refused(bad):
    with pytest.raises(ConfigError):
        LLMSettings(**bad)
