"""What a WebRTC target takes besides its URL: extra ``request_data`` and ICE servers (``--request-data``,
``--ice-server``, or ``[assistant] request-data`` / ``ice-server`` in a config file).

``request_data`` is what pipecat's runner hands the bot as ``runner_args.body``: CallSim always sends the
call id and the dialogue's assistant view (``call_id``, ``dialogue``); a JSON object given here adds keys of
the user's own (a bot's mode, a tenant), never replacing those two.

ICE servers: a bot on this machine needs none.  A remote bot behind NAT needs a STUN server, or a TURN
relay where UDP between the two is blocked, exactly as a browser calling it would.  ``--ice-server`` takes
``stun:HOST[:PORT]``, ``turn:HOST[:PORT][?transport=udp|tcp]`` or ``turns:...``, with a TURN username and
credential as ``turn:USER:${SECRET}@HOST:3478``: ``${VAR}`` is read from the environment when CallSim
starts (as for ``--header``), and the credential is never written anywhere (:meth:`IceServer.describe`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from voice.core.event_json import JsonObject, JsonValue
from voice.errors import ConfigError
from voice.lines.line_meta import WebrtcSettingsMeta

if TYPE_CHECKING:
    from aiortc import RTCIceServer

MAX_REQUEST_DATA_BYTES = 64 * 1024
RESERVED_KEYS = ("call_id", "dialogue")  # CallSim's own, in every offer
_ICE = re.compile(r"^(?P<scheme>stuns?|turns?):(?:(?P<user>[^:@/]+):(?P<secret>[^@/]+)@)?(?P<rest>[^@\s/]+)$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class IceServer:
    """One STUN or TURN server; ``credential`` is held in memory only."""

    url: str  # scheme:host[:port][?transport=...], without the credentials
    username: str | None = None
    credential: str | None = field(default=None, repr=False)

    def to_rtc(self) -> RTCIceServer:
        from aiortc import RTCIceServer  # here: the option checks run before any of the WebRTC stack loads

        return RTCIceServer(urls=self.url, username=self.username, credential=self.credential)

    def describe(self) -> str:
        """What files and reports say: the URL, and that a credential was given (never which)."""
        return f"{self.url} (user {self.username}, credential ***)" if self.username else self.url


@dataclass(frozen=True)
class WebrtcSettings:
    request_data: JsonObject = field(default_factory=dict)  # the user's keys (``--request-data``)
    ice_servers: tuple[IceServer, ...] = ()

    def describe(self) -> WebrtcSettingsMeta:
        """For a run's settings: the request_data keys added, the ICE servers without credentials."""
        out: WebrtcSettingsMeta = {}
        if self.request_data:
            out["request_data_keys"] = sorted(self.request_data)
        if self.ice_servers:
            out["ice_servers"] = [s.describe() for s in self.ice_servers]
        return out


def parse_request_data(text: str | None) -> dict[str, JsonValue]:
    """``--request-data '{"mode": "eval"}'`` → the object; a :class:`ConfigError` saying what is wrong."""
    if not text:
        return {}
    if len(text.encode()) > MAX_REQUEST_DATA_BYTES:
        raise ConfigError(f"--request-data: over {MAX_REQUEST_DATA_BYTES} bytes")
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f'--request-data: not JSON ({exc}); e.g. \'{{"mode": "eval"}}\'') from exc
    if not isinstance(obj, dict):
        raise ConfigError("--request-data: must be a JSON object (its keys go into the offer's request_data)")
    if taken := [k for k in RESERVED_KEYS if k in obj]:
        raise ConfigError(f"--request-data: {', '.join(taken)} is CallSim's own key in every offer")
    return obj


def parse_ice_server(text: str) -> IceServer:
    """``stun:HOST[:PORT]`` or ``turn[s]:[USER:SECRET@]HOST[:PORT][?transport=...]`` → its server."""
    match = _ICE.match(text.strip())
    if match is None:
        raise ConfigError(
            f"--ice-server {_shown(text)!r}: expected stun:HOST[:PORT] or turn:USER:${{SECRET}}@HOST[:PORT]"
        )
    scheme, user, secret, rest = match["scheme"], match["user"], match["secret"], match["rest"]
    if scheme.startswith("stun") and user:
        raise ConfigError(f"--ice-server {_shown(text)!r}: a STUN server takes no credentials")
    if scheme.startswith("turn") and not user:
        raise ConfigError(f"--ice-server {_shown(text)!r}: a TURN server needs USER:SECRET@ before its host")
    credential = _expand(secret) if secret is not None else None
    return IceServer(f"{scheme}:{rest}", user, credential)


def _expand(value: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m[1] not in os.environ:
            raise ConfigError(f"--ice-server: the environment variable {m[1]} is not set")
        return os.environ[m[1]]

    return _VARIABLE.sub(one, value)


def _shown(text: str) -> str:
    """The value with a TURN credential hidden (for messages)."""
    return re.sub(r"(turns?:[^:@/]+:)[^@/]+@", r"\1***@", text.strip())


def shown_ice_server(text: str) -> str:
    """``--ice-server`` as a run's settings file may keep it: a ``${VAR}`` credential as written (it names
    the variable, not the secret), any other credential as ``***``."""
    match = _ICE.match(text.strip())
    if match is None or match["secret"] is None or _VARIABLE.fullmatch(match["secret"]):
        return text.strip() if match is not None else _shown(text)
    return _shown(text)
