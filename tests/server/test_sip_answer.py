"""The answering dialog without a network: CallSim's own caller dialog (SipCaller) talks to it in memory."""

from __future__ import annotations

from server.sip_answer import T1_NS, Cancelled, Confirmed, Invited, SipAnswerer, State
from voice.lines.sip_dialog import CallerIdentity, SipCaller
from voice.lines.sip_dialog import State as CallerState
from voice.lines.sip_events import Answered, Ended, MediaChanged, Refused, RemoteBye
from voice.lines.sip_message import SipRequest, SipResponse, parse_message
from voice.lines.sip_sdp import make_answer, make_offer, parse_remote

GATEWAY = ("127.0.0.1", 5060)
CALLER = ("127.0.0.1", 5070)
OFFER = make_offer("127.0.0.1", 4000, session_id=1)


def answer(sdp: str) -> str:
    return make_answer(parse_remote(sdp), "127.0.0.1", 4002, session_id=2, version=1)


def pair() -> tuple[SipCaller, SipAnswerer]:
    who = CallerIdentity(request_uri="sip:assistant@127.0.0.1:5060", next_hop=GATEWAY, local=CALLER)
    return SipCaller(who, OFFER, answer, "call-1"), SipAnswerer(GATEWAY, answer)


def parsed(out: list[tuple[bytes, tuple[str, int]]]) -> list[SipRequest | SipResponse]:
    return [parse_message(data) for data, _ in out]


def statuses(out: list[tuple[bytes, tuple[str, int]]]) -> list[int | str]:
    return [m.status_code if isinstance(m, SipResponse) else m.method for m in parsed(out)]


def invited(caller: SipCaller, answerer: SipAnswerer, now: int = 0) -> list[tuple[bytes, tuple[str, int]]]:
    ((invite, hop),) = caller.invite(now)
    assert hop == GATEWAY
    events, out = answerer.receive(invite, now, CALLER)
    assert [type(e) for e in events] == [Invited] and statuses(out) == [100]
    assert answerer.state is State.INVITED and answerer.call_id == "call-1"
    return out


def deliver(to: SipCaller, out: list[tuple[bytes, tuple[str, int]]], now: int = 0) -> tuple[list, list]:
    events, replies = [], []
    for data, hop in out:
        assert hop == CALLER
        e, r = to.receive(data, now, GATEWAY)
        events += e
        replies += r
    return events, replies


def confirmed(now: int = 0) -> tuple[SipCaller, SipAnswerer]:
    caller, answerer = pair()
    deliver(caller, invited(caller, answerer, now), now)
    events, acks = deliver(caller, answerer.accept(now), now)
    assert [type(e) for e in events] == [Answered]
    events, out = answerer.receive(acks[0][0], now, CALLER)
    assert [type(e) for e in events] == [Confirmed] and out == []
    assert answerer.state is State.CONFIRMED and caller.state is CallerState.CONFIRMED
    return caller, answerer


def test_an_invite_is_trying_then_200_with_our_sdp_answer_and_contact():
    caller, answerer = pair()
    invited(caller, answerer)
    out = answerer.accept(0)
    (ok,) = parsed(out)
    assert isinstance(ok, SipResponse) and ok.status_code == 200
    assert parse_remote(ok.text).port == 4002
    assert "sip:assistant@127.0.0.1:5060" in (ok.get_header("Contact") or "")
    assert ";tag=" in (ok.get_header("To") or "")


def test_the_200_is_retransmitted_doubling_until_the_ack():
    caller, answerer = pair()
    deliver(caller, invited(caller, answerer))
    deliver(caller, answerer.accept(0))
    times = []
    now = 0
    for _ in range(3):
        now = answerer.next_deadline() or 0
        _, out = answerer.poll(now)
        assert statuses(out) == [200]
        times.append(now)
    assert times == [T1_NS, 3 * T1_NS, 7 * T1_NS]
    _, acks = deliver(caller, out, now)  # the caller ACKs a retransmitted 200 again
    events, _ = answerer.receive(acks[0][0], now, CALLER)
    assert [type(e) for e in events] == [Confirmed] and answerer.next_deadline() is None


def test_no_ack_within_64_t1_ends_the_call_with_a_bye():
    caller, answerer = pair()
    invited(caller, answerer)
    answerer.accept(0)
    sent: list[int | str] = []
    events: list = []
    while (deadline := answerer.next_deadline()) is not None and deadline <= 64 * T1_NS:
        e, out = answerer.poll(deadline)
        events += e
        sent += statuses(out)
    assert any(isinstance(e, Ended) and "ACK" in e.why for e in events)
    assert sent[-1] == "BYE" and set(sent[:-1]) == {200}
    assert answerer.state is State.CLOSING


def test_the_callers_bye_is_200_and_remote_bye():
    caller, answerer = confirmed()
    ((bye, _),) = caller.hangup(10)
    events, out = answerer.receive(bye, 10, CALLER)
    assert [type(e) for e in events] == [RemoteBye] and statuses(out) == [200]
    assert answerer.state is State.DONE
    assert [type(e) for e in deliver(caller, out, 10)[0]] == [Ended]


def test_our_hangup_is_a_bye_retransmitted_until_answered():
    caller, answerer = confirmed()
    out = answerer.hangup(0)
    (bye,) = parsed(out)
    assert isinstance(bye, SipRequest) and bye.method == "BYE" and bye.uri.startswith("sip:callsim@127.0.0.1")
    assert out[0][1] == CALLER  # to the caller's Contact
    _, again = answerer.poll(T1_NS)
    assert statuses(again) == ["BYE"]
    events, replies = deliver(caller, again, T1_NS)
    assert [type(e) for e in events] == [RemoteBye] and statuses(replies) == [200]
    events, _ = answerer.receive(replies[0][0], T1_NS, CALLER)
    assert [type(e) for e in events] == [Ended] and answerer.state is State.DONE


def test_an_unanswered_bye_gives_up():
    _, answerer = confirmed()
    answerer.hangup(0)
    events: list = []
    while (deadline := answerer.next_deadline()) is not None:
        events += answerer.poll(deadline)[0]
    assert [type(e) for e in events] == [Ended] and answerer.state is State.DONE


def test_cancel_before_the_200_is_200_and_487():
    caller, answerer = pair()
    deliver(caller, invited(caller, answerer))
    ((cancel, _),) = caller.hangup(5)
    events, out = answerer.receive(cancel, 5, CALLER)
    assert [type(e) for e in events] == [Cancelled] and statuses(out) == [200, 487]
    events, acks = deliver(caller, out, 5)
    assert isinstance(events[-1], Refused) and events[-1].outcome == "no_answer"
    answerer.receive(acks[0][0], 5, CALLER)
    assert answerer.state is State.DONE and answerer.next_deadline() is None
    assert answerer.accept(6) == []


def test_a_reinvite_is_answered_and_the_media_changed():
    caller, answerer = confirmed()
    hold = make_offer("127.0.0.1", 4000, session_id=1, version=2, direction="sendonly")
    reinvite = SipRequest(method="INVITE", uri="sip:assistant@127.0.0.1:5060")
    first = parse_message(caller._invite.__bytes__())  # type: ignore[union-attr]
    for name in ("Call-ID", "From", "Via"):
        reinvite.set_header(name, first.get_header(name) or "")
    reinvite.set_header("Via", (first.get_header("Via") or "").replace("branch=", "branch=z9hG4bKre"))
    reinvite.set_header("To", f"{first.get_header('To')};tag=x")
    reinvite.set_header("CSeq", "2 INVITE")
    reinvite.set_header("Content-Type", "application/sdp")
    reinvite.text = hold
    events, out = answerer.receive(bytes(reinvite), 1, CALLER)
    assert [type(e) for e in events] == [MediaChanged] and statuses(out) == [200]
    (ok,) = parsed(out)
    assert parse_remote(ok.text).direction == "recvonly"
    assert answerer.state is State.CONFIRMED


def test_an_invite_without_a_usable_offer_is_488():
    for body in ("", "v=0\r\nthis is not sdp\r\n"):
        caller = SipCaller(
            CallerIdentity(request_uri="sip:assistant@127.0.0.1", next_hop=GATEWAY, local=CALLER),
            body,
            answer,
            "call-2",
        )
        answerer = SipAnswerer(GATEWAY, answer)
        ((invite, _),) = caller.invite(0)
        events, out = answerer.receive(invite, 0, CALLER)
        assert statuses(out) == [100, 488]
        assert [type(e) for e in events] == [Ended]
        events, _ = deliver(caller, out)
        assert isinstance(events[-1], Refused) and events[-1].status == 488


def test_a_retransmitted_invite_gets_the_last_response_again():
    caller, answerer = pair()
    ((invite, _),) = caller.invite(0)
    answerer.receive(invite, 0, CALLER)
    assert statuses(answerer.receive(invite, 1, CALLER)[1]) == [100]
    answerer.accept(2)
    assert statuses(answerer.receive(invite, 3, CALLER)[1]) == [200]


def test_options_in_the_dialog_is_200_and_garbage_is_dropped():
    caller, answerer = confirmed()
    assert answerer.receive(b"\x00garbage\r\n\r\n", 0, CALLER) == ([], [])
    assert answerer.malformed == 1
    options = SipRequest(method="OPTIONS", uri="sip:assistant@127.0.0.1:5060")
    first = parse_message(caller._invite.__bytes__())  # type: ignore[union-attr]
    for name in ("Call-ID", "From", "To", "Via"):
        options.set_header(name, first.get_header(name) or "")
    options.set_header("CSeq", "9 OPTIONS")
    assert statuses(answerer.receive(bytes(options), 0, CALLER)[1]) == [200]
    options.set_header("Call-ID", "another")
    assert statuses(answerer.receive(bytes(options), 0, CALLER)[1]) == [481]


def test_hangup_before_the_answer_refuses_and_during_it_waits_for_the_ack():
    caller, answerer = pair()
    invited(caller, answerer)
    assert statuses(answerer.hangup(0)) == [480]
    caller, answerer = pair()
    deliver(caller, invited(caller, answerer))
    _, acks = deliver(caller, answerer.accept(0))
    assert answerer.hangup(1) == []  # no BYE before the ACK (RFC 3261 §15)
    events, out = answerer.receive(acks[0][0], 2, CALLER)
    assert [type(e) for e in events] == [Confirmed] and statuses(out) == ["BYE"]
