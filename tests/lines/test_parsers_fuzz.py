"""Fuzzing the line parsers: whatever a bot sends, they answer with a value, never an exception."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from voice.core.call import AssistantAudio, AssistantControl, LineClosed, PlayoutMark
from voice.lines.exotel import ExotelCodec
from voice.lines.genesys import GenesysCodec
from voice.lines.line import CallStart
from voice.lines.pcm import parse_pcm_message
from voice.lines.pipecat_ws import PipecatCodec
from voice.lines.plivo import PlivoCodec
from voice.lines.telnyx import TelnyxCodec
from voice.lines.twilio import (
    BotClear,
    BotMark,
    BotMedia,
    BotOther,
    Violation,
    parse_twilio_message,
)
from voice.lines.vonage import VonageCodec

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


# --- the carriers' codecs (and pipecat's protocol): each decode is its parser ----------------------------

CODECS = {
    "telnyx": TelnyxCodec,
    "plivo": PlivoCodec,
    "exotel": ExotelCodec,
    "vonage": VonageCodec,
    "genesys": GenesysCodec,
    "pipecat": PipecatCodec,
}
carrier_events = st.sampled_from(
    ["media", "mark", "clear", "playAudio", "checkpoint", "clearAudio", "notify", "opened", "event",
     "disconnect", "log", "stop", ""]
) | st.text(max_size=10)  # fmt: skip


@st.composite
def carrier_like(draw: st.DrawFn) -> str:
    """JSON near every carrier's protocol: the kind under each carrier's key, payloads right and wrong."""
    obj: dict[str, Any] = {draw(st.sampled_from(["event", "action", "type"])): draw(carrier_events)}
    payload = draw(st.binary(max_size=400).map(lambda b: base64.b64encode(b).decode()) | json_values)
    media = {"payload": payload, "contentType": draw(st.sampled_from(["audio/x-mulaw", "audio/x-l16", "x"]))}
    media["sampleRate"] = draw(st.sampled_from([8000, 16000, "8000"]) | json_values)
    if draw(st.booleans()):
        obj["media"] = draw(st.just(media) | json_values)
    for key in ("mark", "name", "streamId", "stream_id", "stream_sid", "seq", "id", "parameters", "payload"):
        if draw(st.booleans()):
            obj[key] = draw(json_values)
    return json.dumps(obj)


def _check(result: Any) -> None:
    assert isinstance(result, tuple)
    assert all(isinstance(r, AssistantAudio | AssistantControl | PlayoutMark | LineClosed) for r in result)
    for r in result:
        if isinstance(r, LineClosed):
            assert r.reason.startswith("protocol_error: ") and r is result[-1]


@settings(max_examples=300)
@given(st.sampled_from(sorted(CODECS)), st.text() | st.binary(max_size=3000) | carrier_like())
def test_every_carrier_codec_survives_anything(carrier: str, message: str | bytes) -> None:
    codec = CODECS[carrier]()
    codec.start(CallStart("c1", {}))
    _check(codec.decode(message))


@settings(max_examples=300)
@given(st.lists(carrier_like() | st.binary(max_size=700), max_size=8), st.sampled_from(sorted(CODECS)))
def test_every_carrier_codec_survives_a_conversation(messages: list[str | bytes], carrier: str) -> None:
    codec = CODECS[carrier]()
    codec.start(CallStart("c1", {}))
    for message in messages:
        result = codec.decode(message)
        _check(result)
        marks = tuple(r.name for r in result if isinstance(r, PlayoutMark))
        assert all(isinstance(m, str) for m in codec.played(marks))  # each answered in the carrier's words
