"""The door of the built-in assistant's server: who may call, how many at once, what a socket may send.

An ASGI middleware (:class:`CallGate`) in front of the FastAPI app, so every websocket route gets the same
rules, and each rule acts before anything costly is built for the connection:

* on the upgrade, before any pipeline: a wrong or missing token is refused with HTTP 401, a browser page
  of a foreign site (``Origin``, :func:`voice.contract.access.origin_allowed`) with HTTP 403 (one check for
  CallSim's servers: :func:`voice.contract.access.check_access`);
* past ``max_calls`` calls at once, the socket is accepted and closed at once with 1013 ("try again
  later") and a reason that says so (WebRTC calls draw on the same :class:`CallSlots`; their offers are
  plain HTTP, which the WebRTC route checks with :func:`check_upgrade` and the slots itself);
* then :class:`GuardedSocket` stands between the socket and the app: a binary message over
  ``max_binary_bytes`` or a text one over ``max_text_bytes`` closes with 1009 and is never taken as audio;
  a socket silent for ``socket_idle_secs`` is closed with 1008; the first control message must be a JSON
  object with an ``event`` (else 1007 for text that is not JSON or nests too deep, 1002 for JSON that is
  not an event), so a malformed ``start`` never looks like a normal hang-up (1000).

The app builds a call's pipeline only once the first message has come (:meth:`GuardedSocket.first_message`),
so an idle socket costs a few kilobytes, not a pipeline.  Close reasons are kept under the protocol's 123
bytes.  A client's own close frame is answered by uvicorn as soon as it is read; the guard only makes sure
reading never stops (the app always has a receive pending while a call runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from server.config import AssistantSettings
from voice.contract.access import Denial, check_access, presented_tokens

__all__ = ["GUARD_SCOPE_KEY", "CallGate", "CallSlots", "Denial", "GuardedSocket", "check_upgrade"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

GUARD_SCOPE_KEY = "callsim.guard"

logger = logging.getLogger(__name__)
TRY_AGAIN_LATER = 1013
MESSAGE_TOO_BIG = 1009
POLICY_VIOLATION = 1008
INVALID_PAYLOAD = 1007
PROTOCOL_ERROR = 1002
MAX_JSON_DEPTH = 32  # a start's dialogue nests 3 deep; a hostile one 100,000 (RecursionError in json)
_MAX_REASON_BYTES = 123


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def check_upgrade(scope: Scope, settings: AssistantSettings) -> Denial | None:
    """Refuse an upgrade without the server's token (401) or from a foreign web page (403); None: go on.

    The one access check of CallSim's servers (:func:`voice.contract.access.check_access`), on the upgrade's
    ``Authorization`` header, ``?token=`` and ``Origin``.
    """
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    return check_access(
        settings.token,
        presented_tokens(_header(scope, b"authorization"), query),
        _header(scope, b"origin"),
        settings.allowed_origins,
    )


def _reason(text: str) -> str:
    """``text`` cut to the 123 UTF-8 bytes a close frame can carry."""
    return text.encode()[:_MAX_REASON_BYTES].decode(errors="ignore")


def json_depth(value: Any) -> int:
    """How deep lists and objects nest in a parsed JSON value (iterative: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def control_problem(text: str) -> tuple[int, str] | None:
    """Why a control message is unacceptable, as (close code, reason); None when it is a JSON event."""
    try:
        message = json.loads(text)
    except RecursionError:
        return INVALID_PAYLOAD, f"control message nests deeper than {MAX_JSON_DEPTH} levels"
    except json.JSONDecodeError as exc:
        return INVALID_PAYLOAD, f"control message is not JSON ({exc.msg} at char {exc.pos})"
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        return INVALID_PAYLOAD, f"control message has a value out of range ({exc})"
    if json_depth(message) > MAX_JSON_DEPTH:
        return INVALID_PAYLOAD, f"control message nests deeper than {MAX_JSON_DEPTH} levels"
    if not isinstance(message, dict) or not isinstance(message.get("event"), str):
        return PROTOCOL_ERROR, "the first control message must be a JSON object with an 'event' (start)"
    return None


class GuardedSocket:
    """One connection's receive and send, with the size, idle and first-message rules of the module doc.

    The app sees an ordinary ASGI websocket; when the guard closes the socket, the app's pending receive
    gets a ``websocket.disconnect`` with the guard's code, and whatever it sends afterwards is dropped.
    """

    def __init__(self, receive: Receive, send: Send, settings: AssistantSettings) -> None:
        self._receive, self._send, self._settings = receive, send, settings
        self._accepted = False
        self._closed: Message | None = None  # the disconnect the app gets once the guard has closed
        self._replay: Message | None = None
        self._checked_control = False
        self.close_code: int | None = None
        self.close_reason = ""

    async def receive(self) -> Message:
        if self._replay is not None:
            message, self._replay = self._replay, None
            return message
        if self._closed is not None:
            return self._closed
        if not self._accepted:
            return await self._receive()  # websocket.connect: the upgrade request itself
        idle = self._settings.socket_idle_secs
        try:
            message = await asyncio.wait_for(self._receive(), idle)
        except TimeoutError:
            return await self.close(POLICY_VIOLATION, f"idle: nothing received for {idle:g} s")
        if message["type"] == "websocket.disconnect":
            self._closed = message
        elif message["type"] == "websocket.receive":
            problem = self._problem(message)
            if problem is not None:
                return await self.close(*problem)
        return message

    def _problem(self, message: Message) -> tuple[int, str] | None:
        data, text = message.get("bytes"), message.get("text")
        if data is not None:
            if len(data) > self._settings.max_binary_bytes:
                limit = self._settings.max_binary_bytes
                return MESSAGE_TOO_BIG, f"binary message of {len(data)} bytes over {limit} (20 ms is 640)"
        elif text is not None:
            size = len(text.encode(errors="surrogatepass"))
            if size > self._settings.max_text_bytes:
                return MESSAGE_TOO_BIG, f"text message of {size} bytes over {self._settings.max_text_bytes}"
            if not self._checked_control:
                self._checked_control = True
                return control_problem(text)
        return None

    async def first_message(self) -> bool:
        """Wait for the first message without consuming it (the app reads it next); False if none came."""
        message = await self.receive()
        if message["type"] != "websocket.receive":
            return False
        self._replay = message
        return True

    async def close(self, code: int, reason: str) -> Message:
        """Close the socket with ``code`` and ``reason``; the disconnect message the app will get."""
        if self._closed is None:
            self.close_code, self.close_reason = code, _reason(reason)
            self._closed = {"type": "websocket.disconnect", "code": code, "reason": self.close_reason}
            logger.warning(f"closing a socket with {code}: {reason}")
            with contextlib.suppress(Exception):  # already gone: nothing to tell
                await self._send({"type": "websocket.close", "code": code, "reason": self.close_reason})
        return self._closed

    async def send(self, message: Message) -> None:
        if message["type"] == "websocket.accept":
            self._accepted = True
        if self._closed is not None and self.close_code is not None:
            return  # the guard closed the socket: the app's late sends have nowhere to go
        await self._send(message)


class _RefusalIsNotAnError(logging.Filter):
    """uvicorn logs an upgrade refused with an HTTP response (the ASGI denial extension) as an ERROR, "ASGI
    callable returned without completing handshake", though it sent the response: not an error here."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing handshake" not in record.getMessage()


_UVICORN_LOG = logging.getLogger("uvicorn.error")
if not any(isinstance(f, _RefusalIsNotAnError) for f in _UVICORN_LOG.filters):
    _UVICORN_LOG.addFilter(_RefusalIsNotAnError())


@dataclass
class CallSlots:
    """The calls at once over every route: the gate's websockets and the WebRTC route's peer connections
    (:mod:`server.webrtc_route`, which answers plain HTTP and so never passes the gate) draw on one count,
    so ``max_calls`` bounds the calls whatever line they came in on.  One loop: no lock needed."""

    limit: int
    taken: int = 0

    def busy(self) -> str | None:
        """Why no call can be taken now; None when one can."""
        if self.taken < self.limit:
            return None
        return f"busy: {self.taken} calls in progress (max {self.limit}); try again later"


class CallGate:
    """The ASGI middleware: upgrade checks, the call slots, and a :class:`GuardedSocket` per connection."""

    def __init__(self, app: ASGIApp, settings: AssistantSettings, slots: CallSlots | None = None) -> None:
        self.app, self.settings = app, settings
        self.slots = slots or CallSlots(settings.max_calls)
        self.rejected = 0

    @property
    def active(self) -> int:
        """Calls holding a slot (websockets here, and WebRTC peers when the slots are shared)."""
        return self.slots.taken

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        denial = check_upgrade(scope, self.settings)
        if denial is not None:
            self.rejected += 1
            logger.warning(
                f"refused a websocket upgrade on {scope.get('path')}: {denial.status} {denial.reason}"
            )
            await receive()  # websocket.connect
            headers = [(k.lower().encode(), v.encode()) for k, v in denial.headers]
            await send({"type": "websocket.http.response.start", "status": denial.status, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": denial.body})
            return
        reason = self.slots.busy()
        if reason is not None:
            self.rejected += 1
            logger.warning(f"refused a call: {reason}")
            await receive()
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": TRY_AGAIN_LATER, "reason": _reason(reason)})
            return
        self.slots.taken += 1
        guard = GuardedSocket(receive, send, self.settings)
        try:
            await self.app({**scope, GUARD_SCOPE_KEY: guard}, guard.receive, guard.send)
        finally:
            self.slots.taken -= 1
