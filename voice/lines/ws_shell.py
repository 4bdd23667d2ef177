"""One websocket line shell: everything a websocket line does that is not its protocol.

CallSim's websocket lines (raw PCM, ``docs/protocol.md``; Twilio Media Streams, ``docs/twilio.md``) differ
only in what their messages say.  This module is the rest, once: it connects (:mod:`voice.lines.ws_client`),
translates what goes wrong there into the package's :class:`~voice.errors.LineError` (with the target's
credentials redacted), reads the socket in a task of its own into an inbox, refuses a flood, and closes.
A protocol is a :class:`LineCodec` on top, pure message building and parsing with no socket in sight (as
pipecat puts a ``FrameSerializer`` such as its ``TwilioFrameSerializer`` on one websocket transport).

The reader and its inbox: the reader takes each message off the socket as it comes, has the codec decode
it and puts what it means in the inbox, in order, for :meth:`WebsocketLine.recv`.  A close of the socket
is decoded too (Twilio's bot hangs up by closing) and ends with one :class:`~voice.core.call.LineClosed`,
after everything that came before it; a protocol violation ends the line the same way, and nothing after
it is taken.  :meth:`~WebsocketLine.recv` never raises.

The flood cap: what waits in the inbox is counted in bytes (the message, or its decoded audio if larger,
plus :data:`ITEM_OVERHEAD_BYTES` for the Python objects of each item), so a bot that sends faster than the
call takes, however small or large its messages, holds at most :data:`FLOOD_BYTES` per line; past that
the line ends with ``protocol_error: flood``.  One read of the socket can bring thousands of tiny
messages at once, so once an eighth of the cap waits the reader stops reading until the call has taken
the inbox down to half of that (the socket's own high water then holds the bot back, as TCP does): a
call that takes its input is never flooded.  Only a call that has taken nothing for :data:`TAKE_WAIT_S`
(a stalled process) lets the reader read on, up to the cap.  The call core caps what it keeps of each
kind of event and refuses audio queued more than a minute ahead of playout (:mod:`voice.core.call`).

Every wait of the shell's own has a bound: the connection (``open_timeout_s``), the closing handshake
(:data:`voice.lines.ws_client.CLOSE_TIMEOUT_S`, then the socket is aborted), the reader's shutdown
(:data:`CLOSE_TIMEOUT_S` in all) and the reader's wait for the call (:data:`TAKE_WAIT_S`).
:meth:`~WebsocketLine.recv` waits for the assistant, which may rightly be silent for a long time: the
call driver bounds it, cancelling it when the call ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from voice.core.audio import Pcm
from voice.core.call import AssistantAudio, LineClosed, LineInput
from voice.errors import LineError
from voice.lines.headers import Headers
from voice.lines.line import CallStart
from voice.lines.redact import redact_text
from voice.lines.ws_client import WebsocketClient, closed_reason, connect

__all__ = [
    "CLOSE_TIMEOUT_S",
    "FLOOD_BYTES",
    "ITEM_OVERHEAD_BYTES",
    "TAKE_WAIT_S",
    "LineCodec",
    "Message",
    "WebsocketLine",
]

FLOOD_BYTES = 4 << 20  # waiting in one line's inbox: past this the bot floods (about 7,000 tiny events)
ITEM_OVERHEAD_BYTES = 512  # what one waiting item costs beyond its message: its Python objects
HIGH_WATER_FRACTION = 8  # past this part of the cap the reader waits for the call to take its input ...
TAKE_WAIT_S = 1.0  # ... this long at most: a call that takes nothing meanwhile has stalled
CLOSE_TIMEOUT_S = 5.0  # the whole close: the reader's end and the closing handshake (2 s of its own)

Message = str | bytes


class LineCodec(Protocol):
    """One protocol on the shell: the messages CallSim sends, and what the assistant's messages mean.

    Pure: no socket, no waiting.  A method that returns messages returns them in the order to send.
    """

    max_message_bytes: int  # one message from the assistant; larger is its protocol error (close 1009)

    def start(self, start: CallStart) -> Sequence[Message]:
        """What opens the call, once the socket is up."""
        ...

    def audio(self, pcm: Pcm) -> Message:
        """One 20 ms caller frame."""
        ...

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        """The answers to the assistant's marks that have now played (none for a protocol without marks)."""
        ...

    def hangup(self, reason: str) -> Sequence[Message]:
        """What CallSim says when it hangs up, before it closes the socket."""
        ...

    def decode(self, message: Message) -> Sequence[LineInput]:
        """One message from the assistant → what the call core gets, in order; never raises.

        A :class:`~voice.core.call.LineClosed` (a protocol violation) ends the line: anything after it in
        the sequence, and every later message, is dropped.
        """
        ...

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        """What the socket's close means before the line's :class:`LineClosed` (Twilio: a hang-up)."""
        ...


C = TypeVar("C", bound=LineCodec)


def _weight(message: Message, items: Sequence[LineInput]) -> int:
    audio = sum(item.pcm.nbytes for item in items if isinstance(item, AssistantAudio))
    return max(len(message), audio) + ITEM_OVERHEAD_BYTES


class WebsocketLine(Generic[C]):
    """A :class:`~voice.lines.line.Line` over a websocket, speaking ``codec``'s protocol.

    ``headers`` go on the websocket upgrade (``--header``) and are never recorded; ``flood_bytes`` is the
    inbox's cap (:data:`FLOOD_BYTES`; the tests make it small).  A line of one protocol is a subclass that
    names its codec (:meth:`new_codec`), so each call gets a fresh one.
    """

    def __init__(
        self,
        url: str,
        codec: C | None = None,
        *,
        open_timeout_s: float = 10.0,
        headers: Headers = (),
        flood_bytes: int = FLOOD_BYTES,
    ) -> None:
        self.url = url
        self.codec = codec if codec is not None else self.new_codec()
        self.headers = headers
        self.open_timeout_s = open_timeout_s
        self.flood_bytes = flood_bytes
        self._ws: WebsocketClient | None = None
        self._closed_reason: str | None = None
        self._inbox: asyncio.Queue[tuple[LineInput, int]] = asyncio.Queue()
        self._queued_bytes = 0
        self._reader: asyncio.Task[None] | None = None
        self._taken = asyncio.Event()  # recv() has brought the inbox down to its low water
        self._stalled = False  # the reader waited TAKE_WAIT_S for recv() in vain, and nothing was taken since

    def new_codec(self) -> C:
        """The codec of a line made without one (a subclass's protocol)."""
        raise TypeError(f"{type(self).__name__} needs a codec")

    @property
    def is_open(self) -> bool:
        """Connected, and neither side has ended the line."""
        return self._ws is not None and self._closed_reason is None

    # --- Line protocol ---------------------------------------------------------------------------------

    async def open(self, start: CallStart) -> None:
        """Connect, say the codec's opening messages, start reading; :class:`LineError` if unreachable."""
        try:
            self._ws = await connect(
                self.url,
                open_timeout=self.open_timeout_s,
                max_size=self.codec.max_message_bytes,
                headers=self.headers,
            )
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise LineError(redact_text(f"cannot connect to {self.url}: {exc}")) from exc
        for message in self.codec.start(start):
            await self._send(message)
        self._reader = asyncio.create_task(self._read())

    async def send(self, pcm: Pcm) -> None:
        if self.is_open:
            await self._send(self.codec.audio(pcm))

    async def recv(self) -> LineInput:
        """The next input, in order; ``LineClosed`` for ever once the line is over and the inbox empty."""
        if self._ws is None:
            return LineClosed("never connected")
        if self._inbox.empty() and self._closed_reason is not None:
            return LineClosed(self._closed_reason)
        item, weight = await self._inbox.get()
        self._queued_bytes -= weight
        self._stalled = False
        if self._queued_bytes <= self.flood_bytes // (2 * HIGH_WATER_FRACTION):
            self._taken.set()
        return item

    async def played(self, marks: tuple[str, ...]) -> None:
        if self.is_open:
            for message in self.codec.played(marks):
                await self._send(message)

    async def hangup(self, reason: str) -> None:
        if self.is_open:
            for message in self.codec.hangup(reason):
                await self._send(message)
        await self.close()

    async def close(self) -> None:
        """Stop reading and run the closing handshake, within :data:`CLOSE_TIMEOUT_S`; idempotent."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                if self._reader is not None:
                    self._reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await self._reader
                    self._reader = None
                if self._ws is not None:
                    with contextlib.suppress(ConnectionClosed, OSError):
                        await self._ws.close()
        if self._ws is not None:
            self._end("closed by caller")

    # --- inside ------------------------------------------------------------------------------------------

    async def _send(self, message: Message) -> None:
        if not self.is_open:
            return
        assert self._ws is not None
        try:
            await self._ws.send(message)
        except ConnectionClosed as exc:
            self._end(closed_reason(exc))

    def _put(self, item: LineInput, weight: int = 0) -> None:
        self._queued_bytes += weight
        self._inbox.put_nowait((item, weight))

    def _end(self, reason: str) -> None:
        """The line is over: later ``recv`` calls return ``LineClosed(reason)`` once the inbox is empty."""
        if self._closed_reason is None:
            self._closed_reason = reason
            self._put(LineClosed(reason))

    async def _read(self) -> None:
        assert self._ws is not None
        while self._closed_reason is None:
            try:
                message = await self._ws.recv()
            except ConnectionClosed as exc:
                if self._closed_reason is None:  # (a failed send may have ended the line meanwhile)
                    for item in self.codec.closed(exc):
                        self._put(item)
                    self._end(closed_reason(exc))
                return
            if self._closed_reason is not None:
                return  # nothing is taken after the line's end
            items = self.codec.decode(message)
            weight = _weight(message, items)
            for item in items:
                if isinstance(item, LineClosed):
                    self._end(item.reason)
                    return
                self._put(item, weight)
                weight = 0  # the message is counted once, with its first item
            if self._queued_bytes > self.flood_bytes:
                waiting = self._inbox.qsize()
                kib = self._queued_bytes // 1024
                self._end(f"protocol_error: flood: {waiting} messages ({kib} KiB) not yet taken")
                return
            if self._queued_bytes > self.flood_bytes // HIGH_WATER_FRACTION and not self._stalled:
                await self._wait_for_the_call()

    async def _wait_for_the_call(self) -> None:
        """Stop reading until :meth:`recv` has taken the inbox down to its low water, or the call stalled."""
        self._taken.clear()
        try:
            async with asyncio.timeout(TAKE_WAIT_S):
                await self._taken.wait()
        except TimeoutError:
            self._stalled = True  # the call takes nothing: read on (up to the cap) until it takes again
