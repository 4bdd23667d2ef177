"""The SIP line (``sip:USER@HOST[:PORT][;transport=udp|tcp]``): CallSim dials a bot as a phone would.

CallSim is a SIP user agent client: the dialog is :class:`~voice.lines.sip_dialog.SipCaller` (Sans-I/O,
fed the messages and the injected clock's time), the media :class:`~voice.lines.sip_media.RtpMedia`
(G.711 PCMU or PCMA at 8 kHz, 20 ms packets, a jitter buffer).  This module is the I/O around them: the
SIP socket (UDP, or a TCP stream), the dialog's timers, and the :class:`~voice.lines.line.Line` protocol.

- :meth:`SipLine.open` sends the INVITE and returns once media can flow: at a 183 with SDP (early media,
  heard and recorded from then on) or at the 200.  The phone network's refusals raise
  :class:`~voice.errors.CallRefused` with their outcome (busy, declined, not_found, no_answer,
  auth_refused, call_rejected): the call is recorded as that, charged to the bot.  An unreachable or
  silent peer is :class:`~voice.errors.LineError` (``connect_failed``).
- A refusal after early media, the far end's BYE, a re-INVITE (answered: hold, a codec change) all come
  back through :meth:`SipLine.recv` as the call core's inputs; :meth:`SipLine.recv` never raises.
- The dialogue reaches a bot that reads it (the built-in) in ``X-CallSim-Dialogue`` (base64 of zlib'd
  JSON) and the call id in ``X-CallSim-Call-Id``; a trunk drops such headers, and a bot behind one takes
  its preset from its own configuration.  ``--header`` values go on the INVITE as SIP headers.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import json
import secrets
import socket
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np
from aiosipua.auth import SipDigestAuth

from voice.core.audio import Pcm
from voice.core.call import AssistantControl, LineClosed, LineInput
from voice.core.clock import Clock, MonotonicClock
from voice.errors import CallRefused, LineError
from voice.lines.effects import LineEffects, call_seed
from voice.lines.headers import Headers
from voice.lines.line import CallStart
from voice.lines.line_meta import SipLineMeta
from voice.lines.sip_dialog import CallerIdentity, Hop, SipCaller, State
from voice.lines.sip_events import Answered, DialogEvent, EarlyMedia, Ended, MediaChanged, Refused, RemoteBye
from voice.lines.sip_media import JITTER_DELAY_MS, RtpMedia
from voice.lines.sip_message import StreamFramer, new_call_id
from voice.lines.sip_sdp import make_answer, make_offer, parse_remote
from voice.lines.sip_target import SipTarget, parse_sip_uri

OPEN_SLACK_S = 2.0  # past the dialog's own answer timeout, the open gives up regardless
CLOSE_TIMEOUT_S = 2.5
MAX_INBOX = 4 << 20
BOT_HUNG_UP = "the far end sent BYE"
DIALOGUE_HEADER = "X-CallSim-Dialogue"
CALL_ID_HEADER = "X-CallSim-Call-Id"


class _Signalling(asyncio.DatagramProtocol):
    def __init__(self, line: SipLine) -> None:
        self.line = line

    def datagram_received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        self.line._message(data, (str(addr[0]), int(addr[1])))

    def error_received(self, exc: Exception) -> None:  # ICMP on an unconnected socket: nothing to act on
        return None


class SipLine:
    """A :class:`~voice.lines.line.Line` to a SIP user agent (a bot, its PBX or trunk)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Headers = (),
        credentials: SipDigestAuth | None = None,
        send_dialogue: bool = True,
        jitter_delay_ms: int = JITTER_DELAY_MS,
        effects: LineEffects | None = None,
        seed: int = 0,
        clock: Clock | None = None,
        answer_timeout_s: float = 12.0,
        media_timeout_s: float = 10.0,
    ) -> None:
        self.target: SipTarget = parse_sip_uri(url)
        self.url = url
        self.headers = tuple(headers)
        self.credentials = credentials
        self.send_dialogue = send_dialogue
        self.effects = effects or LineEffects()
        self.seed = seed
        self.clock = clock or MonotonicClock(spin_ns=0)
        self.answer_timeout_ns = int(answer_timeout_s * 1e9)
        self.jitter_delay_ms = jitter_delay_ms
        self.media_timeout_ns = int(media_timeout_s * 1e9)
        self.dialog: SipCaller | None = None
        self.media: RtpMedia | None = None
        self._udp: asyncio.DatagramTransport | None = None
        self._stream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._inbox: asyncio.Queue[tuple[LineInput, int]] = asyncio.Queue()
        self._queued = 0
        self._closed_reason: str | None = None
        self._ready = asyncio.Event()
        self._refused: Refused | None = None
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._session = secrets.randbits(31)
        self._version = 1
        self._ended = asyncio.Event()

    @property
    def is_open(self) -> bool:
        return self.dialog is not None and self._closed_reason is None

    # --- Line protocol ---------------------------------------------------------------------------------

    async def open(self, start: CallStart) -> None:
        try:
            async with asyncio.timeout(self.answer_timeout_ns / 1e9 + OPEN_SLACK_S):
                await self._open(start)
        except TimeoutError as exc:
            await self.close()
            raise LineError(f"SIP to {self.target}: no answer within the open's time") from exc
        except BaseException:
            await self.close()
            raise

    async def _open(self, start: CallStart) -> None:
        loop = asyncio.get_running_loop()
        hop = await self._resolve()
        local_ip = _local_address_towards(hop[0])
        rng = np.random.default_rng(call_seed(self.seed, start.call_id))
        self.media = RtpMedia(
            self.clock,
            self._put,
            jitter_delay_ms=self.jitter_delay_ms,
            effects=self.effects,
            rng=rng,
            media_timeout_ns=self.media_timeout_ns,
        )
        rtp_ip, rtp_port = await self.media.bind(local_ip)
        if self.target.transport == "TCP":
            try:
                reader, writer = await asyncio.open_connection(hop[0], hop[1], local_addr=(local_ip, 0))
            except OSError as exc:
                raise LineError(f"SIP over TCP to {self.target}: {exc}") from exc
            self._stream = (reader, writer)
            sockname = writer.get_extra_info("sockname")
            self._tasks.append(asyncio.create_task(self._read_stream(reader)))
        else:
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _Signalling(self), local_addr=(local_ip, 0)
            )
            self._udp = transport
            sockname = transport.get_extra_info("sockname")
        who = CallerIdentity(
            request_uri=self.target.request_uri,
            next_hop=hop,
            local=(local_ip, int(sockname[1])),
            transport=self.target.transport,
            from_user=self.credentials.username if self.credentials else "callsim",
            credentials=self.credentials,
            extra_headers=self._extra_headers(start),
        )
        offer = make_offer(rtp_ip, rtp_port, session_id=self._session, version=self._version)
        self.dialog = SipCaller(who, offer, self._answer_offer, new_call_id(local_ip),
                                answer_timeout_ns=self.answer_timeout_ns)  # fmt: skip
        self._send(self.dialog.invite(self.clock.now_ns()))
        self._tasks.append(asyncio.create_task(self._timers()))
        await self._ready.wait()
        if self._refused is not None:
            r = self._refused
            heard = self.dialog is not None and r.status in self.dialog.statuses
            said = f"answered {r.status} {r.reason}".strip() if heard else f"{r.reason} (no final answer)"
            raise CallRefused(r.outcome, f"{self.target} {said}")
        if self._closed_reason is not None and self.media is not None and self.media.remote is None:
            raise LineError(f"SIP to {self.target}: {self._closed_reason}")

    async def send(self, pcm: Pcm) -> None:
        if self.media is not None and self._closed_reason is None:
            self.media.send(pcm)

    async def recv(self) -> LineInput:
        if self.dialog is None:
            return LineClosed("never connected")
        if self._inbox.empty() and self._closed_reason is not None:
            return LineClosed(self._closed_reason)
        item, weight = await self._inbox.get()
        self._queued -= weight
        return item

    async def played(self, marks: tuple[str, ...]) -> None:
        return None  # RTP has no playout marks

    async def hangup(self, reason: str) -> None:
        await self.close()

    async def close(self) -> None:
        """BYE (or CANCEL), answered or not within :data:`CLOSE_TIMEOUT_S`; then the sockets close."""
        dialog = self.dialog
        if dialog is not None and dialog.state not in (State.DONE,):
            self._send(dialog.hangup(self.clock.now_ns()))
            self._wake.set()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT_S if dialog.state is not State.DONE else 0):
                    await self._ended.wait()
        self._end("closed by caller")
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=CLOSE_TIMEOUT_S)  # bounded, and never raises
        self._tasks.clear()
        if self.media is not None:
            await self.media.close()
        if self._udp is not None:
            self._udp.close()
        if self._stream is not None:
            self._stream[1].close()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self._stream[1].wait_closed()

    def describe(self) -> SipLineMeta:
        """What the line saw, for the recording's meta (``line_stats``)."""
        d: SipLineMeta = {"transport": f"sip/{self.target.transport.lower()}"}
        if self.dialog is not None:
            d.update({"sip_statuses": list(self.dialog.statuses), "sip_malformed": self.dialog.malformed,
                      "sip_strays": self.dialog.strays, "sip_reoffers": self.dialog.reoffers})  # fmt: skip
        if self.media is not None:
            d.update(self.media.describe())
        return d

    # --- inside ------------------------------------------------------------------------------------------

    async def _resolve(self) -> Hop:
        host, port = self.target.host, self.target.port
        try:
            ipaddress.ip_address(host)
            return host, port
        except ValueError:
            pass
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(5.0):
                infos = await loop.getaddrinfo(host, port, family=socket.AF_INET, type=socket.SOCK_DGRAM)
        except (OSError, TimeoutError) as exc:
            raise LineError(f"SIP target {self.target}: cannot resolve {host!r}: {exc}") from exc
        return str(infos[0][4][0]), port

    def _extra_headers(self, start: CallStart) -> tuple[tuple[str, str], ...]:
        extra = [(CALL_ID_HEADER, start.call_id)]
        if self.send_dialogue and start.dialogue:
            packed = zlib.compress(json.dumps(dict(start.dialogue), ensure_ascii=False).encode())
            extra.append((DIALOGUE_HEADER, base64.b64encode(packed).decode()))
        return (*extra, *((k, v) for k, v in self.headers if "\r" not in v and "\n" not in v))

    def _answer_offer(self, sdp: str) -> str:
        assert self.media is not None
        remote = parse_remote(sdp)
        self._version += 1
        return make_answer(remote, *self.media.local, session_id=self._session, version=self._version)

    def _send(self, out: list[tuple[bytes, Hop]]) -> None:
        for data, hop in out:
            if self._stream is not None:
                self._stream[1].write(data)
            elif self._udp is not None and not self._udp.is_closing():
                self._udp.sendto(data, hop)

    def _message(self, data: bytes, source: Hop | None) -> None:
        if self.dialog is None:
            return
        events, out = self.dialog.receive(data, self.clock.now_ns(), source)
        self._send(out)
        self._handle(events)
        self._wake.set()

    async def _read_stream(self, reader: asyncio.StreamReader) -> None:
        framer = StreamFramer()
        while True:
            data = await reader.read(65536)
            if not data:
                self._end("the far end closed the SIP connection")
                self._ready.set()
                return
            try:
                messages = framer.feed(data)
            except ValueError as exc:
                self._end(f"protocol_error: SIP stream: {exc}")
                self._ready.set()
                return
            for message in messages:
                self._message(message, None)

    async def _timers(self) -> None:
        while self.dialog is not None and self._closed_reason is None:
            self._wake.clear()
            deadline = self.dialog.next_deadline()
            if deadline is not None and deadline <= self.clock.now_ns():
                events, out = self.dialog.poll(self.clock.now_ns())
                self._send(out)
                self._handle(events)
                continue
            timeout = None if deadline is None else (deadline - self.clock.now_ns()) / 1e9
            # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel that meets a wake-up
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wake.wait()

    def _handle(self, events: list[DialogEvent]) -> None:
        for event in events:
            if isinstance(event, (EarlyMedia, Answered, MediaChanged)):
                self._media_from(event.sdp)
                self._ready.set()
            elif isinstance(event, Refused):
                self._ended.set()
                if self._ready.is_set():  # refused after early media: the call ends here
                    self._put(AssistantControl("hangup", {"reason": f"{event.status} {event.reason}"}), 0)
                    self._end(f"{event.outcome}: {event.status} {event.reason}")
                else:
                    self._refused = event
                    self._ready.set()
            elif isinstance(event, RemoteBye):
                self._ended.set()
                self._put(AssistantControl("hangup", {"reason": BOT_HUNG_UP}), 0)
                self._end(BOT_HUNG_UP)
            elif isinstance(event, Ended):
                self._ended.set()

    def _media_from(self, sdp: str) -> None:
        if self.media is None or not sdp.strip():
            return
        try:
            self.media.start(parse_remote(sdp))
        except ValueError as exc:
            self._end(f"protocol_error: the far end's SDP: {exc}")

    def _put(self, item: LineInput, weight: int) -> None:
        if isinstance(item, LineClosed):
            self._end(item.reason)
            return
        self._queued += weight
        self._inbox.put_nowait((item, weight))
        if self._queued > MAX_INBOX:
            self._end(f"protocol_error: flood: {self._queued // 1024} KiB of the far end's audio not taken")

    def _end(self, reason: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = reason
            self._inbox.put_nowait((LineClosed(reason), 0))


def _local_address_towards(host: str) -> str:
    """The address of ours the far end can reach: loopback for a loopback peer, else the route's source."""
    if ipaddress.ip_address(host).is_loopback:
        return "127.0.0.1"
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((host, 9))  # no packet is sent: this only asks the routing table
        return str(probe.getsockname()[0])
    except OSError:
        return "0.0.0.0"
    finally:
        probe.close()


def dialogue_from_header(value: str) -> Mapping[str, Any]:
    """The dialogue a SIP line sent in :data:`DIALOGUE_HEADER` (for the answering side)."""
    try:
        data = json.loads(zlib.decompress(base64.b64decode(value, validate=True), bufsize=1 << 16))
    except (ValueError, zlib.error) as exc:
        raise ValueError(f"{DIALOGUE_HEADER} is not base64 of zlib'd JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{DIALOGUE_HEADER} holds {type(data).__name__}, not an object")
    return data
