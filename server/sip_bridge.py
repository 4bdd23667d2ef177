"""One SIP call through the gateway: its dialog, its RTP, and its raw-PCM assistant line, bridged.

:class:`SipCall` is the I/O around one :class:`~server.sip_answer.SipAnswerer`:

- its signalling: the datagrams the gateway routes to it by Call-ID, and the dialog's timers, handled in
  order by one task;
- the answer: once the INVITE arrives, the assistant's websocket is opened (``CallStart`` with the call id
  from ``X-CallSim-Call-Id`` or the SIP Call-ID, the dialogue from ``X-CallSim-Dialogue``), and only then
  is the call answered, so the caller's first words reach a connected assistant; an unreachable assistant
  is 503;
- caller → assistant: every 16 kHz frame the RTP jitter buffer hands on, silence too (the assistant's VAD
  needs it), sent in order;
- assistant → caller: its chunks queue in a :class:`~server.sip_playout.PlayoutQueue` played out as RTP
  on an absolute schedule of the call's clock, one frame per 20 ms (silence when nothing is queued);
  ``clear`` drops the queue, marks are answered once their audio is sent, ``hangup`` (or the assistant's
  line closing) plays out what is queued and then sends BYE, ``error`` sends BYE at once;
- the caller's BYE hangs up the assistant; a call whose ACK or RTP never comes ends, and is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from server.sip_answer import T1_NS, AnswerEvent, Cancelled, Hop, Invited, Out, SipAnswerer, State
from server.sip_playout import PlayoutQueue
from voice.core.audio import FRAME_SAMPLES, Pcm, ns_to_samples, samples_to_ns
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput, PlayoutMark
from voice.core.clock import Clock
from voice.errors import LineError
from voice.lines.line import CallStart
from voice.lines.line_meta import RtpMediaMeta
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.sip import CALL_ID_HEADER, DIALOGUE_HEADER, dialogue_from_header
from voice.lines.sip_events import Ended, MediaChanged, RemoteBye
from voice.lines.sip_media import MEDIA_TIMEOUT_NS, RtpMedia
from voice.lines.sip_message import header
from voice.lines.sip_sdp import RemoteMedia, make_answer, parse_remote

logger = logging.getLogger(__name__)

FRAME_NS = samples_to_ns(FRAME_SAMPLES)
OPEN_TIMEOUT_S = 10.0  # the assistant's websocket must open within this, else 503
RETRANSMIT_NS = 64 * T1_NS  # the dialog's longest retransmission
POLL_NS = 50_000_000
LINGER_NS = 4_000_000_000  # a finished call's dialog still answers retransmissions this long
HANGUP_TAIL_FRAMES = 10  # silence after a hanging-up assistant's last word, before the BYE: the far end's
# jitter buffer still holds that word (a BYE at once would cut its last 60 ms or so)
MAX_UPLINK_FRAMES = 500  # caller frames the assistant has not taken (10 s): it is stuck
Send = Callable[[Out], None]


class SipBridgeMeta(RtpMediaMeta):
    """A bridged call's figures: its SIP Call-ID, why it ended, and its media's."""

    call_id: str
    reason: str | None


class SipCall:
    """One incoming call, from its INVITE to its last retransmission.  :meth:`run` is its life."""

    def __init__(
        self,
        local: Hop,
        assistant_url: str,
        clock: Clock,
        send: Send,
        *,
        refuse: int | None = None,
        media_timeout_ns: int = MEDIA_TIMEOUT_NS,
        open_timeout_s: float = OPEN_TIMEOUT_S,
        line_factory: Callable[[str], PcmWebsocketLine] = PcmWebsocketLine,
    ) -> None:
        self.clock = clock
        self._send = send
        self.refuse = refuse
        self.host = local[0]
        self.assistant_url = assistant_url
        self.open_timeout_s = open_timeout_s
        self.dialog = SipAnswerer(local, self._answer_offer)
        self.media = RtpMedia(clock, self._heard, drop_silence=False, media_timeout_ns=media_timeout_ns)
        self.line: PcmWebsocketLine | None = None
        self._line_factory = line_factory
        self.playout = PlayoutQueue()
        self.reason: str | None = None  # why the call ended
        self.bridging = refuse is None  # holds one of the gateway's call slots
        self._inbox: asyncio.Queue[tuple[bytes, Hop]] = asyncio.Queue()
        self._uplink: asyncio.Queue[Pcm] = asyncio.Queue()
        self._invited: asyncio.Future[Invited] = asyncio.get_running_loop().create_future()
        self._over = asyncio.Event()
        self._draining = False  # the assistant is done: play out its queue, then BYE
        self._next_send: int | None = None  # when the playout's next frame goes out (ns)
        self._drained = ""  # why
        self._session = secrets.randbits(31)
        self._version = 1
        self._tasks: list[asyncio.Task[None]] = []

    # --- what the gateway does ----------------------------------------------------------------------------

    def feed(self, data: bytes, source: Hop) -> None:
        """A datagram for this call (handled in order by the signalling task)."""
        self._inbox.put_nowait((data, source))

    async def run(self) -> None:
        """The whole call; returns once its dialog has nothing more to send (bounded)."""
        if self.refuse is None:
            try:  # before the INVITE is read: the answer names this socket
                await self.media.bind(self.host)
            except OSError as exc:
                logger.error("SIP call: no RTP socket on %s: %s", self.host, exc)
                self.refuse = 503
        signalling = asyncio.create_task(self._signalling())
        try:
            try:
                await self._bridge()
            except Exception:
                logger.exception("SIP call %s failed", self.dialog.call_id or "?")
                self._end("gateway error")
            finally:
                self.bridging = False
                await self._stop_bridge()
            # a refusal's ACK, our BYE's answer (32 s at most), then a while for retransmitted requests
            give_up = self.clock.now_ns() + RETRANSMIT_NS
            while self.dialog.next_deadline() is not None and self.clock.now_ns() < give_up:
                await self.clock.sleep_until(self.clock.now_ns() + POLL_NS)
            await self.clock.sleep_until(self.clock.now_ns() + LINGER_NS)
        finally:
            signalling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await signalling

    def end(self, reason: str) -> None:
        """End the call now (BYE to the caller, hang-up to the assistant)."""
        self._end(reason)

    def describe(self) -> SipBridgeMeta:
        return {"call_id": self.dialog.call_id, "reason": self.reason, **self.media.describe()}

    # --- the bridge ---------------------------------------------------------------------------------------

    async def _bridge(self) -> None:
        invited = await self._until_over(self._invited)
        if invited is None:
            return
        if self.refuse is not None:
            self._send(self.dialog.reject(self.clock.now_ns(), self.refuse))
            self._end(f"refused {self.refuse}")
            return
        start = self._call_start(invited)
        line = self._line_factory(self.assistant_url)
        self.line = line
        try:
            opened = await self._until_over(asyncio.wait_for(line.open(start), self.open_timeout_s))
        except (LineError, TimeoutError, OSError) as exc:
            logger.warning("SIP call %s: the assistant is unreachable: %s", start.call_id, exc)
            self._send(self.dialog.reject(self.clock.now_ns(), 503))
            self._end(f"assistant unreachable: {exc}")
            return
        if opened is None and self._over.is_set():
            return
        self._send(self.dialog.accept(self.clock.now_ns()))
        self.media.start(parse_remote(invited.offer))
        logger.info("SIP call %s answered (call id %s)", self.dialog.call_id, start.call_id)
        for job in (self._to_assistant(line), self._from_assistant(line), self._play(line)):
            self._tasks.append(asyncio.create_task(job))
            self._tasks[-1].add_done_callback(self._failed)
        await self._over.wait()

    async def _until_over(self, aw: Awaitable[Any]) -> Any:
        """``aw``'s result, or None if the call ends first (then ``aw`` is cancelled)."""
        job = asyncio.ensure_future(aw)
        over = asyncio.create_task(self._over.wait())
        try:
            await asyncio.wait({job, over}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            over.cancel()
        if job.done():
            return job.result()
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await job
        return None

    def _call_start(self, invited: Invited) -> CallStart:
        request = invited.request
        call_id = header(request, CALL_ID_HEADER) or self.dialog.call_id
        dialogue: dict[str, Any] = {}
        if packed := header(request, DIALOGUE_HEADER):
            try:
                dialogue = dict(dialogue_from_header(packed))
            except ValueError as exc:
                logger.warning("SIP call %s: %s", call_id, exc)
        return CallStart(call_id, dialogue)

    async def _to_assistant(self, line: PcmWebsocketLine) -> None:
        while True:
            await line.send(await self._uplink.get())

    async def _from_assistant(self, line: PcmWebsocketLine) -> None:
        while not self._draining:
            item = await line.recv()
            if isinstance(item, AssistantAudio):
                if self.playout.empty and self._next_send is not None:
                    # a reply starting from silence keeps its place inside the frame, as in a bot's
                    # continuous stream: it goes out exactly one frame after it came (not on the grid)
                    lead = ns_to_samples(FRAME_NS - self._until_next_send())
                    self.playout.push(np.zeros(lead, dtype=np.int16))
                if not self.playout.push(item.pcm):
                    self._end("protocol_error: flood: the assistant's audio is a minute ahead of the line")
            elif isinstance(item, PlayoutMark):
                self.playout.mark(item.name)
            elif isinstance(item, AssistantControl):
                if item.event == "clear":  # what a continuous stream has played by now still goes out
                    if dropped := self.playout.clear(ns_to_samples(FRAME_NS - self._until_next_send())):
                        await line.played(dropped)
                elif item.event == "hangup":
                    self._draining, self._drained = True, "the assistant hung up"
                elif item.event == "error":
                    self._end(f"assistant error: {item.payload.get('message', '')}"[:300])
            elif isinstance(item, LineClosed):  # play out what it said, then BYE
                self._draining, self._drained = True, f"the assistant's line closed: {item.reason}"

    def _until_next_send(self) -> int:
        """ns until the playout's next frame goes out, within one frame."""
        if self._next_send is None:
            return FRAME_NS
        return max(0, min(FRAME_NS, self._next_send - self.clock.now_ns()))

    async def _play(self, line: PcmWebsocketLine) -> None:
        """One frame per 20 ms on an absolute schedule; BYE once a hanging-up assistant's audio is out."""
        t0 = self.clock.now_ns()
        k = tail = 0
        while not self._over.is_set():
            k += 1
            self._next_send = t0 + k * FRAME_NS
            await self.clock.sleep_until(self._next_send)
            if self._draining and self.playout.empty:
                tail = tail or k + HANGUP_TAIL_FRAMES
                if k >= tail:
                    self._end(self._drained)
                    return
            frame, marks = self.playout.take()
            self.media.send(frame)
            if marks:
                await line.played(marks)

    def _failed(self, task: asyncio.Task[None]) -> None:
        """A bridge task that raised ends the call (it is logged: a gateway bug, or a socket's error)."""
        if not task.cancelled() and (exc := task.exception()) is not None:
            logger.error("SIP call %s: %r", self.dialog.call_id, exc)
            self._end(f"gateway error: {exc!r}"[:300])

    def _heard(self, item: LineInput, nbytes: int) -> None:
        """What the RTP jitter buffer hands on: the caller's frames, or the media's end."""
        if isinstance(item, AssistantAudio):
            if self._uplink.qsize() >= MAX_UPLINK_FRAMES:
                self._end("the assistant takes no audio")
                return
            self._uplink.put_nowait(item.pcm)
        elif isinstance(item, LineClosed):
            logger.warning("SIP call %s: %s", self.dialog.call_id, item.reason)
            self._end(item.reason)

    def _end(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self._over.set()

    async def _stop_bridge(self) -> None:
        """Hang up both sides: BYE (answered or not, bounded) and the assistant's line; close the RTP."""
        reason = self.reason or "closed"
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self.dialog.state in (State.INVITED, State.ANSWERED, State.CONFIRMED):
            self._send(self.dialog.hangup(self.clock.now_ns()))
            self._wake()
        if self.line is not None:
            with contextlib.suppress(Exception):
                await self.line.hangup(reason)
        await self.media.close()
        if self.refuse is None:
            logger.info("SIP call %s ended: %s", self.dialog.call_id, reason)

    # --- signalling ---------------------------------------------------------------------------------------

    def _wake(self) -> None:
        self._inbox.put_nowait((b"", ("", 0)))  # an empty datagram: only re-reads the timers

    async def _signalling(self) -> None:
        while True:
            deadline = self.dialog.next_deadline()
            now = self.clock.now_ns()
            if deadline is not None and deadline <= now:
                events, out = self.dialog.poll(now)
                self._send(out)
                self._handle(events)
                continue
            timeout = None if deadline is None else (deadline - now) / 1e9
            try:  # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancel (and lose the item)
                async with asyncio.timeout(timeout):
                    data, source = await self._inbox.get()
            except TimeoutError:
                continue
            if data:
                events, out = self.dialog.receive(data, self.clock.now_ns(), source)
                self._send(out)
                self._handle(events)

    def _handle(self, events: list[AnswerEvent]) -> None:
        for event in events:
            if isinstance(event, Invited) and not self._invited.done():
                self._invited.set_result(event)
            elif isinstance(event, MediaChanged):
                with contextlib.suppress(ValueError):
                    self.media.start(parse_remote(event.sdp))
            elif isinstance(event, RemoteBye):
                self._end("the caller hung up")
            elif isinstance(event, Cancelled):
                self._end("the caller cancelled")
            elif isinstance(event, Ended):
                if "ACK" in event.why:
                    logger.warning("SIP call %s: %s", self.dialog.call_id, event.why)
                self._end(event.why)

    def _answer_offer(self, sdp: str) -> str:
        """Our SDP answer (our RTP socket) to the caller's offer; ValueError for an unusable one."""
        remote: RemoteMedia = parse_remote(sdp)
        if self.refuse is not None:
            return ""
        address, port = self.media.local
        self._version += 1
        return make_answer(remote, address, port, session_id=self._session, version=self._version)
