"""SIP messages on the wire, for both ends of a SIP call (CallSim's caller and the built-in's answerer).

Parsing and serializing are aiosipua's (a typed, dependency-free SIP message, header and digest-auth
library, MIT): CallSim writes no SIP parser of its own.  What is here is what both of CallSim's SIP
dialogs need around it:

- :func:`parse_message`: bytes → a request or a response, or :class:`ValueError` naming what is wrong.
  A datagram or a stream message is bounded (:data:`MAX_MESSAGE_BYTES`), so a hostile peer cannot grow
  memory, and whatever the library raises on garbage is one ``ValueError``.
- :class:`StreamFramer`: SIP over TCP is a byte stream; messages are cut at the blank line and
  ``Content-Length`` (RFC 3261 §18.3), with the same bounds.
- :func:`response_to`: a response to a request, its Via, From, To, Call-ID and CSeq copied as §8.2.6 says.
- :func:`new_branch`, :func:`new_tag`, :func:`new_call_id`: random identifiers (never the clock).
"""

from __future__ import annotations

import secrets

from aiosipua.headers import parse_address, parse_via
from aiosipua.message import SipMessage, SipRequest, SipResponse

__all__ = [
    "ALLOW",
    "MAX_MESSAGE_BYTES",
    "T1_NS",
    "T2_NS",
    "Hop",
    "SipRequest",
    "SipResponse",
    "StreamFramer",
    "branch_of",
    "header",
    "new_branch",
    "new_call_id",
    "new_tag",
    "parse_message",
    "reply_hop",
    "response_to",
    "to_tag_of",
    "uri_of",
]

T1_NS = 500_000_000  # RFC 3261's round-trip estimate: the first retransmission
T2_NS = 4_000_000_000  # retransmissions of a non-INVITE request are spaced at most this
ALLOW = "INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE"
Hop = tuple[str, int]  # where a message goes: host, port
MAX_MESSAGE_BYTES = 65_535  # a UDP datagram's most; a stream message longer than this is hostile
MAX_HEADER_BYTES = 16_384
REASONS = {
    100: "Trying",
    180: "Ringing",
    183: "Session Progress",
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    407: "Proxy Authentication Required",
    404: "Not Found",
    405: "Method Not Allowed",
    481: "Call/Transaction Does Not Exist",
    486: "Busy Here",
    487: "Request Terminated",
    488: "Not Acceptable Here",
    500: "Server Internal Error",
    503: "Service Unavailable",
    603: "Decline",
}


def parse_message(data: bytes) -> SipRequest | SipResponse:
    """One SIP message, or :class:`ValueError` with the reason (too long, no start line, garbage)."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError(f"a SIP message of {len(data)} bytes (more than {MAX_MESSAGE_BYTES})")
    if not data.strip():
        raise ValueError("an empty SIP message")
    try:
        message = SipMessage.parse(data)
    except Exception as exc:  # the library's own errors on garbage are not all ValueError
        raise ValueError(f"not a SIP message: {exc}") from exc
    if isinstance(message, SipResponse):
        if not 100 <= message.status_code <= 699:
            raise ValueError(f"a SIP response with status {message.status_code}")
    elif not message.method.isalpha() or not message.method.isupper():
        raise ValueError(f"a SIP request with method {message.method[:40]!r}")
    for name in ("Call-ID", "CSeq", "From", "To", "Via"):
        if not message.get_header(name):
            raise ValueError(f"a SIP message without {name}")
    return message


def header(message: SipRequest | SipResponse, name: str) -> str:
    """A header's first value, or ``""``."""
    return message.get_header(name) or ""


class StreamFramer:
    """Cuts SIP messages out of a TCP byte stream (RFC 3261 §18.3), each bounded."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """The whole messages ``data`` completes; :class:`ValueError` for a stream no SIP peer sends."""
        self._buffer += data
        out: list[bytes] = []
        while True:
            while self._buffer.startswith(b"\r\n"):  # keep-alive CRLFs (RFC 5626)
                del self._buffer[:2]
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEADER_BYTES:
                    raise ValueError(f"SIP headers longer than {MAX_HEADER_BYTES} bytes on the stream")
                return out
            length = _content_length(bytes(self._buffer[:end]))
            total = end + 4 + length
            if total > MAX_MESSAGE_BYTES:
                raise ValueError(f"a SIP message of {total} bytes on the stream")
            if len(self._buffer) < total:
                return out
            out.append(bytes(self._buffer[:total]))
            del self._buffer[:total]


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() in (b"content-length", b"l"):
            try:
                length = int(value.strip())
            except ValueError:
                raise ValueError(f"Content-Length {value.strip()[:20]!r} is not a number") from None
            if length < 0:
                raise ValueError(f"Content-Length {length}")
            return length
    return 0  # over a stream it is mandatory; a message without one has no body


def response_to(
    request: SipRequest,
    status: int,
    *,
    to_tag: str | None = None,
    reason: str | None = None,
    body: str = "",
    extra: tuple[tuple[str, str], ...] = (),
) -> SipResponse:
    """A response to ``request`` (RFC 3261 §8.2.6): its Via, From, Call-ID and CSeq, its To with our tag."""
    response = SipResponse(status_code=status, reason_phrase=reason or REASONS.get(status, "Unknown"))
    for value in request.headers.get("Via"):
        response.add_header("Via", value)
    to = header(request, "To")
    if to_tag and status > 100 and ";tag=" not in to.lower():
        to = f"{to};tag={to_tag}"
    for name, value in (("From", header(request, "From")), ("To", to)):
        response.set_header(name, value)
    response.set_header("Call-ID", header(request, "Call-ID"))
    response.set_header("CSeq", header(request, "CSeq"))
    for name, value in extra:
        response.add_header(name, value)
    if body:
        response.set_header("Content-Type", "application/sdp")
    response.body = body.encode()
    response.set_header("Content-Length", str(len(response.body)))
    return response


def new_branch() -> str:
    """A Via branch (RFC 3261's magic cookie, then randomness)."""
    return "z9hG4bK" + secrets.token_hex(8)


def new_tag() -> str:
    return secrets.token_hex(6)


def new_call_id(host: str) -> str:
    return f"{secrets.token_hex(12)}@{host}"


def branch_of(message: SipRequest | SipResponse) -> str | None:
    vias = message.get_header_values("Via")
    if not vias:
        return None
    try:
        return parse_via(vias[0]).branch
    except (ValueError, IndexError):
        return None


def to_tag_of(response: SipResponse) -> str | None:
    try:
        return parse_address(header(response, "To")).tag
    except (ValueError, IndexError):
        return None


def uri_of(name_addr: str) -> str:
    """The URI inside ``<...>`` of a name-addr (or the whole value of an addr-spec)."""
    start, end = name_addr.find("<"), name_addr.find(">")
    if 0 <= start < end:
        return name_addr[start + 1 : end]
    return name_addr.split(";", 1)[0].strip()


def reply_hop(request: SipRequest) -> tuple[str, int]:
    """Where a response goes: the top Via's ``received``/``rport``, else its sent-by (§18.2.2, RFC 3581)."""
    try:
        via = parse_via(request.get_header_values("Via")[0])
    except (ValueError, IndexError):
        return ("127.0.0.1", 5060)
    host = via.received or via.host
    port = int(via.rport) if via.rport and via.rport.isdigit() else (via.port or 5060)
    return host.strip("[]"), port
