"""The Telnyx codec, pure: the messages CallSim sends as Telnyx, and what a bot's messages mean."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from tests.lines.carrier_peers import closed, pipecat_detects
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, PlayoutMark
from voice.lines.codec import alaw_encode, mulaw_encode
from voice.lines.line import CallStart
from voice.lines.telnyx import MAX_MESSAGE_BYTES, TelnyxCodec, TelnyxIds, TelnyxLine

IDS = TelnyxIds.for_call("c1")
SID = IDS.stream_id


def opened(codec: TelnyxCodec | None = None) -> tuple[TelnyxCodec, list[dict]]:
    codec = codec or TelnyxCodec()
    return codec, [json.loads(m) for m in codec.start(CallStart("c1", {"id": "d1"}))]


def media(payload: bytes, sid: str | None = SID) -> str:
    message = {"event": "media", "media": {"payload": base64.b64encode(payload).decode()}}
    return json.dumps(message | ({"stream_id": sid} if sid else {}))


async def test_the_opening_is_telnyx_shaped_and_pipecat_detects_telnyx() -> None:
    _, (connected, start) = opened()
    assert connected == {"event": "connected", "version": "1.0.0"}
    assert start["event"] == "start" and start["sequence_number"] == "1" and start["stream_id"] == SID
    s = start["start"]
    assert s["call_control_id"] == IDS.call_control_id and s["call_control_id"].startswith("v3:")
    assert s["media_format"] == {"encoding": "PCMU", "sample_rate": 8000, "channels": 1}
    assert json.loads(base64.b64decode(s["client_state"])) == {"call_id": "c1"}
    assert TelnyxIds.for_call("c1") == IDS != TelnyxIds.for_call("c2")  # reruns send the same ids
    kind, data = await pipecat_detects(TelnyxCodec().start(CallStart("c1", {})))
    assert kind == "telnyx"
    assert (data.stream_id, data.call_id, data.outbound_encoding) == (SID, IDS.call_control_id, "PCMU")


def test_caller_frames_are_numbered_20_ms_of_g711() -> None:
    codec, _ = opened()
    frames = [json.loads(codec.audio(np.full(320, 1000, np.int16))) for _ in range(3)]
    assert [f["sequence_number"] for f in frames] == ["2", "3", "4"]
    assert [(f["media"]["chunk"], f["media"]["timestamp"]) for f in frames] == [
        ("1", "0"),
        ("2", "20"),
        ("3", "40"),
    ]
    assert all(
        f["event"] == "media" and f["stream_id"] == SID and f["media"]["track"] == "inbound" for f in frames
    )
    payload = base64.b64decode(frames[2]["media"]["payload"])
    assert len(payload) == 160 and payload[-1] == mulaw_encode(np.array([1000], np.int16))[0]
    stop = json.loads(codec.hangup("completed")[0])
    assert stop == {
        "event": "stop",
        "sequence_number": "5",
        "stop": {"user_id": IDS.user_id, "call_control_id": IDS.call_control_id},
        "stream_id": SID,
    }


def test_pcma_both_ways() -> None:
    codec, (_, start) = opened(TelnyxCodec("PCMA", "PCMA"))
    assert start["start"]["media_format"]["encoding"] == "PCMA"
    sent = base64.b64decode(json.loads(codec.audio(np.full(320, -3000, np.int16)))["media"]["payload"])
    assert sent[-1] == alaw_encode(np.array([-3000], np.int16))[0]
    (audio,) = codec.decode(media(alaw_encode(np.full(160, 2000, np.int16))))
    assert (
        isinstance(audio, AssistantAudio) and len(audio.pcm) == 320 and abs(int(audio.pcm[200]) - 2000) < 80
    )
    with pytest.raises(ValueError, match="Telnyx encodings"):
        TelnyxCodec("G722")


def test_bot_media_clear_mark_and_others() -> None:
    codec, _ = opened()
    (a,) = codec.decode(media(mulaw_encode(np.full(160, 1000, np.int16))))
    assert isinstance(a, AssistantAudio) and len(a.pcm) == 320 and abs(int(a.pcm[200]) - 1000) < 60
    assert codec.decode(media(mulaw_encode(np.full(7, 0, np.int16)), sid=None))[0].pcm.shape == (14,)
    assert codec.decode(media(b"")) == ()
    assert codec.decode('{"event": "clear"}') == (AssistantControl("clear"),)
    assert codec.decode(json.dumps({"event": "mark", "stream_id": SID, "mark": {"name": "m1"}})) == (
        PlayoutMark("m1"),
    )
    assert codec.decode('{"event": "log", "text": "hi"}') == (AssistantControl("log", {"text": "hi"}),)
    assert codec.decode('{"event": "dtmf_please"}') == (
        AssistantControl("unknown", {"event": "dtmf_please"}),
    )


def test_marks_are_answered_as_telnyx_marks_in_order() -> None:
    codec, _ = opened()
    codec.decode('{"event": "mark", "mark": {"name": "a"}}')
    codec.decode('{"event": "mark", "mark": {"name": "b"}}')
    answers = [json.loads(m) for m in codec.played(("a", "b"))]
    assert answers == [
        {"event": "mark", "sequence_number": "2", "stream_id": SID, "mark": {"name": "a"}},
        {"event": "mark", "sequence_number": "3", "stream_id": SID, "mark": {"name": "b"}},
    ]
    assert codec.played(("late",)) == []  # nothing pending: nothing to say


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("{not json", "malformed JSON"),
        ('["media"]', "string 'event'"),
        (b"\x00\x01", "binary message"),
        ('{"event": "media", "media": {"payload": "@@"}}', "not base64"),
        ('{"event": "media", "media": {"payload": 5}}', "media.payload"),
        ('{"event": "media"}', "media.payload"),
        ('{"event": "mark", "mark": {}}', "mark.name"),
        ('{"event": "clear", "stream_id": "someone-else"}', "for stream"),
        ("[" * 100_000, "malformed JSON"),
    ],
)
def test_malformed_messages_end_the_call_with_a_named_protocol_error(
    message: str | bytes, reason: str
) -> None:
    codec, _ = opened()
    (closed_line,) = codec.decode(message)
    assert isinstance(closed_line, LineClosed)
    assert closed_line.reason.startswith("protocol_error: ") and reason in closed_line.reason


def test_a_flood_of_pending_marks_is_refused_and_the_caps_are_telnyxs() -> None:
    codec, _ = opened()
    results = [codec.decode(json.dumps({"event": "mark", "mark": {"name": f"m{i}"}}))[0] for i in range(1001)]
    assert all(isinstance(r, PlayoutMark) for r in results[:1000])
    assert results[1000] == LineClosed("protocol_error: flood: over 1000 marks pending")
    thirty_seconds = len(media(bytes(30 * 8000)))  # Telnyx plays up to 30 s a message
    assert thirty_seconds < MAX_MESSAGE_BYTES < 2 * thirty_seconds


def test_a_normal_close_is_the_bots_hang_up() -> None:
    codec, _ = opened()
    assert codec.closed(closed(1000, "bye")) == (
        AssistantControl("hangup", {"reason": "the bot closed the stream (code 1000)", "detail": "bye"}),
    )
    assert codec.closed(closed(1011)) == ()
    assert isinstance(TelnyxLine("ws://h:1/x").codec, TelnyxCodec)
