"""The Exotel codec, pure: the messages CallSim sends as Exotel, and what a bot's messages mean."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest

from tests.lines.carrier_peers import closed, pipecat_detects
from voice.core.audio import from_bytes, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, PlayoutMark
from voice.lines.exotel import ExotelCodec, ExotelIds, ExotelLine, rate_of
from voice.lines.line import CallStart

IDS = ExotelIds.for_call("c1")
SID = IDS.stream_sid


def opened(rate: int = 8000) -> tuple[ExotelCodec, list[dict[str, Any]]]:
    codec = ExotelCodec(rate)
    return codec, [json.loads(m) for m in codec.start(CallStart("c1", {"id": "d1"}))]


def media(payload: bytes, sid: str = SID) -> str:
    return json.dumps(
        {"event": "media", "stream_sid": sid, "media": {"payload": base64.b64encode(payload).decode()}}
    )


async def test_the_opening_is_exotel_shaped_and_pipecat_detects_exotel() -> None:
    _, (connected, start) = opened()
    assert connected == {"event": "connected"}
    assert start == {
        "event": "start",
        "sequence_number": 1,
        "stream_sid": SID,
        "start": {
            "stream_sid": SID,
            "call_sid": IDS.call_sid,
            "account_sid": IDS.account_sid,
            "from": "",
            "to": "",
            "custom_parameters": {"call_id": "c1"},
            "media_format": {"encoding": "base64", "sample_rate": "8000", "bit_rate": "128kbps"},
        },
    }
    kind, data = await pipecat_detects(ExotelCodec().start(CallStart("c1", {})))
    assert kind == "exotel" and (data.stream_id, data.call_id, data.account_sid) == (
        SID,
        IDS.call_sid,
        IDS.account_sid,
    )


def test_caller_frames_are_8_khz_pcm16_and_the_hang_up_is_a_stop() -> None:
    codec, _ = opened()
    frames = [json.loads(codec.audio(np.full(320, 1000, np.int16))) for _ in range(2)]
    assert [(f["sequence_number"], f["media"]["chunk"], f["media"]["timestamp"]) for f in frames] == [
        (2, 1, "0"),
        (3, 2, "20"),
    ]
    pcm = from_bytes(base64.b64decode(frames[1]["media"]["payload"]))
    assert len(pcm) == 160 and abs(int(pcm[-1]) - 1000) < 20  # 8 kHz, linear: no companding error
    assert json.loads(codec.hangup("completed")[0]) == {
        "event": "stop",
        "sequence_number": 4,
        "stream_sid": SID,
        "stop": {"call_sid": IDS.call_sid, "account_sid": IDS.account_sid, "reason": "callended"},
    }


def test_16_khz_when_the_url_asks_for_it() -> None:
    assert rate_of("ws://h/media") == 8000 and rate_of("ws://h/media?x=1&sample-rate=16000") == 16000
    with pytest.raises(ValueError, match="8000 or 16000"):
        rate_of("ws://h/media?sample-rate=24000")
    assert ExotelLine("ws://h/m?sample-rate=16000").codec.rate == 16000
    codec, (_, start) = opened(16000)
    assert start["start"]["media_format"]["sample_rate"] == "16000"
    sent = from_bytes(
        base64.b64decode(json.loads(codec.audio(np.arange(320, dtype=np.int16)))["media"]["payload"])
    )
    assert np.array_equal(sent, np.arange(320))
    (heard,) = codec.decode(media(to_bytes(np.arange(320, dtype=np.int16))))
    assert isinstance(heard, AssistantAudio) and np.array_equal(heard.pcm, np.arange(320))


def test_bot_media_clear_and_marks() -> None:
    codec, _ = opened()
    (a,) = codec.decode(media(to_bytes(np.full(160, 1000, np.int16))))
    assert isinstance(a, AssistantAudio) and len(a.pcm) == 320 and abs(int(a.pcm[200]) - 1000) < 20
    assert codec.decode(media(b"")) == ()
    assert codec.decode(json.dumps({"event": "clear", "stream_sid": SID})) == (AssistantControl("clear"),)
    assert codec.decode(json.dumps({"event": "mark", "stream_sid": SID, "mark": {"name": "m"}})) == (
        PlayoutMark("m"),
    )
    assert json.loads(codec.played(("m",))[0]) == {
        "event": "mark",
        "sequence_number": 2,
        "stream_sid": SID,
        "mark": {"name": "m"},
    }


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("{not json", "malformed JSON"),
        (b"\x00\x00", "binary message"),
        (media(b"\x00\x01\x02"), "odd number of bytes"),
        ('{"event": "media", "media": {"payload": "%%"}}', "not base64"),
        ('{"event": "mark", "mark": "m"}', "mark.name"),
        (media(b"", sid="other"), "for stream"),
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
    assert codec.closed(closed(1000))[0].event == "hangup"  # type: ignore[union-attr]
    assert codec.closed(closed(1006)) == ()
