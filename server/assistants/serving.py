"""Serving a raw-PCM test assistant (the echo, the reference) on CallSim's one websocket server stack.

CallSim's side of the line has one websocket implementation (``voice.lines.ws_client``); the test assistants
serve with :func:`voice.lines.ws_server.serve_websocket` (its profile: no compression, no keepalive pings
of our own, a bounded closing handshake), with messages up to the raw protocol's limit
(``docs/protocol.md``, which CallSim's line enforces too).  Any path is accepted; one that names a
carrier pipecat serializes (``/telnyx``, ``/twilio``, ...: :func:`~server.assistants.carrier_serving.
carrier_of`) takes that carrier's media stream instead, translated by pipecat's serializer for it into the
same raw protocol (:mod:`server.assistants.carrier_serving`), so the assistant is unchanged behind it.

:func:`run_until_signalled` is the processes' entry point: it prints a banner naming the URL (the
launcher in ``voice.app.run.launch`` waits for the port, humans read the banner) and serves until SIGINT or
SIGTERM.  :func:`with_sip` puts a SIP gateway (:mod:`server.sip_gateway`) in front of the websocket
(``--sip``): the banner then names ``sip:assistant@HOST:PORT``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from websockets.exceptions import ConnectionClosed

from server.sip_gateway import SipGateway
from voice.lines.pcm import MAX_MESSAGE_BYTES
from voice.lines.ws_server import Handler, Server, ServerConnection, bound_port, serve_websocket


class CallConnection(Protocol):
    """What the reference needs of one call's connection: a websocket's, or a WebRTC peer's
    (:mod:`server.assistants.webrtc_serving`), its messages the same: binary PCM frames, JSON events."""

    def __aiter__(self) -> AsyncIterator[str | bytes]: ...

    async def recv(self) -> str | bytes: ...

    async def send(self, message: str | bytes) -> None: ...

    async def ping(self) -> Awaitable[float]: ...

    async def close(self, code: int = 1000, reason: str = "") -> None: ...


async def serve_pcm(handler: Handler, host: str = "127.0.0.1", port: int = 0) -> tuple[Server, str]:
    """Bind and serve ``handler`` (one call per connection); ``port=0`` picks a free port.

    Returns the server (``async with`` it, or ``close()`` it) and the ``ws://`` URL it listens on.
    """
    # pipecat's serializers, imported now rather than by the first carrier call: the process freezes its
    # long-lived objects once it listens (voice.core.gcpause), and a first call must not wait for an import
    importlib.import_module("server.assistants.carrier_serving")
    server = await serve_websocket(
        functools.partial(_by_path, handler), host, port, max_size=MAX_MESSAGE_BYTES
    )
    bound = bound_port(server, port)
    return server, f"ws://{host}:{bound}/pcm"


async def _by_path(handler: Handler, ws: ServerConnection) -> None:
    """Raw PCM, or the carrier the path names, behind its translation."""
    from server.assistants.carrier_serving import carrier_connection, carrier_of

    path = ws.request.path if ws.request is not None else "/"
    carrier = carrier_of(path)
    if carrier is None:
        await handler(ws)
        return
    try:
        connection: Any = await carrier_connection(ws, carrier)
    except (ValueError, ConnectionClosed):
        with contextlib.suppress(ConnectionClosed):
            await ws.close(1008, f"not a {carrier} call's opening")
        return
    await handler(connection)


def with_sip(
    start: Callable[[], Awaitable[tuple[Server, str]]], host: str, port: int
) -> Callable[[], Awaitable[tuple[AbstractAsyncContextManager[Any], str]]]:
    """``start`` (a websocket server on a port of its own) behind a SIP gateway on ``host:port`` (UDP):
    what :func:`run_until_signalled` serves for ``--sip``; its URL is the gateway's ``sip:`` URI."""

    async def both() -> tuple[AbstractAsyncContextManager[Any], str]:
        server, url = await start()
        gateway = SipGateway(url, host, port)
        try:
            uri = await gateway.start()
        except BaseException:
            server.close()
            raise
        return _Both(server, gateway), uri

    return both


class _Both:
    """The websocket server and the gateway in front of it, served and closed together."""

    def __init__(self, server: Server, gateway: SipGateway) -> None:
        self.server, self.gateway = server, gateway

    async def __aenter__(self) -> _Both:
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self.gateway.close()
        finally:
            await self.server.__aexit__(*exc_info)


def run_until_signalled(
    start: Callable[[], Awaitable[tuple[AbstractAsyncContextManager[Any], str]]],
    banner: str,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Start a server, print ``banner.format(url=...)``, and serve until SIGINT or SIGTERM.

    ``on_ready`` runs once the server listens, before the banner (e.g. to freeze long-lived objects out of
    the garbage collector's reach).
    """

    with contextlib.suppress(ImportError):  # pipecat's serializers log each call at DEBUG: keep warnings
        from loguru import logger

        logger.remove()
        logger.add(sys.stderr, level="WARNING")

    async def run() -> None:
        server, url = await start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if on_ready is not None:
            on_ready()
        print(banner.format(url=url), flush=True)
        async with server:
            await stop.wait()

    asyncio.run(run())
