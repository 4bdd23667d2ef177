"""A lean websocket client for real-time media: websockets' own protocol engine, a thin asyncio shell.

A media line sends one small message every 20 ms per call, and a benchmark runs hundreds of calls in one
process.  ``websockets.asyncio.client`` spent ~10 us of the ~100 us a caller frame costs on each message
(send locks and contexts, a message assembler with its futures, a fresh ``os.urandom`` syscall for every
frame's mask; py-spy over ``scripts/bench_capacity``).  This client keeps every rule of RFC 6455 in
websockets' Sans-I/O :class:`~websockets.client.ClientProtocol` (the handshake, frame parsing and size
limits, answering pings, the closing handshake) and does only the I/O, as websockets' integration guide
describes.  Two things are its own:

- binary messages are framed here (FIN, opcode 2, masked), with masks drawn from a pooled ``os.urandom``
  buffer: unpredictable, from a strong source (RFC 6455 section 5.3), one syscall per 256 frames;
- a peer that stops reading is failed with 1008 once ``MAX_UNSENT_BYTES`` wait to be sent (real-time
  audio cannot wait for it; without this the buffer would grow for the rest of the call);
- received messages are reassembled from fragments here, and text is checked to be UTF-8 (close 1007);
- reading stops while more than ``HIGH_WATER`` messages or ``HIGH_WATER_BYTES`` wait for :meth:`recv`, so
  whatever a peer sends, a connection holds at most about that much (plus one message of ``max_size``).

:func:`closed_reason` turns the ``ConnectionClosed`` a line gets into the reason a call records.

No extension is offered (a media stream is not compressed; permessage-deflate would cost CPU on both
sides for audio that does not compress).  The interface is the part of websockets' asyncio client that
CallSim's lines use: :func:`connect`, ``send``, ``recv``, ``close``, raising the same exceptions
(``OSError``/``TimeoutError``/``InvalidHandshake``/``InvalidURI`` on connect, ``ConnectionClosed`` after).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections import deque
from collections.abc import Sequence
from typing import cast

from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed, InvalidMessage
from websockets.frames import Frame, Opcode, apply_mask
from websockets.http11 import USER_AGENT, Response
from websockets.protocol import State
from websockets.uri import parse_uri

CLOSE_TIMEOUT_S = 2.0  # after the closing handshake, how long the server gets to close TCP
MASK_POOL_BYTES = 1024  # masks for 256 frames per os.urandom call
MAX_UNSENT_BYTES = 1 << 20  # ~30 s of caller audio the peer has not read: it has stopped reading
MAX_MESSAGE_BYTES = 64 * 1024  # one received message, unless connect() is told otherwise (close 1009)
HIGH_WATER = 1024  # received messages not yet taken by recv(): stop reading from the socket ...
LOW_WATER = 256  # ... until recv() has brought them down to this
HIGH_WATER_BYTES = 1 << 20  # the same in bytes: a flood of big messages is held back at ~1 MiB ...
LOW_WATER_BYTES = 256 * 1024  # ... until recv() has brought them down to this


def closed_reason(exc: ConnectionClosed) -> str:
    """A short, recordable reason for a closed websocket.

    When CallSim failed the connection for something the bot did (a malformed frame 1002, text that is not
    UTF-8 1007, no longer reading 1008, a too-big message 1009) that is the bot's protocol error.
    """
    sent, rcvd = exc.sent, exc.rcvd
    ours = rcvd is None or exc.rcvd_then_sent is False  # CallSim closed first (not an echo of the bot's)
    if sent is not None and ours and sent.code == 1009:
        return "protocol_error: message larger than the line allows" + (
            f" ({sent.reason})" if sent.reason else ""
        )
    if sent is not None and ours and sent.code in (1002, 1007, 1008):
        return f"protocol_error: {sent.reason or f'websocket close code {sent.code}'}"
    if rcvd is None:
        return "connection lost (no close frame)"
    return f"closed by assistant (code {rcvd.code}{': ' + rcvd.reason if rcvd.reason else ''})"


def binary_frame(payload: bytes, mask: bytes) -> bytes:
    """One final, masked binary frame (what a client must send, RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x82, 0x80 | n))
    elif n < 1 << 16:
        head = bytes((0x82, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x82, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + mask + apply_mask(payload, mask)


class _Shell(asyncio.Protocol):
    """Hands the transport's callbacks to the client."""

    def __init__(self, client: WebsocketClient) -> None:
        self.client = client

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport; not an asyncio.Transport subclass with every event loop (uvloop's)
        self.client._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.client._data_received(data)

    def eof_received(self) -> bool | None:
        self.client._eof_received()
        return None  # the websocket closing handshake never needs to write after EOF

    def connection_lost(self, exc: Exception | None) -> None:
        self.client._connection_lost()


class WebsocketClient:
    """One open client connection.  Make it with :func:`connect`."""

    def __init__(self, protocol: ClientProtocol) -> None:
        self.protocol = protocol
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._messages: deque[str | bytes] = deque()
        self._buffered = 0  # bytes (or characters) of the messages waiting for recv()
        self._waiter: asyncio.Future[None] | None = None
        self._fragments: list[bytes] = []
        self._fragment_text = False
        self._response: asyncio.Future[None] = self._loop.create_future()
        self._lost: asyncio.Future[None] = self._loop.create_future()
        self._paused = False
        self._close_timer: asyncio.TimerHandle | None = None
        self._masks = b""
        self._mask_at = 0

    # --- the application's side ---

    async def send(self, message: str | bytes) -> None:
        """Send one message; raises ``ConnectionClosed`` once the connection is closed.

        While the closing handshake is under way (the server sent its close) the message is dropped: the next
        :meth:`recv` reports the close.
        """
        state = self.protocol.state
        if state is not State.OPEN:
            if state is State.CLOSED:
                raise self.protocol.close_exc
            return
        assert self._transport is not None
        if isinstance(message, str):
            self.protocol.send_text(message.encode())
            self._write_pending()
        else:
            self._transport.write(binary_frame(message, self._mask()))
        unsent = self._transport.get_write_buffer_size()
        if unsent > MAX_UNSENT_BYTES:
            # the kernel's buffers are full too: waiting would only grow this one; fail the connection (1008)
            self.protocol.fail(1008, f"stopped reading ({unsent // 1024} KiB unsent)")
            self._transport.abort()

    async def recv(self) -> str | bytes:
        """The next message; raises ``ConnectionClosed`` when there is none and the connection closed."""
        while not self._messages:
            if self.protocol.state is State.CLOSED:
                raise self.protocol.close_exc
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        message = self._messages.popleft()
        self._buffered -= len(message)
        low = len(self._messages) <= LOW_WATER and self._buffered <= LOW_WATER_BYTES
        if self._paused and low and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return message

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Run the closing handshake (if still open) and wait, briefly, for the connection to end."""
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason)
            self._write_pending()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._lost), CLOSE_TIMEOUT_S)
        if not self._lost.done() and self._transport is not None:
            self._transport.abort()
            await self._lost

    # --- the network's side ---

    def _data_received(self, data: bytes) -> None:
        self.protocol.receive_data(data)
        events = self.protocol.events_received()
        self._write_pending()
        if self.protocol.close_expected() and self._close_timer is None:
            self._close_timer = self._loop.call_later(CLOSE_TIMEOUT_S, self._abort_if_open)
        for event in events:
            if isinstance(event, Response):
                if not self._response.done():
                    self._response.set_result(None)
            elif isinstance(event, Frame):
                self._frame(event)
        high = len(self._messages) > HIGH_WATER or self._buffered > HIGH_WATER_BYTES
        if high and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def _eof_received(self) -> None:
        self.protocol.receive_eof()
        self.protocol.events_received()
        self._write_pending()

    def _connection_lost(self) -> None:
        self.protocol.receive_eof()  # idempotent; the protocol's state becomes CLOSED
        if not self._response.done():
            self._response.set_result(None)
        if not self._lost.done():
            self._lost.set_result(None)
        if self._close_timer is not None:
            self._close_timer.cancel()
        self._wake()

    def _frame(self, frame: Frame) -> None:
        """Reassemble messages; control frames were already handled by the protocol."""
        if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
            self._fragment_text = frame.opcode is Opcode.TEXT
            self._fragments = [bytes(frame.data)]
        elif frame.opcode is Opcode.CONT:
            self._fragments.append(bytes(frame.data))
        else:
            return
        if not frame.fin:
            return
        data = self._fragments[0] if len(self._fragments) == 1 else b"".join(self._fragments)
        self._fragments = []
        if not self._fragment_text:
            self._messages.append(data)
            self._buffered += len(data)
            return
        try:
            text = data.decode()
        except UnicodeDecodeError:
            self.protocol.fail(1007, "invalid UTF-8 in a text message")
            self._write_pending()
            return
        self._messages.append(text)
        self._buffered += len(text)  # counted as recv() will subtract it

    def _write_pending(self) -> None:
        transport = self._transport
        if transport is None:
            return
        for data in self.protocol.data_to_send():
            if data:
                transport.write(data)
            elif transport.can_write_eof():
                with contextlib.suppress(OSError, RuntimeError):
                    transport.write_eof()
            else:
                transport.close()

    def _abort_if_open(self) -> None:
        if not self._lost.done() and self._transport is not None:
            self._transport.abort()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _mask(self) -> bytes:
        if self._mask_at >= len(self._masks):
            self._masks, self._mask_at = os.urandom(MASK_POOL_BYTES), 0
        self._mask_at += 4
        return self._masks[self._mask_at - 4 : self._mask_at]


async def connect(
    url: str,
    *,
    open_timeout: float = 10.0,
    max_size: int | None = MAX_MESSAGE_BYTES,
    headers: Sequence[tuple[str, str]] = (),
) -> WebsocketClient:
    """Open a websocket to ``url`` (``ws://`` or ``wss://``) within ``open_timeout`` seconds.

    ``headers`` go on the upgrade request (checked by :mod:`voice.lines.headers`); each replaces a header of
    that name the request had (``Authorization`` from the URL's userinfo, ``User-Agent``).
    """
    uri = parse_uri(url)  # raises InvalidURI
    protocol = ClientProtocol(uri, max_size=max_size)
    client = WebsocketClient(protocol)
    loop = asyncio.get_running_loop()
    context = ssl.create_default_context() if uri.secure else None
    try:
        async with asyncio.timeout(open_timeout):
            await loop.create_connection(
                lambda: _Shell(client),
                uri.host,
                uri.port,
                ssl=context,
                server_hostname=uri.host if context is not None else None,
            )
            request = protocol.connect()
            request.headers.setdefault("User-Agent", USER_AGENT)
            for name, value in headers:
                if name in request.headers:
                    del request.headers[name]
                request.headers[name] = value
            protocol.send_request(request)
            client._write_pending()
            await client._response
    except BaseException:
        if client._transport is not None:
            client._transport.abort()
        raise
    # The server may have sent messages and even its close with the handshake's response: those are
    # kept for recv(); only a failed or missing response is a connect error.
    if protocol.handshake_exc is not None or protocol.state is State.CONNECTING:
        if client._transport is not None:
            client._transport.abort()
        raise protocol.handshake_exc or InvalidMessage("the connection closed during the handshake")
    return client


__all__ = [
    "MAX_MESSAGE_BYTES",
    "ConnectionClosed",
    "WebsocketClient",
    "binary_frame",
    "closed_reason",
    "connect",
]
