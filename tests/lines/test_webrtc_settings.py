"""A WebRTC target's settings: extra request_data, STUN and TURN servers with their secrets kept out."""

from __future__ import annotations

import pytest

from voice.errors import ConfigError
from voice.lines.webrtc_settings import (
    IceServer,
    WebrtcSettings,
    parse_ice_server,
    parse_request_data,
    shown_ice_server,
)


def test_request_data_is_a_json_object_without_callsims_own_keys() -> None:
    assert parse_request_data(None) == {} and parse_request_data("") == {}
    assert parse_request_data('{"mode": "eval", "n": [1]}') == {"mode": "eval", "n": [1]}
    with pytest.raises(ConfigError, match="not JSON"):
        parse_request_data("{mode: eval}")
    with pytest.raises(ConfigError, match="JSON object"):
        parse_request_data("[1, 2]")
    with pytest.raises(ConfigError, match="dialogue is CallSim's own key"):
        parse_request_data('{"dialogue": {}}')
    with pytest.raises(ConfigError, match="over"):
        parse_request_data('{"x": "' + "a" * 70_000 + '"}')


def test_stun_and_turn_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_ice_server("stun:stun.example.org:3478") == IceServer("stun:stun.example.org:3478")
    monkeypatch.setenv("TURN_SECRET", "s3cret")
    turn = parse_ice_server("turn:alice:${TURN_SECRET}@turn.example.org:3478?transport=tcp")
    assert (turn.url, turn.username, turn.credential) == (
        "turn:turn.example.org:3478?transport=tcp",
        "alice",
        "s3cret",
    )
    assert "s3cret" not in repr(turn) and "s3cret" not in turn.describe()
    rtc = turn.to_rtc()
    assert (rtc.urls, rtc.username, rtc.credential) == (turn.url, "alice", "s3cret")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("stun.example.org", "expected stun:HOST"),
        ("http://x", "expected stun:HOST"),
        ("stun:a:b@host", "takes no credentials"),
        ("turn:host:3478", "needs USER:SECRET@"),
        ("turn:alice:${NOT_SET_ANYWHERE}@host", "NOT_SET_ANYWHERE is not set"),
    ],
)
def test_a_bad_ice_server_says_why_without_its_secret(text: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why) as err:
        parse_ice_server(text)
    assert "hunter2" not in str(err.value)


def test_a_literal_turn_secret_is_masked_where_settings_are_written() -> None:
    assert shown_ice_server("turn:alice:hunter2@host:3478") == "turn:alice:***@host:3478"
    assert shown_ice_server("turn:alice:${TURN_SECRET}@host") == "turn:alice:${TURN_SECRET}@host"
    assert shown_ice_server("stun:host:3478") == "stun:host:3478"


def test_what_a_run_records_of_the_settings() -> None:
    settings = WebrtcSettings({"b": 1, "a": 2}, (IceServer("turn:h", "alice", "pw"), IceServer("stun:h")))
    assert settings.describe() == {
        "request_data_keys": ["a", "b"],
        "ice_servers": ["turn:h (user alice, credential ***)", "stun:h"],
    }
    assert WebrtcSettings().describe() == {}
