"""CallSim's one websocket server stack for what it serves itself, but for the built-in assistant.

The test assistants (``server/assistants/``: the echo, the reference), the browser page of ``callsim talk
--web`` (``voice/app/live/web.py``) and the benchmarks' hostile bots (``voice/app/benchmarks/faults/``) all
serve
with :func:`serve_websocket` (and name its :class:`Server` and :class:`ServerConnection` from here):
websockets' own asyncio server, with one profile, so they behave alike on
the wire.  No compression (CallSim's client offers none, and a media stream would not gain from it), no
keepalive pings unless asked (CallSim answers pings; a call is short), a closing handshake that gives up
after :data:`CLOSE_TIMEOUT_S`, and the message limit the caller names (a protocol's, or None for a bot
that must be free to send anything).

Two stacks remain, and why: the built-in assistant (``server/app.py``) is a pipecat pipeline behind
FastAPI on uvicorn.  Its transport is pipecat's ``FastAPIWebsocketTransport`` (one ASGI websocket per
call), its Twilio route is FastAPI's and its door (``server/gate.py``) an ASGI middleware; moving it onto
this server would mean rewriting pipecat's transport, while moving the others onto uvicorn would put
FastAPI, Starlette and an ASGI hop per message into the echo assistant, which the capacity benchmark
measures.  Both stacks share the one access check (:func:`voice.contract.access.check_access`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

__all__ = [
    "CLOSE_TIMEOUT_S",
    "Handler",
    "ProcessRequest",
    "Server",
    "ServerConnection",
    "bound_port",
    "serve_websocket",
]

CLOSE_TIMEOUT_S = 5.0

Handler = Callable[[ServerConnection], Awaitable[None]]
ProcessRequest = Callable[[ServerConnection, Request], Response | None]


async def serve_websocket(
    handler: Handler,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    max_size: int | None,
    process_request: ProcessRequest | None = None,
    keepalive_s: float | None = None,
) -> Server:
    """Listen on ``host:port`` (``port=0``: any free port, see :func:`bound_port`); one ``handler`` call
    per connection.  ``process_request`` may answer a request over plain HTTP instead of upgrading it
    (a page, a refusal); ``keepalive_s`` pings an idle peer that often (a browser that may vanish)."""
    return await serve(
        handler,
        host,
        port,
        max_size=max_size,
        process_request=process_request,
        compression=None,
        ping_interval=keepalive_s,
        close_timeout=CLOSE_TIMEOUT_S,
    )


def bound_port(server: Server, asked: int = 0) -> int:
    """The port ``server`` listens on (the one the system picked for port 0); ``asked`` if it has none."""
    return int(server.sockets[0].getsockname()[1]) if server.sockets else asked
