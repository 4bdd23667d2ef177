"""CallSim's side of a SIP call as a Sans-I/O state machine: one INVITE dialog of a user agent client.

Fed the messages that arrive and the time (ns on the call's injected clock), it returns what to send (bytes
and the next hop) and what happened (:data:`~voice.lines.sip_events.DialogEvent`); it opens no socket and
reads no clock, so every path is a unit test.  aiosipua parses and answers digest challenges; this is the
RFC 3261 behaviour a caller needs:

- INVITE with the offer, retransmitted over UDP (timer A) until a response; no final answer within
  ``answer_timeout_ns`` is ``no_answer`` (a CANCEL first if anything was heard).  A 18x with SDP is early
  media (heard and recorded before the answer).  A 401/407 is answered once with the credentials; a second
  is ``auth_refused``.  2xx is ACKed (through the Record-Route set, again for each retransmitted 2xx);
  every other final answer is ACKed and refused with a named outcome.
- In the dialog: the far end's BYE is answered and ends the call; a re-INVITE or UPDATE (hold, a codec
  change) is answered with ``answer_offer`` and is never fatal; OPTIONS and INFO get 200, other methods 405,
  another call's requests 481; a malformed message is dropped and counted.
- :meth:`SipCaller.hangup`: CANCEL before the answer, BYE after it (retransmitted, for ``bye_timeout_ns``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from aiosipua.auth import SipDigestAuth, answer_challenge
from aiosipua.headers import parse_cseq, parse_uri

from voice.lines import sip_events as ev
from voice.lines import sip_message as wire
from voice.lines.sip_message import ALLOW, T1_NS, T2_NS, Hop, SipRequest, SipResponse, header, response_to

Outcome = tuple[list[ev.DialogEvent], list[tuple[bytes, Hop]]]  # what happened, what to send
ANSWER_TIMEOUT_NS = 12_000_000_000  # ringing this long: CANCEL, ``no_answer`` (inside the driver's 15 s)
BYE_TIMEOUT_NS = 2_000_000_000  # a BYE unanswered this long: the call is over anyway


class State(Enum):
    CALLING = "calling"
    EARLY = "early"
    CONFIRMED = "confirmed"
    CLOSING = "closing"
    DONE = "done"


@dataclass(frozen=True)
class CallerIdentity:
    """Who calls whom, and how: the SIP URIs and the address our messages name as ours."""

    request_uri: str  # sip:user@host:port;transport=udp
    next_hop: Hop  # where the INVITE goes (the target, or an outbound proxy)
    local: Hop  # our SIP socket, for Via and Contact
    transport: str = "UDP"
    from_user: str = "callsim"
    display_name: str = "CallSim"
    credentials: SipDigestAuth | None = None
    extra_headers: tuple[tuple[str, str], ...] = ()
    user_agent: str = "CallSim"


@dataclass
class _Pending:
    """A request we may retransmit (UDP only): when next, how often so far, when to give up."""

    request: SipRequest
    hop: Hop
    next_at: int
    interval: int
    give_up_at: int
    invite: bool = False


@dataclass
class SipCaller:
    """One outgoing call's dialog.  Feed it :meth:`receive` and :meth:`poll`; send what they return."""

    who: CallerIdentity
    offer_sdp: str
    answer_offer: Callable[[str], str]  # our SDP answer to the far end's new offer (a re-INVITE's)
    call_id: str
    answer_timeout_ns: int = ANSWER_TIMEOUT_NS
    bye_timeout_ns: int = BYE_TIMEOUT_NS
    state: State = State.CALLING
    malformed: int = 0
    strays: int = 0
    reoffers: int = 0
    statuses: list[int] = field(default_factory=list)
    _tag: str = field(default_factory=wire.new_tag)
    _cseq: int = 1
    _invite: SipRequest | None = None
    _pending: _Pending | None = None
    _auth_tried: bool = False
    _to_tag: str | None = None
    _route: list[str] = field(default_factory=list)
    _remote_target: str | None = None
    _early_sdp: str = ""
    _ack: SipRequest | None = None
    _answer_deadline: int = 0
    _cancelled: bool = False
    _timed_out: bool = False

    @property
    def udp(self) -> bool:
        return self.who.transport.upper() == "UDP"

    # --- what CallSim does ------------------------------------------------------------------------------

    def invite(self, now: int) -> list[tuple[bytes, Hop]]:
        """The INVITE that starts the call."""
        self._answer_deadline = now + self.answer_timeout_ns
        return self._send_invite(now, None)

    def hangup(self, now: int) -> list[tuple[bytes, Hop]]:
        """End the call: CANCEL while it rings, BYE once answered; nothing if it is already over, or if
        nothing has answered the INVITE yet (RFC 3261 §9.1: no CANCEL before a provisional response)."""
        if self.state is State.CALLING and not self.statuses:
            self.state, self._pending = State.DONE, None
            return []
        if self.state in (State.CALLING, State.EARLY) and self._invite is not None:
            self._cancelled = True
            self.state = State.CLOSING
            cancel = self._request_like_invite("CANCEL")
            return self._track(cancel, self.who.next_hop, now, invite=False)
        if self.state is State.CONFIRMED:
            self.state = State.CLOSING
            bye = self._in_dialog("BYE")
            return self._track(bye, self._dialog_hop(), now, invite=False)
        return []

    def next_deadline(self) -> int | None:
        """When :meth:`poll` next has something to do (a retransmission, a timeout), if ever."""
        times = []
        if self._pending is not None:
            times += [self._pending.next_at, self._pending.give_up_at]
        if self.state in (State.CALLING, State.EARLY) and not self._cancelled:
            times.append(self._answer_deadline)
        return min(times) if times else None

    def poll(self, now: int) -> Outcome:
        """Retransmissions and timeouts due by ``now``."""
        events: list[ev.DialogEvent] = []
        out: list[tuple[bytes, Hop]] = []
        pending = self._pending
        if pending is not None and now >= pending.give_up_at:
            self._pending = None
            if self.state is State.CLOSING:
                self.state = State.DONE
                if self._timed_out:
                    events.append(ev.Refused(408, "no answer, and none to our CANCEL", "no_answer"))
                else:
                    events.append(ev.Ended("no answer to our BYE or CANCEL"))
            elif pending.invite and self.state is State.CALLING:
                self.state = State.DONE
                events.append(ev.Refused(408, "no response to the INVITE", "no_answer"))
        elif pending is not None and now >= pending.next_at:
            out.append((bytes(pending.request), pending.hop))
            pending.interval = pending.interval * 2 if pending.invite else min(pending.interval * 2, T2_NS)
            pending.next_at = now + pending.interval
        if (
            self.state in (State.CALLING, State.EARLY)
            and not self._cancelled
            and now >= self._answer_deadline
        ):
            if not self.statuses:  # not even a 100: nothing to CANCEL (RFC 3261 §9.1), the call is over
                self.state, self._pending = State.DONE, None
                seconds = self.answer_timeout_ns / 1e9
                events.append(ev.Refused(408, f"no response to the INVITE within {seconds:g} s", "no_answer"))
            else:
                out += self.hangup(now)
                self._timed_out = True
        return events, out

    # --- what arrives -----------------------------------------------------------------------------------

    def receive(self, data: bytes, now: int, source: Hop | None = None) -> Outcome:
        """One message from the network (from ``source``, over UDP): its events and what to send back.

        A request is answered where it came from (RFC 3581's symmetric response), else to its top Via.
        """
        try:
            message = wire.parse_message(data)
        except ValueError:
            self.malformed += 1
            return [], []
        if header(message, "Call-ID") != self.call_id:
            self.strays += 1
            if isinstance(message, SipRequest) and message.method != "ACK":
                return [], [(bytes(response_to(message, 481)), source or wire.reply_hop(message))]
            return [], []
        if isinstance(message, SipResponse):
            return self._on_response(message, now)
        return self._on_request(message, source or wire.reply_hop(message))

    def _on_response(self, response: SipResponse, now: int) -> Outcome:
        try:
            method = parse_cseq(header(response, "CSeq")).method.upper()
        except (ValueError, IndexError):
            self.malformed += 1
            return [], []
        status = response.status_code
        if method == "INVITE":
            return self._on_invite_response(response, status, now)
        if method in ("BYE", "CANCEL") and status >= 200 and self.state is State.CLOSING:
            if method == "BYE" or self._invite is None:
                self._pending = None
                self.state = State.DONE
                return [ev.Ended(f"{method} answered {status}")], []
            self._pending = None  # the CANCEL is answered; the INVITE's 487 ends the call
        return [], []

    def _on_invite_response(self, response: SipResponse, status: int, now: int) -> Outcome:
        if 200 <= status < 300 and self._ack is not None:  # a retransmitted 2xx: the ACK again
            return [], [(bytes(self._ack), self._dialog_hop())]
        if self._invite is None or wire.branch_of(response) != wire.branch_of(self._invite):
            return [], []
        self.statuses.append(status)
        if self._pending is not None and self._pending.invite:
            self._pending = None  # any response stops the INVITE's retransmission
        if status < 200:
            return self._on_provisional(response, status), []
        if status < 300:
            return self._on_answer(response)
        out = [(bytes(self._ack_for_failure(response)), self.who.next_hop)]
        if status in (401, 407) and self.state is not State.CLOSING:
            if self._auth_tried or self.who.credentials is None:
                self.state = State.DONE
                why = "the credentials were refused" if self._auth_tried else "no credentials configured"
                return [ev.Refused(status, f"{response.reason_phrase} ({why})", ev.AUTH_REFUSED)], out
            auth = answer_challenge(self.who.credentials, response, status, "INVITE", self.who.request_uri)
            if auth is None:
                self.state = State.DONE
                return [ev.Refused(status, "a challenge CallSim cannot answer", ev.AUTH_REFUSED)], out
            self._auth_tried = True
            return [], out + self._send_invite(now, auth)
        self.state = State.DONE
        outcome = "no_answer" if self._cancelled else ev.OUTCOMES.get(status, ev.CALL_REJECTED)
        if status == 403 and self._auth_tried:  # a proxy's answer to wrong credentials (kamailio's)
            outcome = ev.AUTH_REFUSED
        return [ev.Refused(status, response.reason_phrase, outcome)], out

    def _on_provisional(self, response: SipResponse, status: int) -> list[ev.DialogEvent]:
        if status == 100:
            return []
        events: list[ev.DialogEvent] = [ev.Ringing(status, response.reason_phrase)]
        tag = wire.to_tag_of(response)
        if tag and self.state is State.CALLING:
            self.state, self._to_tag = State.EARLY, tag
        body = response.text
        if body.strip() and not self._early_sdp:
            self._early_sdp = body
            events.append(ev.EarlyMedia(body))
        return events

    def _on_answer(self, response: SipResponse) -> Outcome:
        self._to_tag = wire.to_tag_of(response)
        self._route = list(reversed(response.get_header_values("Record-Route")))
        contact = header(response, "Contact")
        self._remote_target = wire.uri_of(contact) if contact else None
        self._ack = self._in_dialog("ACK", cseq=self._cseq)
        out = [(bytes(self._ack), self._dialog_hop())]
        if self.state is State.CLOSING:  # answered as we cancelled: take the call, then end it at once
            self.state = State.CONFIRMED
            self._cancelled = False
            return [], out
        self.state = State.CONFIRMED
        return [ev.Answered(response.text if response.text.strip() else self._early_sdp)], out

    def _on_request(self, request: SipRequest, hop: Hop) -> Outcome:
        method = request.method
        if method == "ACK":
            return [], []
        if method == "BYE":
            answer = response_to(request, 200)
            if self.state in (State.CONFIRMED, State.EARLY, State.CLOSING):
                self.state = State.DONE
                self._pending = None
                return [ev.RemoteBye(header(request, "Reason") or "the far end sent BYE")], [
                    (bytes(answer), hop)
                ]
            return [], [(bytes(answer), hop)]
        if method in ("INVITE", "UPDATE"):
            self.reoffers += 1
            offer = request.text
            if offer.strip():
                try:
                    answer_sdp = self.answer_offer(offer)
                except ValueError:
                    return [], [(bytes(response_to(request, 488)), hop)]
            else:
                answer_sdp = self.offer_sdp  # no offer in the re-INVITE: ours, answered in its ACK
            ok = response_to(request, 200, body=answer_sdp, extra=(("Contact", self._contact()),))
            events: list[ev.DialogEvent] = [ev.MediaChanged(offer)] if offer.strip() else []
            return events, [(bytes(ok), hop)]
        if method in ("OPTIONS", "INFO", "NOTIFY"):
            return [], [(bytes(response_to(request, 200, extra=(("Allow", ALLOW),))), hop)]
        if method == "CANCEL":
            return [], [(bytes(response_to(request, 481)), hop)]
        return [], [(bytes(response_to(request, 405, extra=(("Allow", ALLOW),))), hop)]

    # --- building requests ------------------------------------------------------------------------------

    def _send_invite(self, now: int, auth: tuple[str, str] | None) -> list[tuple[bytes, Hop]]:
        if self._invite is not None:
            self._cseq += 1
        invite = SipRequest(method="INVITE", uri=self.who.request_uri)
        self._common(invite, "INVITE", wire.new_branch(), to=f"<{self.who.request_uri}>")
        invite.set_header("Contact", self._contact())
        invite.set_header("Allow", ALLOW)
        if auth is not None:
            invite.set_header(*auth)
        for name, value in self.who.extra_headers:
            invite.add_header(name, value)
        invite.set_header("Content-Type", "application/sdp")
        invite.text = self.offer_sdp
        self._invite = invite
        return self._track(invite, self.who.next_hop, now, invite=True)

    def _common(
        self, request: SipRequest, method: str, branch: str, *, to: str, cseq: int | None = None
    ) -> None:
        host, port = self.who.local
        request.set_header("Via", f"SIP/2.0/{self.who.transport.upper()} {host}:{port};branch={branch};rport")
        request.set_header("Max-Forwards", "70")
        request.set_header(
            "From", f'"{self.who.display_name}" <sip:{self.who.from_user}@{host}>;tag={self._tag}'
        )
        request.set_header("To", to)
        request.set_header("Call-ID", self.call_id)
        request.set_header("CSeq", f"{self._cseq if cseq is None else cseq} {method}")
        request.set_header("User-Agent", self.who.user_agent)

    def _request_like_invite(self, method: str) -> SipRequest:
        """CANCEL: the INVITE's Request-URI, Via branch, To and CSeq number (RFC 3261 §9.1)."""
        assert self._invite is not None
        request = SipRequest(method=method, uri=self._invite.uri)
        self._common(
            request, method, wire.branch_of(self._invite) or wire.new_branch(), to=header(self._invite, "To")
        )
        for name in ("Route", "Authorization", "Proxy-Authorization"):
            for value in self._invite.get_header_values(name):
                request.add_header(name, value)
        return request

    def _ack_for_failure(self, response: SipResponse) -> SipRequest:
        """The ACK of a non-2xx final answer: part of the INVITE's transaction (§17.1.1.3)."""
        assert self._invite is not None
        ack = SipRequest(method="ACK", uri=self._invite.uri)
        self._common(ack, "ACK", wire.branch_of(self._invite) or wire.new_branch(), to=header(response, "To"))
        return ack

    def _in_dialog(self, method: str, cseq: int | None = None) -> SipRequest:
        if cseq is None:
            self._cseq += 1
        request = SipRequest(method=method, uri=self._remote_target or self.who.request_uri)
        to = f"<{self.who.request_uri}>" + (f";tag={self._to_tag}" if self._to_tag else "")
        self._common(request, method, wire.new_branch(), to=to, cseq=cseq)
        for route in self._route:
            request.add_header("Route", route)
        return request

    def _dialog_hop(self) -> Hop:
        """Where in-dialog requests go: the first Route's host, else the Contact's (§12.2.1.1)."""
        uri = wire.uri_of(self._route[0]) if self._route else (self._remote_target or self.who.request_uri)
        try:
            parsed = parse_uri(uri)
        except (ValueError, IndexError):
            return self.who.next_hop
        if not parsed.host:
            return self.who.next_hop
        return parsed.host.strip("[]"), parsed.port or 5060

    def _contact(self) -> str:
        host, port = self.who.local
        return f"<sip:{self.who.from_user}@{host}:{port};transport={self.who.transport.lower()}>"

    def _track(self, request: SipRequest, hop: Hop, now: int, *, invite: bool) -> list[tuple[bytes, Hop]]:
        if self.udp:
            give_up = now + (64 * T1_NS if invite else self.bye_timeout_ns)
            self._pending = _Pending(request, hop, now + T1_NS, T1_NS, give_up, invite)
        elif not invite:
            self._pending = _Pending(
                request, hop, now + 10 * self.bye_timeout_ns, T1_NS, now + self.bye_timeout_ns
            )
        return [(bytes(request), hop)]
