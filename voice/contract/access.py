"""Who may connect to a server CallSim runs: loopback hosts, and which web pages (browser ``Origin``\\ s).

Shared by the built-in assistant's server (``server/gate.py``: ``callsim serve``) and the browser page of
``callsim talk --web`` (``voice/app/live/web.py``), so both draw the same line.

A browser lets any page open a websocket to any address, ``ws://127.0.0.1`` included, and says which page
did in the ``Origin`` header; programs (CallSim itself, a bot) send none.  So a server on this machine must
refuse upgrades whose ``Origin`` is some other site's page.  The default allows only pages served from a
loopback host (``localhost``, ``127.0.0.0/8``, ``[::1]``); other pages must be named explicitly.  The
request's ``Host`` is deliberately not trusted as "same host": with DNS rebinding, a hostile page's own
name resolves to 127.0.0.1, and its ``Origin`` and ``Host`` then agree.

Off loopback both servers need a token (:func:`open_without_token`): anyone who can reach the port could
otherwise call the assistant, run up its LLM bill, or (``talk --web``) read the recorded calls.

Both servers refuse an upgrade or a request with one check, :func:`check_access` (the token presented
in any of the ways :func:`presented_tokens` reads, then the page's ``Origin``), giving a :class:`Denial`:
the HTTP status, and a reason that is the response's body and the server's log line.

Both commands also take the same options to set these rules (:func:`add_access_options`,
:func:`access_token`): they live here, beside the rules, so the server (``server/serve_options.py``) and the
talk command import them from the room below both rather than one from the other's.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from voice.errors import ConfigError

__all__ = [
    "Denial",
    "access_token",
    "add_access_options",
    "bearer_token",
    "check_access",
    "is_loopback_host",
    "open_without_token",
    "origin_allowed",
    "presented_tokens",
    "token_matches",
]

ANY_ORIGIN = "*"


def is_loopback_host(host: str) -> bool:
    """``localhost``, an address in 127.0.0.0/8 or ``::1`` (brackets allowed); any other name is not."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None, allowed: Iterable[str] = ()) -> bool:
    """Whether a websocket upgrade with this ``Origin`` header may go on.

    No header (a program, not a browser): yes.  A page on a loopback host: yes.  Otherwise only an origin
    listed in ``allowed`` (``scheme://host[:port]``, compared without case or a trailing slash), or ``*``
    there, which allows every page.  ``null`` (a sandboxed frame, a ``file:`` page) is refused unless listed.
    """
    if origin is None:
        return True
    wanted = origin.strip().lower().rstrip("/")
    listed = {entry.strip().lower().rstrip("/") for entry in allowed}
    if ANY_ORIGIN in listed or wanted in listed:
        return True
    try:
        parts = urlsplit(wanted)
    except ValueError:
        return False
    return (
        parts.scheme in ("http", "https") and bool(parts.hostname) and is_loopback_host(parts.hostname or "")
    )


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header's value, or None (no header, another scheme)."""
    kind, _, value = (authorization or "").strip().partition(" ")
    return value.strip() if kind.lower() == "bearer" and value.strip() else None


def token_matches(presented: str | None, token: str) -> bool:
    """Whether ``presented`` is ``token``, compared in constant time (its value cannot be guessed from
    response times); nothing presented never matches."""
    return presented is not None and hmac.compare_digest(presented.encode(), token.encode())


def presented_tokens(
    authorization: str | None, query: str = "", cookies: Iterable[str] = (), cookie_name: str = ""
) -> list[str]:
    """Every token a request carries: ``Authorization: Bearer T`` (programs), ``?token=T`` in its query
    (a browser's address) and, if ``cookie_name`` is given, that cookie of its ``Cookie`` headers (a page
    that was opened with ``?token=``)."""
    found = [t for t in (bearer_token(authorization),) if t is not None]
    found += parse_qs(query).get("token", [])
    for header in cookies if cookie_name else ():
        for pair in header.split(";"):
            name, eq, value = pair.strip().partition("=")
            if eq and name == cookie_name:
                found.append(unquote(value))
    return found


@dataclass(frozen=True)
class Denial:
    """A request refused with an HTTP status, and why (the response's body and the server's log line)."""

    status: int
    reason: str

    @property
    def headers(self) -> list[tuple[str, str]]:
        """The response's headers: plain text, and for a missing or wrong token the scheme to use."""
        headers = [("Content-Type", "text/plain; charset=utf-8")]
        return headers + ([("WWW-Authenticate", "Bearer")] if self.status == 401 else [])

    @property
    def body(self) -> bytes:
        return (self.reason + "\n").encode()


def check_access(
    token: str,
    presented: Iterable[str],
    origin: str | None = None,
    allowed_origins: Iterable[str] = (),
    command: str = "callsim serve",
) -> Denial | None:
    """Whether a request may go on: None, or its :class:`Denial`.

    Without the server's ``token`` (when it has one) among the ``presented`` ones: 401; a page of another
    site (``origin``, :func:`origin_allowed` with ``allowed_origins``): 403, naming ``command``'s option
    that would allow it.  Tokens are compared in constant time (:func:`token_matches`).
    """
    if token:
        offered = list(presented)
        if not offered:
            return Denial(401, "a token is required (Authorization: Bearer TOKEN, or ?token=TOKEN)")
        if not any(token_matches(t, token) for t in offered):
            return Denial(401, "wrong token")
    if origin is not None and not origin_allowed(origin, allowed_origins):
        return Denial(403, f"origin {origin[:80]!r} is not allowed ({command} --allow-origin ORIGIN)")
    return None


def open_without_token(host: str, token: str) -> str | None:
    """Why serving on ``host`` without a token is refused, or None (a loopback host, or a token given)."""
    if is_loopback_host(host) or token:
        return None
    return (
        f"host {host!r} is not a loopback address: anyone who can reach it could call the assistant, so a"
        " token is required (--token or --token-env NAME)"
    )


# --- the options that set these rules: ``callsim serve`` and ``callsim talk --web`` ---------------------

TOKEN_HELP = (
    "the token every caller must present (Authorization: Bearer TOKEN, or ?token=TOKEN in a browser's"
    " address); required when --host is not a loopback address"
)


def add_access_options(p: argparse._ActionsContainer) -> None:
    """``--token``, ``--token-env`` and ``--allow-origin`` (``serve``, ``talk --web``): who may call a
    server CallSim runs (:mod:`voice.contract.access`); :func:`access_token` reads the token back."""
    p.add_argument(
        "--token", default="", help=TOKEN_HELP + " (visible to other local users: see --token-env)"
    )
    p.add_argument(
        "--token-env", default="", metavar="NAME", help="read --token from this environment variable"
    )
    p.add_argument(
        "--allow-origin",
        dest="allowed_origins",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web page allowed to call from a browser, e.g. https://app.example.com (repeatable; '*' for"
        " any); by default only programs (no Origin) and pages on loopback hosts",
    )


def access_token(args: argparse.Namespace) -> str:
    """The token of :func:`add_access_options` ("" for none).

    Raises :class:`ConfigError` for ``--token-env`` naming an unset variable or with ``--token`` too.
    """
    token: str = args.token
    if args.token_env:
        if token:
            raise ConfigError("give --token or --token-env, not both")
        token = os.environ.get(args.token_env, "")
        if not token:
            raise ConfigError(f"--token-env {args.token_env}: the environment variable is unset or empty")
    return token
