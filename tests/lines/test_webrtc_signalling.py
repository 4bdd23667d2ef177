"""WebRTC signalling as pipecat's runner takes it: the pure parts with literal SDP and bodies."""

from __future__ import annotations

import pytest

from voice.errors import LineError
from voice.lines.webrtc_signalling import Candidate, audio_port, parse_answer, split_candidates

OFFER = "\r\n".join([
    "v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0",
    "m=audio 40000 UDP/TLS/RTP/SAVPF 96 0 8", "c=IN IP4 127.0.0.1", "a=mid:0",
    "a=candidate:abc 1 udp 2130706431 127.0.0.1 40000 typ host", "a=end-of-candidates",
    "m=application 40001 DTLS/SCTP 5000", "a=mid:1",
    "a=candidate:def 1 udp 2130706431 127.0.0.1 40001 typ host",
]) + "\r\n"  # fmt: skip


def test_candidates_are_split_out_with_their_media_line() -> None:
    sdp, found = split_candidates(OFFER)
    assert "a=candidate" not in sdp and "a=end-of-candidates" not in sdp and sdp.endswith("\r\n")
    assert "m=audio 40000" in sdp and "a=mid:1" in sdp
    assert found == [
        Candidate("candidate:abc 1 udp 2130706431 127.0.0.1 40000 typ host", "0", 0),
        Candidate("candidate:def 1 udp 2130706431 127.0.0.1 40001 typ host", "1", 1),
    ]
    assert found[0].to_json() == {"candidate": found[0].candidate, "sdp_mid": "0", "sdp_mline_index": 0}


def test_the_audio_port_tells_an_answer_with_audio_from_one_without_or_rejecting_it() -> None:
    assert audio_port(OFFER) == 40000
    assert audio_port(OFFER.replace("m=audio 40000", "m=audio 0")) == 0
    assert audio_port(OFFER.replace("m=audio", "m=video")) is None
    assert audio_port("m=audio x") is None


def answer(sdp: str = OFFER, **extra: object) -> bytes:
    import json

    return json.dumps({"sdp": sdp, "type": "answer", **extra}).encode()


def test_a_good_answer_is_read_with_its_pc_id() -> None:
    got = parse_answer(200, answer(pc_id="pc-1"), "http://127.0.0.1:7860/api/offer")
    assert (got.type, got.pc_id, got.sdp) == ("answer", "pc-1", OFFER)
    assert parse_answer(200, answer(pc_id=7), "u").pc_id is None  # not a string: no id to trickle to


@pytest.mark.parametrize(
    ("status", "body", "why"),
    [
        (
            500,
            b"Internal Server Error",
            r"HTTP 500 from http://\*\*\*@h/api/offer: 'Internal Server Error'",
        ),
        (200, b"<html>", "is not JSON"),
        (200, b"[1, 2]", "is not an SDP answer"),
        (200, b'{"sdp": "v=0", "type": "offer"}', "is not an SDP answer"),
        (200, answer(OFFER.replace("m=audio", "m=video")), "has no audio"),
        (200, answer(OFFER.replace("m=audio 40000", "m=audio 0")), "rejects the audio"),
    ],
)
def test_a_bad_answer_is_a_line_error_that_says_what_and_hides_credentials(
    status: int, body: bytes, why: str
) -> None:
    with pytest.raises(LineError, match=why) as err:
        parse_answer(status, body, "http://u:secret@h/api/offer")
    assert "secret" not in str(err.value)
