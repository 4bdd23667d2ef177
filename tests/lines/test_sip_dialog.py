"""CallSim's SIP dialog (a UAC) against scripted far ends: no sockets, time handed in."""

from __future__ import annotations

from aiosipua.auth import SipDigestAuth
from aiosipua.headers import parse_auth

from voice.lines.sip_dialog import T1_NS, CallerIdentity, SipCaller, State
from voice.lines.sip_events import Answered, EarlyMedia, Ended, MediaChanged, Refused, RemoteBye, Ringing
from voice.lines.sip_message import SipRequest, parse_message, response_to

MS = 1_000_000
SDP = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"
BOT = ("127.0.0.1", 5062)


def caller(
    *, credentials: SipDigestAuth | None = None, transport: str = "UDP", timeout_ns: int = 12_000 * MS
) -> SipCaller:
    who = CallerIdentity(
        request_uri="sip:bot@127.0.0.1:5062;transport=udp",
        next_hop=BOT,
        local=("127.0.0.1", 5999),
        transport=transport,
        credentials=credentials,
        extra_headers=(("X-CallSim-Call-Id", "c1"),),
    )
    return SipCaller(
        who, "v=0 offer", lambda offer: "v=0 answer", "call-1@127.0.0.1", answer_timeout_ns=timeout_ns
    )


def sent(out: list[tuple[bytes, tuple[str, int]]]) -> list[SipRequest]:
    messages = [parse_message(data) for data, _ in out]
    assert all(isinstance(m, SipRequest) for m in messages)
    return messages  # type: ignore[return-value]


def reply(
    request: SipRequest, status: int, *, tag: str | None = "bot1", body: str = "", **headers: str
) -> bytes:
    response = response_to(request, status, to_tag=tag, body=body)
    for name, value in headers.items():
        response.set_header(name.replace("_", "-"), value)
    return bytes(response)


def test_invite_carries_the_offer_and_our_headers_and_is_retransmitted_until_a_response() -> None:
    dialog = caller()
    (invite,) = sent(dialog.invite(0))
    assert invite.method == "INVITE" and invite.uri.startswith("sip:bot@127.0.0.1:5062")
    assert invite.text == "v=0 offer" and invite.get_header("Content-Type") == "application/sdp"
    assert invite.get_header("X-CallSim-Call-Id") == "c1"
    assert dialog.next_deadline() == T1_NS
    _, again = dialog.poll(T1_NS)
    assert sent(again)[0].get_header("Via") == invite.get_header("Via")  # the same transaction
    _, again = dialog.poll(T1_NS + 2 * T1_NS)  # timer A doubles
    assert len(again) == 1
    dialog.receive(reply(invite, 100, tag=None), 2 * T1_NS)
    assert dialog.poll(100 * T1_NS // 10)[1] == []  # a provisional response stops the retransmissions


def test_ringing_early_media_answer_and_ack() -> None:
    dialog = caller()
    (invite,) = sent(dialog.invite(0))
    events, _ = dialog.receive(reply(invite, 180), 1)
    assert events == [Ringing(180, "Ringing")] and dialog.state is State.EARLY
    events, _ = dialog.receive(reply(invite, 183, body=SDP), 2)
    assert events == [Ringing(183, "Session Progress"), EarlyMedia(SDP)]
    ok = reply(
        invite, 200, body=SDP, Contact="<sip:bot@127.0.0.1:5077>", Record_Route="<sip:127.0.0.1:5060;lr>"
    )
    events, out = dialog.receive(ok, 3)
    assert events == [Answered(SDP)] and dialog.state is State.CONFIRMED
    (ack,) = sent(out)
    assert ack.method == "ACK" and ack.uri == "sip:bot@127.0.0.1:5077"
    assert ack.get_header("Route") == "<sip:127.0.0.1:5060;lr>" and out[0][1] == ("127.0.0.1", 5060)
    assert ack.get_header("CSeq") == "1 ACK"
    events, out = dialog.receive(ok, 4)  # the 200 again (our ACK was lost): the ACK again, no new event
    assert events == [] and sent(out)[0].method == "ACK"


def test_a_200_without_sdp_takes_the_early_sdp() -> None:
    dialog = caller()
    (invite,) = sent(dialog.invite(0))
    dialog.receive(reply(invite, 183, body=SDP), 1)
    events, _ = dialog.receive(reply(invite, 200), 2)
    assert events == [Answered(SDP)]


def test_refusals_are_named_and_acked() -> None:
    for status, outcome in [(486, "busy"), (603, "declined"), (404, "not_found"), (408, "no_answer"),
                            (480, "no_answer"), (500, "call_rejected")]:  # fmt: skip
        dialog = caller()
        (invite,) = sent(dialog.invite(0))
        events, out = dialog.receive(reply(invite, status), 1)
        assert len(events) == 1 and isinstance(events[0], Refused) and events[0].outcome == outcome, status
        (ack,) = sent(out)
        assert ack.method == "ACK" and ack.get_header("Via") == invite.get_header("Via")
        assert dialog.state is State.DONE


def test_digest_challenge_is_answered_once() -> None:
    dialog = caller(credentials=SipDigestAuth("callsim", "secret"))
    (invite,) = sent(dialog.invite(0))
    challenge = reply(invite, 407, Proxy_Authenticate='Digest realm="127.0.0.1", nonce="abc", qop="auth"')
    events, out = dialog.receive(challenge, 1)
    ack, again = sent(out)
    assert events == [] and ack.method == "ACK" and again.method == "INVITE"
    assert again.get_header("CSeq") == "2 INVITE" and again.get_header("Via") != invite.get_header("Via")
    credentials = parse_auth(again.get_header("Proxy-Authorization") or "", credentials=True)
    assert credentials.params["username"] == "callsim" and credentials.params["realm"] == "127.0.0.1"
    events, _ = dialog.receive(reply(again, 407, Proxy_Authenticate='Digest realm="127.0.0.1", nonce="d"'), 2)
    assert isinstance(events[0], Refused) and events[0].outcome == "auth_refused"


def test_forbidden_after_our_credentials_is_auth_refused() -> None:
    dialog = caller(credentials=SipDigestAuth("callsim", "wrong"))
    (invite,) = sent(dialog.invite(0))
    _, out = dialog.receive(reply(invite, 407, Proxy_Authenticate='Digest realm="r", nonce="n"'), 1)
    again = sent(out)[1]
    events, _ = dialog.receive(reply(again, 403), 2)
    assert isinstance(events[0], Refused) and events[0].outcome == "auth_refused"


def test_a_challenge_without_credentials_is_auth_refused() -> None:
    dialog = caller()
    (invite,) = sent(dialog.invite(0))
    events, _ = dialog.receive(reply(invite, 401, WWW_Authenticate='Digest realm="x", nonce="n"'), 1)
    assert isinstance(events[0], Refused) and events[0].outcome == "auth_refused"
    assert "no credentials" in events[0].reason


def test_no_answer_cancels_and_ends_as_no_answer() -> None:
    dialog = caller(timeout_ns=3_000 * MS)
    (invite,) = sent(dialog.invite(0))
    dialog.receive(reply(invite, 180), 1)
    _, out = dialog.poll(3_000 * MS)
    (cancel,) = sent(out)
    assert cancel.method == "CANCEL" and cancel.get_header("Via") == invite.get_header("Via")
    events, _ = dialog.receive(reply(invite, 487), 3_001 * MS)
    assert isinstance(events[0], Refused) and events[0].outcome == "no_answer"


def test_hanging_up_before_any_response_sends_nothing() -> None:
    dialog = caller()
    dialog.invite(0)
    assert dialog.hangup(1) == [] and dialog.state is State.DONE and dialog.next_deadline() is None


def test_silence_from_the_far_end_is_no_answer_not_a_hang() -> None:
    dialog = caller()
    dialog.invite(0)
    events: list[object] = []
    now = 0
    while not events and now < 60_000 * MS:
        deadline = dialog.next_deadline()
        assert deadline is not None
        now = deadline
        events, _ = dialog.poll(now)
    assert isinstance(events[0], Refused) and events[0].outcome == "no_answer" and now <= 16_000 * MS


def answered() -> tuple[SipCaller, SipRequest]:
    dialog = caller()
    (invite,) = sent(dialog.invite(0))
    dialog.receive(reply(invite, 200, body=SDP, Contact="<sip:bot@127.0.0.1:5062>"), 1)
    return dialog, invite


def in_dialog(method: str, invite: SipRequest, body: str = "", call_id: str | None = None) -> bytes:
    request = SipRequest(method=method, uri="sip:callsim@127.0.0.1:5999")
    request.set_header("Via", "SIP/2.0/UDP 127.0.0.1:5062;branch=z9hG4bKfar")
    request.set_header("From", "<sip:bot@127.0.0.1:5062>;tag=bot1")
    request.set_header("To", f"{invite.get_header('From')}")
    request.set_header("Call-ID", call_id or invite.get_header("Call-ID") or "")
    request.set_header("CSeq", f"7 {method}")
    if body:
        request.set_header("Content-Type", "application/sdp")
        request.text = body
    return bytes(request)


def test_the_far_end_hangs_up() -> None:
    dialog, invite = answered()
    events, out = dialog.receive(in_dialog("BYE", invite), 5, ("127.0.0.1", 5062))
    assert events == [RemoteBye("the far end sent BYE")]
    assert parse_message(out[0][0]).status_code == 200 and out[0][1] == ("127.0.0.1", 5062)  # type: ignore[union-attr]
    assert dialog.state is State.DONE and dialog.hangup(6) == []


def test_a_reinvite_is_answered_not_fatal() -> None:
    dialog, invite = answered()
    events, out = dialog.receive(in_dialog("INVITE", invite, body=SDP + "a=sendonly\r\n"), 5)
    assert events == [MediaChanged(SDP + "a=sendonly\r\n")] and dialog.state is State.CONFIRMED
    ok = parse_message(out[0][0])
    assert ok.status_code == 200 and ok.text == "v=0 answer"  # type: ignore[union-attr]


def test_our_bye_is_retransmitted_then_ended() -> None:
    dialog, _ = answered()
    (bye,) = sent(dialog.hangup(10))
    assert bye.method == "BYE" and bye.get_header("CSeq") == "2 BYE"
    assert len(dialog.poll(10 + T1_NS)[1]) == 1
    events, _ = dialog.receive(reply(bye, 200), 10 + T1_NS + 1)
    assert events == [Ended("BYE answered 200")] and dialog.state is State.DONE


def test_garbage_strangers_and_unknown_methods() -> None:
    dialog, invite = answered()
    assert dialog.receive(b"\x00\xff garbage", 5) == ([], [])
    assert dialog.receive(b"INVITE sip:x SIP/2.0\r\n\r\n", 5) == ([], [])  # no Call-ID, Via, ...
    assert dialog.malformed == 2
    _, out = dialog.receive(in_dialog("BYE", invite, call_id="other@x"), 6)
    assert parse_message(out[0][0]).status_code == 481 and dialog.strays == 1  # type: ignore[union-attr]
    _, out = dialog.receive(in_dialog("MESSAGE", invite), 7)
    assert parse_message(out[0][0]).status_code == 405  # type: ignore[union-attr]
    assert dialog.state is State.CONFIRMED
