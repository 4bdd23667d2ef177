"""Transcribers by name: Whisper with the reply settings by default; OpenAI-compatible servers."""

from __future__ import annotations

import pytest

from voice.errors import ConfigError
from voice.speech.asr import DEFAULT_PROMPT, WhisperASR
from voice.speech.openai_asr import DEFAULT_BASE_URL, OpenAIASR
from voice.speech.transcribers import (
    ASSISTANT_WHISPER,
    REPLY_PROMPT,
    REPLY_WHISPER,
    WhisperSettings,
    check_transcriber,
    make_transcriber,
)


@pytest.fixture(autouse=True)
def _no_server_env(monkeypatch):
    for name in ("CALLSIM_ASR_BASE_URL", "CALLSIM_ASR_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_whisper_is_the_default_with_the_reply_settings():
    asr = make_transcriber()
    assert isinstance(asr, WhisperASR)
    described = asr.describe()
    assert described.startswith("whisper-base int8 faster-whisper/")
    assert f"beam={REPLY_WHISPER.beam_size}" in described and "language=zh" in described
    assert "prompt=以下是电话助…" in described  # the prompt by its start and a hash
    assert "hotwords=机主 外卖 …" in described
    assert asr._model is None  # nothing loads until the first transcription


def test_whisper_settings_are_passed_and_every_one_shows_in_describe():
    assistant = make_transcriber("whisper", whisper=ASSISTANT_WHISPER).describe()
    assert "beam=1" in assistant and "hotwords=none" in assistant
    assert WhisperSettings(1, DEFAULT_PROMPT, None) == ASSISTANT_WHISPER
    hot = make_transcriber("whisper", whisper=WhisperSettings(5, None, "机主 外卖")).describe()
    assert "prompt=none" in hot and "hotwords=机主 外卖…" in hot
    other = make_transcriber("whisper", whisper=WhisperSettings(5, None, "机主 快递")).describe()
    assert other != hot  # a different text, a different description (cached CERs key on it)


def test_openai_takes_the_model_from_the_name_and_the_server_from_flags():
    asr = make_transcriber("openai:whisper-large-v3", base_url="http://localhost:9000/v1/", timeout_s=5)
    assert isinstance(asr, OpenAIASR) and asr.model == "whisper-large-v3"
    assert asr.base_url == "http://localhost:9000/v1"
    assert asr.describe().startswith(
        "openai:whisper-large-v3 at http://localhost:9000/v1 language=zh prompt="
    )
    assert asr._prompt == REPLY_PROMPT


def test_openai_server_and_key_come_from_callsim_then_openai_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://chat:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-chat")
    asr = make_transcriber("openai:m")
    assert isinstance(asr, OpenAIASR) and asr.base_url == "http://chat:8000/v1" and asr._api_key == "sk-chat"
    monkeypatch.setenv("CALLSIM_ASR_BASE_URL", "http://asr:9000/v1")
    monkeypatch.setenv("CALLSIM_ASR_API_KEY", "sk-asr")
    asr = make_transcriber("openai:m")
    assert isinstance(asr, OpenAIASR) and asr.base_url == "http://asr:9000/v1" and asr._api_key == "sk-asr"
    asr = make_transcriber("openai:m", base_url="http://flag/v1", api_key="sk-flag")
    assert isinstance(asr, OpenAIASR) and asr.base_url == "http://flag/v1" and asr._api_key == "sk-flag"


def test_without_a_server_openai_means_openai_itself():
    asr = make_transcriber("openai:whisper-1")
    assert isinstance(asr, OpenAIASR) and asr.base_url == DEFAULT_BASE_URL


@pytest.mark.parametrize("spec", ["", "openai", "openai:", "openai: ", "whisper-large", "funasr:x"])
def test_unknown_names_are_config_errors(spec):
    with pytest.raises(ConfigError, match="choose one of: whisper, openai:MODEL"):
        make_transcriber(spec)
    with pytest.raises(ConfigError, match=r"^--transcriber: unknown transcriber"):  # the check, nothing made
        check_transcriber(spec, option="--transcriber")
