"""The built-in assistant's settings (``--set KEY=VALUE`` overrides of its turn-taking) and its logging."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest

from server.__main__ import main as server_main
from server.config import TUNABLE, AssistantSettings, configure_logging, default_max_calls, parse_overrides
from voice.errors import ConfigError


def test_overrides_are_typed_like_the_setting_they_change() -> None:
    values = parse_overrides(["vad_stop_secs=0.3", "turn-model=silence", "turn_max_silence_secs = 1.5"])
    assert values == {"vad_stop_secs": 0.3, "turn_model": "silence", "turn_max_silence_secs": 1.5}
    settings = AssistantSettings(**values)
    assert (settings.vad_stop_secs, settings.turn_model) == (0.3, "silence")


@pytest.mark.parametrize(
    ("pair", "says"),
    [
        ("vad_stop_secs", "expected KEY=VALUE"),
        ("port=1", "unknown setting 'port'"),
        ("vad_stop_secs=soon", "takes a number of seconds"),
    ],
)
def test_a_bad_override_names_the_pair(pair: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        parse_overrides([pair])
    assert str(caught.value).startswith(f"--set {pair!r}")
    with pytest.raises(ConfigError, match=f"^--assistant-set {pair!r}"):  # bench's name for it
        parse_overrides([pair], option="--assistant-set")


def test_every_tunable_setting_exists_and_ranges_are_checked_when_built() -> None:
    defaults = AssistantSettings()
    assert all(hasattr(defaults, key) for key in TUNABLE)
    with pytest.raises(ConfigError, match="turn_model 'psychic'"):
        AssistantSettings(**parse_overrides(["turn_model=psychic"]))
    with pytest.raises(ConfigError, match=r"turn_max_silence_secs=0\.0"):
        AssistantSettings(turn_max_silence_secs=0.0)


def test_the_server_says_a_bad_override_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert server_main(["--port", "0", "--set", "turn_model=psychic"]) == 1
    assert "turn_model 'psychic' is not one of lexical, silence, smart-turn" in capsys.readouterr().err


def test_the_asr_window_is_seconds_or_full() -> None:
    assert parse_overrides(["asr_audio_context_s=2"]) == {"asr_audio_context_s": 2.0}
    assert parse_overrides(["asr_audio_context_s=full"]) == {"asr_audio_context_s": None}
    assert AssistantSettings().asr_audio_context_s == 3.0
    assert parse_overrides(["asr_prompt=以下是普通话的句子。"]) == {"asr_prompt": "以下是普通话的句子。"}
    with pytest.raises(ConfigError, match="asr_audio_context_s=31"):
        AssistantSettings(asr_audio_context_s=31)


def test_a_network_bind_needs_a_token_and_sizes_fit_a_frame() -> None:
    with pytest.raises(ConfigError, match="not a loopback address"):
        AssistantSettings(host="0.0.0.0")
    assert AssistantSettings(host="0.0.0.0", token="t").token == "t"
    assert AssistantSettings(host="localhost").host == "localhost"
    with pytest.raises(ConfigError, match="max_binary_bytes=100"):
        AssistantSettings(max_binary_bytes=100)
    with pytest.raises(ConfigError, match="max_calls must be positive"):
        AssistantSettings(max_calls=0)


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
    err = capsys.readouterr().err
    assert err.count("built-in assistant listening") == 1 and "INFO     | server.app - " in err
    assert "WARNING  | pipecat.transports.base - pipecat trouble" in err
    assert ("turn detail" in err) is verbose and ("pipecat chatter" in err) is verbose
