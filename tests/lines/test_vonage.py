"""The Vonage codec, pure: the messages CallSim sends as Vonage, and what a bot's messages mean."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.lines.carrier_peers import closed
from voice.core.audio import to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, PlayoutMark
from voice.lines.line import CallStart
from voice.lines.vonage import MAX_NOTIFY_BYTES, VonageCodec, VonageLine


def test_the_opening_then_binary_16_khz_pcm_and_no_stop_message() -> None:
    codec = VonageCodec()
    (connected,) = codec.start(CallStart("c1", {"id": "d1"}))
    assert json.loads(connected) == {
        "event": "websocket:connected",
        "content-type": "audio/l16;rate=16000",
        "call_id": "c1",
    }
    frame = codec.audio(np.arange(320, dtype=np.int16))
    assert frame == to_bytes(np.arange(320, dtype=np.int16)) and len(frame) == 640
    assert codec.hangup("completed") == ()  # Vonage closes the websocket


def test_bot_audio_is_binary_pcm_of_any_even_length() -> None:
    codec = VonageCodec()
    (a,) = codec.decode(to_bytes(np.arange(-5, 5, dtype=np.int16)))
    assert isinstance(a, AssistantAudio) and a.pcm.tolist() == list(range(-5, 5))
    assert codec.decode(b"") == ()


def test_clear_and_notify_are_answered_once_played_in_order() -> None:
    codec = VonageCodec()
    assert codec.decode('{"action": "notify", "payload": {"turn": 1}}') == (
        PlayoutMark('notify {"turn": 1}'),
    )
    assert codec.decode('{"action": "clear"}') == (
        AssistantControl("clear"),
        PlayoutMark("websocket:cleared"),
    )
    assert codec.decode('{"action": "notify"}') == (PlayoutMark("notify {}"),)
    answers = [json.loads(m) for m in codec.played(("websocket:notify", "websocket:cleared"))]
    assert answers == [{"event": "websocket:notify", "payload": {"turn": 1}}, {"event": "websocket:cleared"}]
    assert [json.loads(m) for m in codec.played(("websocket:notify",))] == [
        {"event": "websocket:notify", "payload": {}}
    ]


def test_other_text_is_recorded() -> None:
    codec = VonageCodec()
    assert codec.decode('{"event": "log", "note": "x"}') == (AssistantControl("log", {"note": "x"}),)
    assert codec.decode('{"action": "transfer", "to": "x"}') == (
        AssistantControl("unknown", {"action": "transfer", "to": "x"}),
    )


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (b"\x00\x01\x02", "odd number of bytes"),
        ("{not json", "malformed JSON"),
        ('"clear"', "not a JSON object"),
        ('{"action": 1}', "string 'action'"),
        ('{"nothing": 1}', "string 'action'"),
        (json.dumps({"action": "notify", "payload": "x" * MAX_NOTIFY_BYTES}), "payload over"),
        ("[" * 100_000, "malformed JSON"),
    ],
)
def test_malformed_messages_end_the_call_with_a_named_protocol_error(
    message: str | bytes, reason: str
) -> None:
    (line_closed,) = VonageCodec().decode(message)
    assert isinstance(line_closed, LineClosed)
    assert line_closed.reason.startswith("protocol_error: ") and reason in line_closed.reason


def test_a_normal_close_is_the_bots_hang_up() -> None:
    assert VonageCodec().closed(closed(1000))[0] == AssistantControl(
        "hangup", {"reason": "the bot closed the stream (code 1000)", "detail": ""}
    )
    assert isinstance(VonageLine("ws://h:1/x").codec, VonageCodec)
