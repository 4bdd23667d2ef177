"""The built-in assistant's settings: four groups, each checked when built, ``--set`` applied to them, and
its logging."""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Iterator

import pytest

from server.__main__ import main as server_main
from server.config import (
    AssistantSettings,
    PolicySettings,
    ServingSettings,
    SpeechSettings,
    configure_logging,
    default_max_calls,
)
from voice.contract.tuning import TUNABLE, TurnSettings, parse_tuning
from voice.errors import ConfigError


def test_a_tuning_changes_the_keys_it_was_given_and_nothing_else() -> None:
    base = AssistantSettings(speech=SpeechSettings(tts="memory"), turns=TurnSettings(vad_min_volume=0.3))
    tuned = base.tuned(parse_tuning(["vad_stop_secs=0.3", "turn-model=silence", "asr_audio_context_s=full"]))
    assert (tuned.turns.vad_stop_secs, tuned.turns.turn_model) == (0.3, "silence")
    assert tuned.speech.asr_audio_context_s is None and tuned.speech.tts == "memory"
    assert tuned.turns.vad_min_volume == 0.3  # not a --set key: kept
    assert tuned.speech.asr_prompt == base.speech.asr_prompt
    assert base.tuned(parse_tuning([])) == base


def test_every_tunable_key_is_a_field_of_the_turns_or_speech_group() -> None:
    groups = {f.name for g in (TurnSettings, SpeechSettings) for f in dataclasses.fields(g)}
    assert set(TUNABLE) <= groups


def test_the_server_says_a_bad_override_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert server_main(["--port", "0", "--set", "turn_model=psychic"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--set 'turn_model=psychic'" in err
    assert "turn_model 'psychic' is not one of running, lexical, silence, smart-turn" in err
    assert server_main(["--port", "0", "--set", "vad_stop_sec=0.3"]) == 2
    assert "did you mean vad_stop_secs?" in capsys.readouterr().err


def test_the_asr_window_is_checked_by_the_speech_group() -> None:
    assert SpeechSettings().asr_audio_context_s == 3.0
    with pytest.raises(ConfigError, match="asr_audio_context_s=31"):
        SpeechSettings(asr_audio_context_s=31)


def test_a_network_bind_needs_a_token_and_sizes_fit_a_frame() -> None:
    with pytest.raises(ConfigError, match="not a loopback address"):
        ServingSettings(host="0.0.0.0")
    assert ServingSettings(host="0.0.0.0", token="t").token == "t"
    assert ServingSettings(host="localhost").host == "localhost"
    with pytest.raises(ConfigError, match="max_binary_bytes=100"):
        ServingSettings(max_binary_bytes=100)
    with pytest.raises(ConfigError, match="max_calls must be positive"):
        ServingSettings(max_calls=0)
    with pytest.raises(ConfigError, match=r"port 70000 is not in 0\.\.65535"):
        ServingSettings(port=70000)


def test_the_gate_reads_the_serving_group_by_its_flat_names() -> None:
    settings = AssistantSettings(serving=ServingSettings(token="t", allowed_origins=("https://a.example",)))
    assert (settings.token, settings.allowed_origins) == ("t", ("https://a.example",))
    assert (settings.max_calls, settings.socket_idle_secs) == (settings.serving.max_calls, 15.0)
    assert (settings.max_binary_bytes, settings.max_text_bytes) == (8 * 1024, 64 * 1024)
    assert "'t'" not in repr(settings)  # a token is never logged with the settings


def test_the_policy_group_refuses_a_timeout_that_is_not_positive() -> None:
    with pytest.raises(ConfigError, match="policy_timeout_secs must be positive"):
        PolicySettings(policy_timeout_secs=0)


def test_the_default_call_limit_grows_with_the_machine() -> None:
    assert default_max_calls(1) == 8 and default_max_calls(4) == 16 and default_max_calls(64) == 64


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """The process's logging as it was: the root logger's handlers and levels, loguru's default sink."""
    from loguru import logger as loguru_logger

    root = logging.getLogger()
    handlers, level, pipecat_level = list(root.handlers), root.level, logging.getLogger("pipecat").level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.getLogger("pipecat").setLevel(pipecat_level)
    loguru_logger.remove()
    loguru_logger.add(sys.stderr)


@pytest.mark.usefixtures("restored_logging")
@pytest.mark.parametrize("verbose", [False, True])
def test_one_logging_library_with_pipecats_loguru_routed_into_it(
    verbose: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from loguru import logger as loguru_logger

    configure_logging(verbose)
    configure_logging(verbose)  # again: still one handler, so nothing is printed twice
    pipecat = loguru_logger.patch(lambda record: record.update(name="pipecat.transports.base"))
    logging.getLogger("server.app").info("built-in assistant listening")
    logging.getLogger("server.turns").debug("turn detail")
    pipecat.info("pipecat chatter")
    pipecat.warning("pipecat trouble")
    logging.getLogger("httpx").info("HTTP Request: POST /v1/chat/completions")  # one per policy request
    err = capsys.readouterr().err
    assert err.count("built-in assistant listening") == 1 and "INFO     | server.app - " in err
    assert "WARNING  | pipecat.transports.base - pipecat trouble" in err
    assert ("turn detail" in err) is verbose and ("pipecat chatter" in err) is verbose
    assert ("HTTP Request" in err) is verbose
