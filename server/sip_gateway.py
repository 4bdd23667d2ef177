"""SIP in front of any raw-PCM assistant: a gateway that answers SIP calls and bridges each to a websocket.

One UDP socket takes every SIP message; a message is routed by its Call-ID to its call
(:class:`~server.sip_bridge.SipCall`: the dialog, the RTP, the assistant's ``PcmWebsocketLine``).  An
INVITE with a new Call-ID is a new call; beyond ``max_calls`` calls at once it is answered 486 Busy Here.
OPTIONS outside a call is answered 200 (a launcher's readiness probe, a PBX's keep-alive), any other request
outside a call 481, and a datagram that is not SIP is dropped and counted.  So CallSim's SIP line can call
the test assistants (``--sip``) and the built-in (``callsim serve --sip``) as it calls a bot behind a PBX.
Loopback by default; every task is cancelled on :meth:`SipGateway.close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.sip_answer import ALLOW, Hop, Out
from server.sip_bridge import SipCall
from voice.core.clock import Clock, MonotonicClock
from voice.errors import ConfigError
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.sip_media import MEDIA_TIMEOUT_NS
from voice.lines.sip_message import SipRequest, header, parse_message, response_to

if TYPE_CHECKING:
    from server.config import ServingSettings

logger = logging.getLogger(__name__)

MAX_CALLS = 8
BUSY = 486


class _Socket(asyncio.DatagramProtocol):
    def __init__(self, gateway: SipGateway) -> None:
        self.gateway = gateway

    def datagram_received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        self.gateway._datagram(data, (str(addr[0]), int(addr[1])))

    def error_received(self, exc: Exception) -> None:  # ICMP unreachable: a caller gone
        return None


class SipGateway:
    """A SIP user agent answering on ``host:port`` (UDP) for the raw-PCM assistant at ``assistant_url``."""

    def __init__(
        self,
        assistant_url: str,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        clock: Clock | None = None,
        max_calls: int = MAX_CALLS,
        media_timeout_s: float = MEDIA_TIMEOUT_NS / 1e9,
        user: str = "assistant",
        line_factory: Callable[[str], PcmWebsocketLine] = PcmWebsocketLine,
    ) -> None:
        self.assistant_url = assistant_url
        self.host = host
        self.port = port
        self.clock = clock or MonotonicClock(spin_ns=0)
        self.max_calls = max_calls
        self.media_timeout_ns = int(media_timeout_s * 1e9)
        self.user = user
        self.line_factory = line_factory  # the assistant's line for a call (a double in tests)
        self.calls: dict[str, SipCall] = {}
        self.counts = {"calls": 0, "busy": 0, "malformed": 0, "strays": 0}
        self._transport: asyncio.DatagramTransport | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def uri(self) -> str:
        """What a caller dials: ``sip:assistant@host:port``."""
        return f"sip:{self.user}@{self.host}:{self.port}"

    @property
    def active(self) -> int:
        """Calls holding a slot (being set up or bridged)."""
        return sum(1 for call in self.calls.values() if call.bridging)

    async def start(self) -> str:
        """Bind the SIP socket (``port=0`` picks one); returns :attr:`uri`."""
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            lambda: _Socket(self), local_addr=(self.host, self.port)
        )
        self._transport = transport
        self.port = int(transport.get_extra_info("sockname")[1])
        logger.info("SIP gateway on %s for %s", self.uri, self.assistant_url)
        return self.uri

    async def close(self) -> None:
        """Stop taking calls and cancel every call's task (their assistant lines and RTP close)."""
        if self._transport is not None:
            for call in list(self.calls.values()):
                call.end("the gateway is closing")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), 1.0)
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    async def __aenter__(self) -> SipGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- inside -------------------------------------------------------------------------------------------

    def _send(self, out: Out) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        for data, hop in out:
            transport.sendto(data, hop)

    def _datagram(self, data: bytes, source: Hop) -> None:
        if not data.strip():
            return  # a keep-alive CRLF
        try:
            message = parse_message(data)
        except ValueError:
            self.counts["malformed"] += 1
            return
        call_id = header(message, "Call-ID")
        call = self.calls.get(call_id)
        if call is not None:
            call.feed(data, source)
            return
        if not isinstance(message, SipRequest):
            self.counts["strays"] += 1
            return
        if message.method == "INVITE":
            self._new_call(call_id, data, source)
        elif message.method == "OPTIONS":
            self._send([(bytes(response_to(message, 200, extra=(("Allow", ALLOW),))), source)])
        elif message.method != "ACK":
            self.counts["strays"] += 1
            self._send([(bytes(response_to(message, 481)), source)])

    def _new_call(self, call_id: str, data: bytes, source: Hop) -> None:
        busy = self.active >= self.max_calls
        self.counts["busy" if busy else "calls"] += 1
        if busy:
            logger.warning("SIP gateway: %d calls at once, call %s refused busy", self.active, call_id)
        call = SipCall(
            (self.host, self.port),
            self.assistant_url,
            self.clock,
            self._send,
            refuse=BUSY if busy else None,
            media_timeout_ns=self.media_timeout_ns,
            line_factory=self.line_factory,
        )
        self.calls[call_id] = call
        call.feed(data, source)
        task = asyncio.create_task(call.run())
        self._tasks.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.discard(finished)
            if self.calls.get(call_id) is call:
                del self.calls[call_id]

        task.add_done_callback(done)


async def gateway_in_front(pcm_url: str, serving: ServingSettings) -> SipGateway | None:
    """The built-in's SIP gateway (``callsim serve --sip PORT``) in front of its own ``/pcm`` route, started
    and its URI printed; None without ``--sip``.  It answers on the server's host, its calls bounded as the
    server's, its websocket presenting the server's token if it has one."""
    if serving.sip_port is None:
        return None
    if serving.host in ("0.0.0.0", "::", ""):
        raise ConfigError("--sip needs --host to name one address: SIP and SDP tell the caller where it is")
    headers = (("Authorization", f"Bearer {serving.token}"),) if serving.token else ()
    factory = functools.partial(PcmWebsocketLine, headers=headers)
    gateway = SipGateway(pcm_url, serving.host, serving.sip_port, max_calls=serving.max_calls,
                         line_factory=factory)  # fmt: skip
    try:
        uri = await gateway.start()
    except OSError as exc:
        raise ConfigError(f"cannot answer SIP on {serving.host}:{serving.sip_port}: {exc}") from exc
    print(f"built-in assistant answering SIP on {uri}", flush=True)
    return gateway
