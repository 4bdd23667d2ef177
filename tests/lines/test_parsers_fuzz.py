"""Fuzzing the two line parsers: whatever a bot sends, they answer with a value, never an exception."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from voice.core.call import AssistantAudio, AssistantControl, LineClosed
from voice.lines.pcm import parse_pcm_message
from voice.lines.twilio import (
    BotClear,
    BotMark,
    BotMedia,
    BotOther,
    Violation,
    parse_twilio_message,
)

SID = "MZ" + "0" * 32
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
events = st.sampled_from(["media", "mark", "clear", "stop", "start", "log", "", "MEDIA"]) | st.text(
    max_size=10
)


@st.composite
def twilio_like(draw: st.DrawFn) -> str:
    """Messages near the protocol: right and wrong shapes of media/mark/clear, with or without streamSid."""
    obj: dict[str, Any] = {"event": draw(events)}
    if draw(st.booleans()):
        obj["streamSid"] = draw(st.sampled_from([SID, "MZother"]) | json_values)
    if draw(st.booleans()):
        payload = draw(
            st.binary(max_size=400).map(lambda b: base64.b64encode(b).decode())
            | st.text(max_size=40)
            | json_values
        )
        obj["media"] = draw(
            st.sampled_from([{"payload": payload}, payload, {"payload": payload, "track": "x"}])
        )
    if draw(st.booleans()):
        obj["mark"] = draw(st.fixed_dictionaries({"name": st.text(max_size=20) | json_values}) | json_values)
    for key, value in draw(st.dictionaries(st.text(max_size=8), json_values, max_size=3)).items():
        obj.setdefault(key, value)
    return json.dumps(obj)


@settings(max_examples=400)
@given(st.text() | st.binary())
def test_twilio_parser_survives_anything(message: str | bytes) -> None:
    result = parse_twilio_message(message, SID)
    assert isinstance(result, BotMedia | BotMark | BotClear | BotOther | Violation)
    if isinstance(result, Violation):
        assert result.reason.startswith("protocol_error: ")
    if isinstance(message, bytes):
        assert isinstance(result, Violation)


@settings(max_examples=600)
@given(twilio_like())
def test_twilio_parser_on_protocol_shaped_messages(message: str) -> None:
    obj = json.loads(message)
    result = parse_twilio_message(message, SID)
    sid_ok = obj.get("streamSid", SID) == SID
    if obj["event"] in ("media", "mark", "clear") and not sid_ok:
        assert isinstance(result, Violation) and "for stream" in result.reason
    elif isinstance(result, BotMedia):
        assert obj["event"] == "media"
        assert base64.b64encode(result.payload).decode() == obj["media"]["payload"]
    elif isinstance(result, BotMark):
        assert obj["event"] == "mark" and result.name == obj["mark"]["name"]
    elif isinstance(result, BotClear):
        assert obj["event"] == "clear"
    elif isinstance(result, BotOther):
        assert result.event == obj["event"] and result.event not in ("media", "mark", "clear")
        assert len(json.dumps(result.fields, default=str)) <= 1000 or "truncated" in result.fields
    else:
        assert obj["event"] in ("media", "mark") and result.reason.startswith("protocol_error: ")


@given(st.binary(max_size=2000).map(lambda b: base64.b64encode(b).decode()), st.booleans())
def test_twilio_media_payloads_round_trip(payload: str, with_sid: bool) -> None:
    message: dict[str, Any] = {"event": "media", "media": {"payload": payload}}
    if with_sid:
        message["streamSid"] = SID
    assert parse_twilio_message(json.dumps(message), SID) == BotMedia(base64.b64decode(payload))


@settings(max_examples=400)
@given(st.text() | st.binary(max_size=3000))
def test_pcm_parser_survives_anything(message: str | bytes) -> None:
    result = parse_pcm_message(message)
    if isinstance(message, bytes):
        if len(message) % 2:
            assert isinstance(result, LineClosed) and "odd number of bytes" in result.reason
        else:
            assert isinstance(result, AssistantAudio) and len(result.pcm) == len(message) // 2
    else:
        assert isinstance(result, AssistantControl | LineClosed)
        if isinstance(result, LineClosed):
            assert result.reason.startswith("protocol_error: ")


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=5), st.text(max_size=10) | json_values)
def test_pcm_control_messages_keep_their_fields(fields: dict[str, Any], event: Any) -> None:
    obj = {**fields, "event": event}
    result = parse_pcm_message(json.dumps(obj))
    if isinstance(event, str):
        assert result == AssistantControl(event, {k: v for k, v in obj.items() if k != "event"})
    else:
        assert isinstance(result, LineClosed) and "string 'event'" in result.reason


def test_deep_nesting_is_a_violation_not_a_crash() -> None:
    deep = "[" * 50_000 + "]" * 50_000
    assert isinstance(parse_pcm_message(deep), LineClosed)
    assert isinstance(parse_twilio_message(deep), Violation)
