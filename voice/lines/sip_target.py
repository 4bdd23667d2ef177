"""A SIP target's URI: ``sip:USER@HOST[:PORT][;transport=udp|tcp]``, read once, shown without secrets.

The user part is who is called (the bot's extension or number); a password never belongs in the URI (the
credentials come from the config file or the environment, :mod:`voice.lines.sip_settings`), and one that is
there anyway is taken out of every name the target prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiosipua.headers import parse_uri

DEFAULT_PORT = 5060
TRANSPORTS = ("UDP", "TCP")


@dataclass(frozen=True)
class SipTarget:
    user: str
    host: str
    port: int = DEFAULT_PORT
    transport: str = "UDP"

    @property
    def request_uri(self) -> str:
        """The INVITE's Request-URI (and the To header's)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        return f"sip:{user}{host}:{self.port};transport={self.transport.lower()}"

    def __str__(self) -> str:
        return self.request_uri


def parse_sip_uri(text: str) -> SipTarget:
    """A :class:`SipTarget`, or :class:`ValueError` naming what is wrong with ``text``."""
    if not text.lower().startswith("sip:"):
        raise ValueError(f"{_shown(text)!r} is not a sip: URI (sip:USER@HOST[:PORT][;transport=udp|tcp])")
    try:
        uri = parse_uri(text)
    except (ValueError, IndexError) as exc:
        raise ValueError(f"{_shown(text)!r} is not a SIP URI: {exc}") from exc
    host = (uri.host or "").strip("[]")
    if not host:
        raise ValueError(f"{_shown(text)!r} names no host")
    port = uri.port or DEFAULT_PORT
    if not 0 < port < 65536:
        raise ValueError(f"{_shown(text)!r}: port {port} is out of range")
    transport = str(uri.params.get("transport") or "udp").upper()
    if transport not in TRANSPORTS:
        raise ValueError(f"{_shown(text)!r}: transport {transport.lower()} (CallSim dials udp or tcp)")
    user = (uri.user or "").split(":", 1)[0]  # user:password@ → the user alone
    return SipTarget(user, host, port, transport)


def _shown(text: str) -> str:
    """``text`` with a password in its user part taken out."""
    head, at, tail = text.partition("@")
    if at and head.count(":") >= 2:
        return head.rsplit(":", 1)[0] + ":***@" + tail
    return text
