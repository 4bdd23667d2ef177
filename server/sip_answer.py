"""The answering side of a SIP call as a Sans-I/O state machine: one INVITE dialog of a user agent server.

The mirror of CallSim's caller (:class:`voice.lines.sip_dialog.SipCaller`), for the gateway that puts SIP in
front of a raw-PCM assistant (:mod:`server.sip_gateway`).  Fed the messages that arrive and the time
(nanoseconds on the gateway's injected clock), it returns what to send and what happened; it opens no socket
and reads no clock, so every path is a unit test with no network.  What RFC 3261 asks of a callee:

- **INVITE**: 100 Trying at once, and :class:`Invited` for the gateway, which connects the assistant and
  then calls :meth:`SipAnswerer.accept` (200 OK with the SDP answer and our Contact) or
  :meth:`SipAnswerer.reject`.  An INVITE without a usable SDP offer is 488 at once (``answer_offer`` raises
  :class:`ValueError`).  A retransmitted INVITE gets the last response again.
- **The 200 until the ACK**: retransmitted over UDP (T1, doubling up to T2) until the ACK; none within
  64*T1 is :class:`~voice.lines.sip_events.Ended` and a BYE (§13.3.1.4).  A final refusal is retransmitted
  likewise until its ACK.
- **CANCEL** before the 200: 200 to the CANCEL, 487 to the INVITE, :class:`Cancelled`.
- **In the dialog**: BYE is 200 and :class:`~voice.lines.sip_events.RemoteBye`; a re-INVITE or UPDATE is 200
  with our answer to its offer and :class:`~voice.lines.sip_events.MediaChanged`; OPTIONS and INFO get 200;
  another method 405; a malformed message is dropped and counted.
- **Hang-up**: :meth:`SipAnswerer.hangup` sends BYE (once the ACK came: §15), retransmitted until answered
  for at most ``bye_timeout_ns``; before the 200 it refuses the call instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from aiosipua.headers import parse_cseq, parse_uri

from voice.lines.sip_events import Ended, MediaChanged, RemoteBye
from voice.lines.sip_message import (
    SipRequest,
    SipResponse,
    branch_of,
    header,
    new_branch,
    new_tag,
    parse_message,
    reply_hop,
    response_to,
    uri_of,
)

T1_NS = 500_000_000
T2_NS = 4_000_000_000
BYE_TIMEOUT_NS = 4_000_000_000  # our BYE unanswered this long: the call is over anyway
ALLOW = "INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE"
Hop = tuple[str, int]
Out = list[tuple[bytes, Hop]]


class State(Enum):
    IDLE = "idle"  # no INVITE yet
    INVITED = "invited"  # 100 sent, waiting for the gateway's accept or reject
    ANSWERED = "answered"  # 200 sent, waiting for the ACK
    CONFIRMED = "confirmed"
    CLOSING = "closing"  # our BYE is out
    DONE = "done"


@dataclass(frozen=True)
class Invited:
    """A new call: accept it (once the assistant is connected) or reject it."""

    offer: str
    request: SipRequest


@dataclass(frozen=True)
class Confirmed:
    """The caller's ACK: media flows both ways from now on."""


@dataclass(frozen=True)
class Cancelled:
    """The caller gave up before we answered."""


AnswerEvent = Invited | Confirmed | Cancelled | RemoteBye | MediaChanged | Ended


@dataclass
class _Pending:
    """A message we retransmit over UDP until it is acknowledged or we give up."""

    data: bytes
    hop: Hop
    next_at: int
    interval: int
    give_up_at: int


@dataclass
class SipAnswerer:
    """One incoming call's dialog.  Feed it :meth:`receive` and :meth:`poll`; send what they return."""

    local: Hop  # our SIP socket, for Via and Contact
    answer_offer: Callable[[str], str]  # our SDP answer to an offer; ValueError if it is unusable
    user: str = "assistant"
    transport: str = "UDP"
    bye_timeout_ns: int = BYE_TIMEOUT_NS
    state: State = State.IDLE
    call_id: str = ""
    malformed: int = 0
    reoffers: int = 0
    _tag: str = field(default_factory=new_tag)
    _invite: SipRequest | None = None
    _source: Hop = ("127.0.0.1", 5060)
    _answer: str = ""  # our SDP answer to the current offer
    _last: tuple[bytes, Hop] | None = None  # the last response to the INVITE (for its retransmissions)
    _final: _Pending | None = None  # a final response to an INVITE, retransmitted until its ACK
    _final_cseq: int = 0
    _bye: _Pending | None = None
    _bye_wanted: bool = False
    _cseq: int = 0
    _route: list[str] = field(default_factory=list)
    _remote_target: str = ""

    @property
    def udp(self) -> bool:
        return self.transport.upper() == "UDP"

    # --- what the gateway does ----------------------------------------------------------------------------

    def accept(self, now: int) -> Out:
        """Answer the call: 200 OK with our SDP answer, retransmitted until the ACK."""
        if self.state is not State.INVITED or self._invite is None:
            return []
        self.state = State.ANSWERED
        ok = response_to(
            self._invite, 200, to_tag=self._tag, body=self._answer, extra=self._contact_headers()
        )
        return self._final_response(ok, now)

    def reject(self, now: int, status: int, reason: str | None = None) -> Out:
        """Refuse the call before it is answered (486 busy, 503 the assistant is unreachable, ...)."""
        if self.state is not State.INVITED or self._invite is None:
            return []
        self.state = State.DONE
        return self._final_response(response_to(self._invite, status, to_tag=self._tag, reason=reason), now)

    def hangup(self, now: int) -> Out:
        """End the call: BYE once answered (after the ACK, or when it never comes), a refusal before."""
        if self.state is State.INVITED:
            return self.reject(now, 480, "Temporarily Unavailable")
        if self.state is State.ANSWERED:
            self._bye_wanted = True  # §15: no BYE before the ACK (or the 200's time running out)
            return []
        if self.state is State.CONFIRMED:
            return self._send_bye(now)
        return []

    def next_deadline(self) -> int | None:
        """When :meth:`poll` next has something to do, if ever."""
        times = [t for p in (self._final, self._bye) if p is not None for t in (p.next_at, p.give_up_at)]
        return min(times) if times else None

    def poll(self, now: int) -> tuple[list[AnswerEvent], Out]:
        """Retransmissions and timeouts due by ``now``."""
        events: list[AnswerEvent] = []
        out: Out = []
        final = self._final
        if final is not None and now >= final.give_up_at:
            self._final = None
            if self.state is State.ANSWERED:  # the 200 was never ACKed: end the session with a BYE
                events.append(Ended("no ACK for our 200 OK"))
                self.state = State.CONFIRMED
                out += self._send_bye(now)
        elif final is not None and now >= final.next_at:
            out.append((final.data, final.hop))
            final.interval = min(final.interval * 2, T2_NS)
            final.next_at = now + final.interval
        bye = self._bye
        if bye is not None and now >= bye.give_up_at:
            self._bye = None
            if self.state is State.CLOSING:
                self.state = State.DONE
                events.append(Ended("no answer to our BYE"))
        elif bye is not None and now >= bye.next_at:
            out.append((bye.data, bye.hop))
            bye.interval = min(bye.interval * 2, T2_NS)
            bye.next_at = now + bye.interval
        return events, out

    # --- what arrives -------------------------------------------------------------------------------------

    def receive(self, data: bytes, now: int, source: Hop | None = None) -> tuple[list[AnswerEvent], Out]:
        """One message from the network (from ``source`` over UDP): its events and what to send back."""
        try:
            message = parse_message(data)
        except ValueError:
            self.malformed += 1
            return [], []
        hop = source or (reply_hop(message) if isinstance(message, SipRequest) else self._source)
        if self.call_id and header(message, "Call-ID") != self.call_id:
            if isinstance(message, SipRequest) and message.method != "ACK":
                return [], [(bytes(response_to(message, 481)), hop)]
            return [], []
        if isinstance(message, SipResponse):
            return self._on_response(message)
        return self._on_request(message, now, hop)

    def _on_request(self, request: SipRequest, now: int, hop: Hop) -> tuple[list[AnswerEvent], Out]:
        method = request.method
        if method == "INVITE":
            return self._on_invite(request, now, hop)
        if method == "ACK":
            return self._on_ack(request, now)
        if method == "CANCEL":
            return self._on_cancel(request, now, hop)
        if method == "BYE":
            if self.state in (State.ANSWERED, State.CONFIRMED, State.CLOSING):
                self.state = State.DONE
                self._final = self._bye = None
                reason = header(request, "Reason") or "the caller sent BYE"
                return [RemoteBye(reason)], [(bytes(response_to(request, 200)), hop)]
            return [], [(bytes(response_to(request, 481 if self.state is not State.DONE else 200)), hop)]
        if method == "UPDATE":
            return self._on_reoffer(request, now, hop)
        if method in ("OPTIONS", "INFO", "NOTIFY"):
            return [], [(bytes(response_to(request, 200, extra=(("Allow", ALLOW),))), hop)]
        return [], [(bytes(response_to(request, 405, extra=(("Allow", ALLOW),))), hop)]

    def _on_invite(self, request: SipRequest, now: int, hop: Hop) -> tuple[list[AnswerEvent], Out]:
        if self._invite is not None and branch_of(request) == branch_of(self._invite):
            return [], [self._last] if self._last is not None else []  # a retransmission
        if self.state is not State.IDLE:
            if self.state in (State.CONFIRMED, State.ANSWERED):
                return self._on_reoffer(request, now, hop)
            return [], [(bytes(response_to(request, 491 if self.state is State.INVITED else 481)), hop)]
        self._invite, self._source = request, hop
        self.call_id = header(request, "Call-ID")
        self._route = request.get_header_values("Record-Route")  # a callee's route set keeps their order
        contact = header(request, "Contact")
        self._remote_target = uri_of(contact) if contact else uri_of(header(request, "From"))
        trying = (bytes(response_to(request, 100)), hop)
        self._last = trying
        offer = request.text
        try:
            if not offer.strip():
                raise ValueError("no SDP offer")
            self._answer = self.answer_offer(offer)
        except ValueError as exc:
            self.state = State.INVITED
            return [Ended(f"488: {exc}")], [trying, *self.reject(now, 488)]
        self.state = State.INVITED
        return [Invited(offer, request)], [trying]

    def _on_ack(self, request: SipRequest, now: int) -> tuple[list[AnswerEvent], Out]:
        if self._final is None or _cseq_number(request) != self._final_cseq:
            return [], []
        self._final = None
        if self.state is not State.ANSWERED:
            return [], []  # the ACK of a refusal, or of a re-INVITE's 200
        self.state = State.CONFIRMED
        out = self._send_bye(now) if self._bye_wanted else []
        return [Confirmed()], out

    def _on_cancel(self, request: SipRequest, now: int, hop: Hop) -> tuple[list[AnswerEvent], Out]:
        if self._invite is None or branch_of(request) != branch_of(self._invite):
            return [], [(bytes(response_to(request, 481)), hop)]
        ok = (bytes(response_to(request, 200, to_tag=self._tag)), hop)
        if self.state is not State.INVITED:
            return [], [ok]  # answered already: the CANCEL changes nothing (§9.2)
        return [Cancelled()], [ok, *self.reject(now, 487)]

    def _on_reoffer(self, request: SipRequest, now: int, hop: Hop) -> tuple[list[AnswerEvent], Out]:
        self.reoffers += 1
        offer = request.text
        if offer.strip():
            try:
                self._answer = self.answer_offer(offer)
            except ValueError:
                return [], [(bytes(response_to(request, 488)), hop)]
        ok = response_to(request, 200, body=self._answer, extra=self._contact_headers())
        if request.method == "INVITE" and self.udp and self.state is State.CONFIRMED:
            self._final_cseq = _cseq_number(request)  # its 200 too is repeated until its ACK
            self._final = _Pending(bytes(ok), hop, now + T1_NS, T1_NS, now + 64 * T1_NS)
        events: list[AnswerEvent] = [MediaChanged(offer)] if offer.strip() else []
        return events, [(bytes(ok), hop)]

    def _on_response(self, response: SipResponse) -> tuple[list[AnswerEvent], Out]:
        try:
            method = parse_cseq(header(response, "CSeq")).method.upper()
        except (ValueError, IndexError):
            self.malformed += 1
            return [], []
        if method == "BYE" and response.status_code >= 200 and self.state is State.CLOSING:
            self._bye = None
            self.state = State.DONE
            return [Ended(f"BYE answered {response.status_code}")], []
        return [], []

    # --- building messages --------------------------------------------------------------------------------

    def _final_response(self, response: SipResponse, now: int) -> Out:
        assert self._invite is not None
        data = bytes(response)
        self._last = (data, self._source)
        if self.udp:
            self._final_cseq = _cseq_number(self._invite)
            self._final = _Pending(data, self._source, now + T1_NS, T1_NS, now + 64 * T1_NS)
        return [(data, self._source)]

    def _send_bye(self, now: int) -> Out:
        assert self._invite is not None
        self.state = State.CLOSING
        self._bye_wanted = False
        self._cseq += 1
        bye = SipRequest(method="BYE", uri=self._remote_target)
        host, port = self.local
        bye.set_header("Via", f"SIP/2.0/{self.transport.upper()} {host}:{port};branch={new_branch()};rport")
        bye.set_header("Max-Forwards", "70")
        to = header(self._invite, "To")
        bye.set_header("From", to if ";tag=" in to.lower() else f"{to};tag={self._tag}")
        bye.set_header("To", header(self._invite, "From"))
        bye.set_header("Call-ID", self.call_id)
        bye.set_header("CSeq", f"{self._cseq} BYE")
        for route in self._route:
            bye.add_header("Route", route)
        bye.set_header("Content-Length", "0")
        data, hop = bytes(bye), self._dialog_hop()
        give_up = now + self.bye_timeout_ns
        self._bye = _Pending(data, hop, now + T1_NS if self.udp else give_up, T1_NS, give_up)
        return [(data, hop)]

    def _dialog_hop(self) -> Hop:
        """Where our in-dialog requests go: the first Route's host, else the caller's Contact (§12.2.1.1)."""
        uri = uri_of(self._route[0]) if self._route else self._remote_target
        try:
            parsed = parse_uri(uri)
        except (ValueError, IndexError):
            return self._source
        if not parsed.host:
            return self._source
        return parsed.host.strip("[]"), parsed.port or 5060

    def _contact_headers(self) -> tuple[tuple[str, str], ...]:
        host, port = self.local
        contact = f"<sip:{self.user}@{host}:{port};transport={self.transport.lower()}>"
        return (("Contact", contact), ("Allow", ALLOW), *(("Record-Route", r) for r in self._route))


def _cseq_number(message: SipRequest | SipResponse) -> int:
    try:
        return parse_cseq(header(message, "CSeq")).seq
    except (ValueError, IndexError, AttributeError):
        return -1
