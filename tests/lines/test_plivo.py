"""The Plivo codec, pure: the messages CallSim sends as Plivo, and what a bot's messages mean."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest

from tests.lines.carrier_peers import closed, pipecat_detects
from voice.core.audio import to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, PlayoutMark
from voice.lines.codec import mulaw_encode
from voice.lines.line import CallStart
from voice.lines.plivo import PlivoCodec, PlivoIds, PlivoLine

IDS = PlivoIds.for_call("c1")
SID = IDS.stream_id


def opened() -> tuple[PlivoCodec, dict[str, Any]]:
    codec = PlivoCodec()
    (start,) = codec.start(CallStart("c1", {"id": "d1"}))
    return codec, json.loads(start)


def play(payload: bytes, kind: str = "audio/x-mulaw", rate: Any = 8000, sid: str = SID) -> str:
    media = {"contentType": kind, "sampleRate": rate, "payload": base64.b64encode(payload).decode()}
    return json.dumps({"event": "playAudio", "media": media, "streamId": sid})


async def test_the_opening_is_plivo_shaped_and_pipecat_detects_plivo() -> None:
    codec, start = opened()
    assert start == {
        "event": "start",
        "sequenceNumber": 1,
        "start": {
            "callId": IDS.call_id,
            "streamId": SID,
            "accountId": IDS.account_id,
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000},
        },
        "extra_headers": "callsimCallId=c1",
    }
    assert IDS.account_id.startswith("MA") and len(IDS.account_id) == 20
    # pipecat reads two messages: Plivo's start and (as with Plivo) the first media, which it drops
    kind, data = await pipecat_detects(
        [*PlivoCodec().start(CallStart("c1", {})), codec.audio(np.zeros(320, np.int16))]
    )
    assert kind == "plivo" and (data.stream_id, data.call_id) == (SID, IDS.call_id)


def test_caller_frames_and_the_hang_up() -> None:
    codec, _ = opened()
    frames = [json.loads(codec.audio(np.full(320, 1000, np.int16))) for _ in range(2)]
    assert [f["sequenceNumber"] for f in frames] == [2, 3]
    assert [(f["media"]["chunk"], f["media"]["timestamp"]) for f in frames] == [(1, "0"), (2, "20")]
    assert all(f["streamId"] == SID and f["extra_headers"] == "callsimCallId=c1" for f in frames)
    assert len(base64.b64decode(frames[0]["media"]["payload"])) == 160
    assert codec.hangup("completed") == ()  # Plivo closes the websocket: no message


def test_play_audio_in_each_format_plivo_plays() -> None:
    codec, _ = opened()
    (mu,) = codec.decode(play(mulaw_encode(np.full(160, 1000, np.int16))))
    assert isinstance(mu, AssistantAudio) and len(mu.pcm) == 320 and abs(int(mu.pcm[200]) - 1000) < 60
    (l8,) = codec.decode(play(to_bytes(np.full(160, -2000, np.int16)), "audio/x-l16", 8000))
    assert isinstance(l8, AssistantAudio) and len(l8.pcm) == 320 and abs(int(l8.pcm[200]) + 2000) < 20
    (l16,) = codec.decode(play(to_bytes(np.arange(320, dtype=np.int16)), "audio/x-l16", 16000))
    assert isinstance(l16, AssistantAudio) and np.array_equal(l16.pcm, np.arange(320))
    assert codec.decode(play(b"")) == ()


def test_clear_audio_and_checkpoints_are_answered_once_played_in_order() -> None:
    codec, _ = opened()
    assert codec.decode(json.dumps({"event": "checkpoint", "streamId": SID, "name": "greeting"})) == (
        PlayoutMark("greeting"),
    )
    assert codec.decode(json.dumps({"event": "clearAudio", "streamId": SID})) == (
        AssistantControl("clear"),
        PlayoutMark("clearedAudio"),
    )
    answers = [json.loads(m) for m in codec.played(("greeting", "clearedAudio"))]
    assert answers == [
        {"event": "playedStream", "sequenceNumber": 2, "streamId": SID, "name": "greeting"},
        {"event": "clearedAudio", "sequenceNumber": 3, "streamId": SID},
    ]
    assert codec.decode('{"event": "sendDTMF", "dtmf": "1"}') == (
        AssistantControl("unknown", {"event": "sendDTMF", "dtmf": "1"}),
    )


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("{not json", "malformed JSON"),
        (b"\x01", "binary message"),
        ('{"event": 3}', "string 'event'"),
        (play(b"\x00", "audio/mpeg"), "audio/mpeg"),
        (play(b"\x00", "audio/x-mulaw", 16000), "at 16000 Hz"),
        (play(b"\x00", "audio/x-l16", "8000"), "at 8000 Hz"),  # a string rate is not Plivo's
        (play(b"\x00\x01\x02", "audio/x-l16", 16000), "odd number of bytes"),
        ('{"event": "playAudio", "media": {"contentType": "audio/x-mulaw", "sampleRate": 8000}}', "payload"),
        ('{"event": "checkpoint"}', "string name"),
        (play(b"\x00", sid="another"), "for stream"),
    ],
)
def test_malformed_messages_end_the_call_with_a_named_protocol_error(
    message: str | bytes, reason: str
) -> None:
    codec, _ = opened()
    (line_closed,) = codec.decode(message)
    assert isinstance(line_closed, LineClosed)
    assert line_closed.reason.startswith("protocol_error: ") and reason in line_closed.reason


def test_a_normal_close_is_the_bots_hang_up() -> None:
    codec, _ = opened()
    assert codec.closed(closed(1001))[0] == AssistantControl(
        "hangup", {"reason": "the bot closed the stream (code 1001)", "detail": ""}
    )
    assert isinstance(PlivoLine("ws://h:1/x").codec, PlivoCodec)
