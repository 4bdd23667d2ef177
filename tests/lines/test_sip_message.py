"""SIP messages on the wire: bounded parsing, stream framing, responses built as RFC 3261 §8.2.6 says."""

from __future__ import annotations

import pytest

from voice.lines.sip_message import (
    MAX_MESSAGE_BYTES,
    SipRequest,
    StreamFramer,
    branch_of,
    parse_message,
    reply_hop,
    response_to,
    to_tag_of,
    uri_of,
)

INVITE = (
    b"INVITE sip:bot@127.0.0.1 SIP/2.0\r\n"
    b"Via: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKabc;rport\r\n"
    b"From: <sip:callsim@127.0.0.1>;tag=t1\r\nTo: <sip:bot@127.0.0.1>\r\n"
    b"Call-ID: c1@127.0.0.1\r\nCSeq: 1 INVITE\r\nContent-Length: 4\r\n\r\nv=0\n"
)


def test_a_request_parses_and_answers() -> None:
    request = parse_message(INVITE)
    assert isinstance(request, SipRequest) and request.method == "INVITE" and request.text == "v=0\n"
    assert branch_of(request) == "z9hG4bKabc"
    response = response_to(request, 180, to_tag="bot")
    assert response.status_code == 180 and to_tag_of(response) == "bot"
    assert (
        response.get_header("Via") == request.get_header("Via") and response.get_header("CSeq") == "1 INVITE"
    )
    assert b"Content-Length: 0" in bytes(response)
    assert response_to(request, 100, to_tag="bot").get_header("To") == "<sip:bot@127.0.0.1>"  # no tag on 100


@pytest.mark.parametrize(
    "data, why",
    [
        (b"", "empty"),
        (b"\x00\x01\x02 not sip", "method"),
        (
            b"SIP/2.0 99 Odd\r\nVia: x\r\nFrom: a\r\nTo: b\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\n\r\n",
            "status 99",
        ),
        (b"in vite sip:x SIP/2.0\r\nVia: x\r\n\r\n", "method"),
        (b"SIP/2.0 abc OK\r\n\r\n", "not a SIP message"),
        (b"X" * (MAX_MESSAGE_BYTES + 1), "bytes"),
    ],
)
def test_garbage_is_one_clear_error(data: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_message(data)


def test_a_stream_is_cut_at_content_length_and_bounded() -> None:
    framer = StreamFramer()
    assert framer.feed(b"\r\n\r\n" + INVITE[:50]) == []
    assert framer.feed(INVITE[50:] + INVITE) == [INVITE, INVITE]
    with pytest.raises(ValueError, match="longer than"):
        StreamFramer().feed(b"INVITE sip:x SIP/2.0\r\nX: " + b"y" * 20_000)
    with pytest.raises(ValueError, match="not a number"):
        StreamFramer().feed(b"INVITE sip:x SIP/2.0\r\nContent-Length: lots\r\n\r\n")


def test_addresses() -> None:
    assert uri_of('"Bot" <sip:bot@127.0.0.1:5062>;tag=x') == "sip:bot@127.0.0.1:5062"
    assert uri_of("sip:bot@h;tag=x") == "sip:bot@h"
    request = parse_message(INVITE.replace(b";rport", b";received=127.0.0.2;rport=6000"))
    assert isinstance(request, SipRequest) and reply_hop(request) == ("127.0.0.2", 6000)
