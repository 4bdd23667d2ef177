"""Credentials in a target's URL never leave the process: the one place they are blotted out.

A bot's URL may carry its credentials (``ws://user:pass@host/path``, ``?token=...``, a presigned
``X-Amz-Signature``).  CallSim dials the real URL, but everything it writes or prints (folder names,
``results.json``, event logs, reports, progress and error lines) names the target by :func:`redact_url`:
the userinfo and the values of query (and fragment) parameters whose names look secret become ``***``.
A name looks secret when it contains one of :data:`SECRET_PARTS` or is one of :data:`SECRET_NAMES`
(case-insensitive): blotting out a harmless ``monkey=1`` costs nothing, printing a token costs a leak.
Free text that may quote a URL (an exception's message) goes through :func:`redact_text`; a message that
may quote the command line (argparse's ``unrecognized arguments: ...``) through :func:`redact_arguments`,
which also hides the values of ``--header`` lines and of anything shaped like a secret header.

A redacted target needs a folder of its own all the same: :func:`url_tag` is a short, slow hash of the full
URL, so two targets differing only in their token get two folders, a rerun finds its folder again, and the
tag is too costly to brute-force into a guessable password.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from urllib.parse import unquote

MASK = "***"
SECRET_PARTS = ("token", "key", "secret", "pass", "pwd", "auth", "signature", "credential", "session", "jwt")
SECRET_NAMES = frozenset({"sig", "code", "otp"})
SECRET_HEADERS = frozenset({"cookie", "proxy-authorization"})  # headers whose name does not say "secret"
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>()\[\]{}]+")
# What is left after the URLs, in text that only looks like one (a mistyped ``ws:/u:p@host?token=x``)
# ``user:password@`` outside a URL, but not a SIP URI's ``sip:user@`` (the user is no secret); a SIP URI's own
# ``sip:user:password@`` has its password masked by SIP_PASSWORD_IN_TEXT
USERINFO_IN_TEXT = re.compile(r"(?<![^\s'\"<(=,;/])(?![sS][iI][pP][sS]?:)[^\s/:@'\"]+:[^\s/@'\"]+@")
SIP_PASSWORD_IN_TEXT = re.compile(r"\b(sips?:[^\s/:@'\"]+):[^\s/@'\"]+@", re.IGNORECASE)
PARAM_IN_TEXT = re.compile(r"([A-Za-z0-9_.%-]+)=([^&\s#'\"]+?)(?=[.,:;!?]*(?:[&\s#'\"]|$))")
# ``Name: value`` as given to --header (or by mistake without it): the value hidden when the name looks secret
HEADER_LINE = re.compile(r"^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:\s*\S")
HEADER_OPTION = "--header"
TAG_ROUNDS = 100_000  # PBKDF2 rounds: ~50 ms once per target, a guess at a password costs the same


def is_secret_name(name: str) -> bool:
    """Whether a query parameter named ``name`` is taken to hold a credential."""
    lowered = unquote(name).strip().lower()
    return lowered in SECRET_NAMES or any(part in lowered for part in SECRET_PARTS)


def _redact_params(text: str) -> str:
    """``a=1&token=x`` → ``a=1&token=***``, every other byte kept as written."""
    pieces = []
    for piece in text.split("&"):
        name, eq, value = piece.partition("=")
        pieces.append(f"{name}={MASK}" if eq and value and is_secret_name(name) else piece)
    return "&".join(pieces)


def redact_url(url: str) -> str:
    """``url`` with its userinfo and secret-looking parameter values replaced by ``***``.

    The rest is kept exactly as written, so a URL without credentials comes back unchanged.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = next((i for i, ch in enumerate(rest) if ch in "/?#"), len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = MASK + "@" + authority.rpartition("@")[2]
    tail, hash_sign, fragment = tail.partition("#")
    path, question, query = tail.partition("?")
    return (
        f"{scheme}://{authority}{path}{question}{_redact_params(query)}{hash_sign}{_redact_params(fragment)}"
    )


def redact_text(text: str) -> str:
    """Every URL quoted in ``text`` redacted (for messages that may quote one, e.g. a library's error)."""

    def one(match: re.Match[str]) -> str:
        url = match.group(0)
        bare = url.rstrip(".,:;!?")  # the sentence's punctuation after a URL is not part of it
        return redact_url(bare) + url[len(bare) :]

    text = SIP_PASSWORD_IN_TEXT.sub(lambda m: f"{m.group(1)}:{MASK}@", URL_IN_TEXT.sub(one, text))
    text = USERINFO_IN_TEXT.sub(MASK + "@", text)
    return PARAM_IN_TEXT.sub(
        lambda m: f"{m.group(1)}={MASK}" if is_secret_name(m.group(1)) else m.group(0), text
    )


def _header_secrets(argv: Sequence[str]) -> list[tuple[str, str]]:
    """(what was typed, what to show instead) for every header line on the command line.

    A ``--header`` value is always hidden (the option exists to carry credentials); a stray ``Name: value``
    elsewhere (a forgotten ``--header``, a mistyped option's value) when its name looks secret.
    """
    found = []
    after_option = False
    for arg in argv:
        value = arg
        is_header = after_option
        if arg.startswith(HEADER_OPTION + "="):
            value, is_header = arg[len(HEADER_OPTION) + 1 :], True
        after_option = arg == HEADER_OPTION
        name = value.partition(":")[0].strip()
        line = HEADER_LINE.match(value)
        if is_header and ":" in value:
            found.append((value, f"{name}: {MASK}"))
        elif is_header and value:
            found.append((value, MASK))
        elif line and (is_secret_name(line.group(1)) or line.group(1).lower() in SECRET_HEADERS):
            found.append((value, f"{name}: {MASK}"))
    return sorted(found, key=lambda pair: -len(pair[0]))  # the longest first: one may contain another


def redact_arguments(message: str, argv: Sequence[str]) -> str:
    """``message`` (which may quote ``argv``) with header values and URL credentials hidden."""
    for typed, shown in _header_secrets(argv):
        message = message.replace(typed, shown)
    return redact_text(message)


def has_credentials(url: str) -> bool:
    """Whether :func:`redact_url` hides anything of ``url``."""
    return redact_url(url) != url


def url_tag(url: str) -> str:
    """A short, stable tag of the full URL (8 hex digits) that names a redacted target's folder."""
    digest = hashlib.pbkdf2_hmac("sha256", url.encode(), b"callsim-target-folder", TAG_ROUNDS, dklen=4)
    return digest.hex()
