"""Extra HTTP headers on a target's websocket upgrade (``--header 'Authorization: Bearer ${TOKEN}'``).

A bot that wants a credential reads it from the upgrade request, not from the URL (which ends up in logs
and browser histories).  ``--header NAME: VALUE`` is repeatable; ``${VAR}`` in the value is replaced by
the environment variable ``VAR`` when CallSim starts, so a CI secret reaches the bot without being on the
command line (which ``ps`` shows to every user of the machine).  Write it in single quotes so the shell
leaves it to CallSim.  Header values are kept in memory only: a run records the header *names*
(:func:`header_names`), never their values.

Refused with a :class:`~voice.errors.ConfigError`: a line without ``:``, a name that is not an HTTP token,
a value (after expansion) with CR, LF or NUL (it would smuggle a header of its own into the request), an
unset variable, and the headers the websocket handshake itself owns (:data:`HANDSHAKE_HEADERS`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from voice.errors import ConfigError

Headers = tuple[tuple[str, str], ...]  # (name, value) in the order given

TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 section 5.6.2
VALUE = re.compile(r"[\t\x20-\x7e]*")  # visible ASCII, space and tab: what every server reads alike
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
HANDSHAKE_HEADERS = frozenset(
    {
        "host",
        "upgrade",
        "connection",
        "content-length",
        "transfer-encoding",
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-extensions",
        "sec-websocket-protocol",
    }
)


def parse_header(text: str, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """``"Name: value ${VAR}"`` → ``("Name", "value <VAR's value>")``; a :class:`ConfigError` if bad.

    The messages name the header, never its value: the value may be the secret.
    """
    name, colon, raw = text.partition(":")
    name = name.strip()
    if not colon or not name:
        missing = "name" if colon else "colon"
        raise ConfigError(
            f"--header takes 'NAME: VALUE', e.g. 'Authorization: Bearer ${{TOKEN}}' (no {missing})"
        )
    if not TOKEN.fullmatch(name):
        raise ConfigError(f"--header {name[:40]!r}: not a valid header name (letters, digits, - and _)")
    if name.lower() in HANDSHAKE_HEADERS:
        raise ConfigError(f"--header {name}: set by the websocket handshake itself, it cannot be replaced")
    env = os.environ if environ is None else environ

    def expand(match: re.Match[str]) -> str:
        variable = match.group(1)
        if variable not in env:
            raise ConfigError(f"--header {name}: the environment variable {variable} is not set")
        return env[variable]

    value = VARIABLE.sub(expand, raw.strip())
    if any(ch in value for ch in "\r\n\0"):
        raise ConfigError(f"--header {name}: its value holds a line break or NUL (CR/LF would forge headers)")
    if not VALUE.fullmatch(value):
        raise ConfigError(f"--header {name}: its value holds a control or non-ASCII character")
    return name, value


def parse_headers(texts: Sequence[str] | None, environ: Mapping[str, str] | None = None) -> Headers:
    """Every ``--header`` in order; the same name twice is a :class:`ConfigError` (which one is meant?)."""
    headers = tuple(parse_header(t, environ) for t in texts or ())
    names = [n.lower() for n, _ in headers]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"--header {', '.join(twice)} given more than once")
    return headers


def header_names(headers: Headers) -> list[str]:
    """What a run records of its headers: their names, sorted (never the values)."""
    return sorted(n for n, _ in headers)
