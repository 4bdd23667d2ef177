"""The Genesys AudioHook codec, pure: the messages CallSim sends as Genesys, and what a bot's mean."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from tests.lines.carrier_peers import closed
from voice.core.call import AssistantAudio, AssistantControl, LineClosed
from voice.lines.carrier import derived_id
from voice.lines.codec import mulaw_encode
from voice.lines.genesys import GenesysCodec, GenesysLine
from voice.lines.line import CallStart

SESSION = derived_id("session", "c1")


def opened() -> tuple[GenesysCodec, dict[str, Any]]:
    codec = GenesysCodec()
    (open_,) = codec.start(CallStart("c1", {"id": "d1"}))
    return codec, json.loads(open_)


def server(kind: str, seq: int, **parameters: Any) -> str:
    return json.dumps(
        {"version": "2", "type": kind, "seq": seq, "clientseq": 1, "id": SESSION, "parameters": parameters}
    )


def test_the_open_offers_pcmu_on_the_external_channel() -> None:
    _, message = opened()
    assert {k: message[k] for k in ("version", "type", "seq", "serverseq", "id", "position")} == {
        "version": "2",
        "type": "open",
        "seq": 1,
        "serverseq": 0,
        "id": SESSION,
        "position": "PT0.00S",
    }
    p = message["parameters"]
    assert p["media"] == [{"type": "audio", "format": "PCMU", "channels": ["external"], "rate": 8000}]
    assert p["inputVariables"] == {"call_id": "c1"} and p["language"] == "zh-CN"
    assert p["participant"]["ani"] == "" and p["conversationId"] == derived_id("conversation", "c1")


def test_audio_is_binary_mulaw_and_the_close_says_where_the_stream_stands() -> None:
    codec, _ = opened()
    frames = [codec.audio(np.full(320, 1000, np.int16)) for _ in range(50)]
    assert all(isinstance(f, bytes) and len(f) == 160 for f in frames)
    assert frames[-1][-1] == mulaw_encode(np.array([1000], np.int16))[0]
    codec.decode(
        server(
            "opened", 1, media=[{"type": "audio", "format": "PCMU", "channels": ["external"], "rate": 8000}]
        )
    )
    close = json.loads(codec.hangup("completed")[0])
    assert (close["type"], close["seq"], close["serverseq"], close["position"]) == ("close", 2, 1, "PT1.00S")
    assert close["parameters"] == {"reason": "end"}


def test_the_bots_opened_audio_barge_in_and_disconnect() -> None:
    codec, _ = opened()
    media = [{"type": "audio", "format": "PCMU", "channels": ["external"], "rate": 8000}]
    (ok,) = codec.decode(server("opened", 1, startPaused=False, media=media))
    assert isinstance(ok, AssistantControl) and ok.payload["type"] == "opened" and codec.opened
    (a,) = codec.decode(mulaw_encode(np.full(160, 1000, np.int16)))
    assert isinstance(a, AssistantAudio) and len(a.pcm) == 320
    assert codec.decode(server("event", 2, entities=[{"type": "barge_in", "data": {}}])) == (
        AssistantControl("clear", {"via": "barge_in"}),
    )
    assert codec.decode(server("disconnect", 3, reason="completed", outputVariables={})) == (
        AssistantControl("hangup", {"reason": "disconnect: completed"}),
    )
    (other,) = codec.decode(server("event", 4, entities=[{"type": "transcript"}]))
    assert (
        isinstance(other, AssistantControl) and other.event == "unknown" and other.payload["type"] == "event"
    )


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("{not json", "malformed JSON"),
        ('{"seq": 1}', "string 'type'"),
        (
            server(
                "opened",
                1,
                media=[{"type": "audio", "format": "L16", "channels": ["external"], "rate": 8000}],
            ),
            "L16",
        ),
        (server("opened", 1), "parameters.media"),
        (server("pong", 0), "positive integer seq"),
        (json.dumps({"type": "pong", "seq": True, "id": SESSION}), "positive integer seq"),
        (json.dumps({"type": "pong", "seq": 1, "id": "another"}), "for session"),
    ],
)
def test_malformed_messages_end_the_call_with_a_named_protocol_error(message: str, reason: str) -> None:
    codec, _ = opened()
    (line_closed,) = codec.decode(message)
    assert isinstance(line_closed, LineClosed)
    assert line_closed.reason.startswith("protocol_error: ") and reason in line_closed.reason


def test_a_normal_close_is_the_bots_hang_up() -> None:
    codec, _ = opened()
    assert codec.closed(closed(1000))[0].event == "hangup"  # type: ignore[union-attr]
    assert isinstance(GenesysLine("ws://h:1/x").codec, GenesysCodec)
