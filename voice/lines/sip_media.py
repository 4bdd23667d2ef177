"""A SIP call's media: G.711 over RTP on one UDP socket, both directions, as a phone's would be.

- **Out**: each 20 ms caller frame the driver sends becomes one RTP packet (16 kHz → 8 kHz G.711, PCMU or
  PCMA as the answer chose) at once: the driver's schedule is the RTP stream's pacing, as on every line.
- **In**: packets are taken only from the address and port the far end's SDP names (anything else is
  counted as ``rtp_wrong_source`` and dropped: symmetric RTP, no injection), parsed (a malformed one is
  counted), and go through a fixed-delay jitter buffer (:mod:`voice.lines.rtp_jitter`; the delay is the
  line's constant, which ``scripts/bench_fidelity`` prints) counted in 8 kHz samples on the call's injected
  clock.  A playout task wakes exactly when the next frame is due, decodes it (a lost frame is concealed
  with silence) and hands it to the call core, so what is recorded and measured is what the caller's phone
  would play.  Frames of digital silence are not handed on, for the reason
  :mod:`voice.lines.webrtc_media` gives (a phone's RTP never stops between replies).
- **The network's effects** (``jitter_ms``, ``loss_rate``) act on the packets themselves: a lost packet is
  never sent or never reaches the jitter buffer, and jitter delays a packet's arrival, so the jitter
  buffer absorbs it (or drops it as late) as it would on a real line.
- **Bounds**: the jitter buffer holds at most ``max_packets``; a sender far faster than real time overflows
  it, and past :data:`FLOOD_OVERFLOW` dropped packets the call ends as a protocol error (a flood); no RTP
  at all within ``media_timeout_ns`` of the media path opening ends it as ``no_media``.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from voice.core.audio import FRAME_SAMPLES, Pcm, silence
from voice.core.call import AssistantAudio, LineClosed, LineInput
from voice.core.clock import Clock
from voice.lines.effects import AlawChannel, LineEffects, MulawChannel
from voice.lines.line_meta import RtpCounts, RtpMediaMeta
from voice.lines.rtp_jitter import JitterBuffer
from voice.lines.rtp_packet import RtpPacket, RtpSender, is_rtcp, parse_rtp
from voice.lines.sip_sdp import PCMA, RemoteMedia

T = TypeVar("T")
RTP_RATE = 8000
RTP_FRAME = 160  # 20 ms at 8 kHz
JITTER_DELAY_MS = 60  # the jitter buffer's playout delay: the line's constant
MEDIA_TIMEOUT_NS = 10_000_000_000
FLOOD_OVERFLOW = 500  # packets dropped for a full jitter buffer: a sender this far ahead is flooding
SILENT_PEAK = 16
NO_MEDIA = "no_media"


def ns_to_rtp(ns: int) -> int:
    """Nanoseconds on the call's clock → 8 kHz samples (the one conversion of the line's time)."""
    return ns * RTP_RATE // 1_000_000_000


def rtp_to_ns(samples: int) -> int:
    return samples * 1_000_000_000 // RTP_RATE


class _Socket(asyncio.DatagramProtocol):
    def __init__(self, on_packet: Callable[[bytes, tuple[str, int]], None]) -> None:
        self.on_packet = on_packet

    def datagram_received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        self.on_packet(data, (str(addr[0]), int(addr[1])))

    def error_received(self, exc: Exception) -> None:  # ICMP unreachable: the far end's port is closed
        return None


class RtpMedia:
    """One call's RTP socket, sender, jitter buffer and playout."""

    def __init__(
        self,
        clock: Clock,
        put: Callable[[LineInput, int], None],
        *,
        jitter_delay_ms: int = JITTER_DELAY_MS,
        effects: LineEffects | None = None,
        rng: np.random.Generator | None = None,
        media_timeout_ns: int = MEDIA_TIMEOUT_NS,
        drop_silence: bool = True,
    ) -> None:
        self.clock = clock
        self._put = put
        self.effects = effects or LineEffects()
        self._rng = rng or np.random.default_rng(0)
        self.jitter_delay_ms = jitter_delay_ms
        self.buffer = JitterBuffer(jitter_delay_ms * RTP_RATE // 1000, RTP_FRAME)
        self.media_timeout_ns = media_timeout_ns
        self.drop_silence = drop_silence  # an answering side's assistant needs every frame, silence too
        self.transport: asyncio.DatagramTransport | None = None
        self.local: tuple[str, int] = ("", 0)
        self.remote: RemoteMedia | None = None
        self._sender: RtpSender | None = None
        self._encoder: MulawChannel | AlawChannel = MulawChannel()
        self._decoder: MulawChannel | AlawChannel = MulawChannel()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._first_marker = True
        self.counts: RtpCounts = {"rtp_sent": 0, "rtp_received": 0, "rtp_wrong_source": 0, "rtp_malformed": 0,
                       "rtp_other_payload": 0, "rtp_dtmf_received": 0, "rtp_lost_on_purpose": 0,
                       "rtp_frames_heard": 0, "rtp_silent_frames": 0}  # fmt: skip
        self.ended: str | None = None

    async def bind(self, host: str) -> tuple[str, int]:
        """Open the RTP socket on ``host`` (the address the SDP offer names)."""
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            lambda: _Socket(self._arrived), local_addr=(host, 0)
        )
        self.transport = transport
        sock = transport.get_extra_info("sockname")
        self.local = (str(sock[0]), int(sock[1]))
        return self.local

    def start(self, remote: RemoteMedia) -> None:
        """Media may flow to and from ``remote`` (an early 183's SDP, the answer's, or a re-INVITE's)."""
        first = self.remote is None
        law_changed = self.remote is not None and self.remote.payload_type != remote.payload_type
        self.remote = remote
        if first or law_changed:
            law = AlawChannel if remote.payload_type == PCMA else MulawChannel
            self._encoder, self._decoder = law(), law()
            self._sender = RtpSender(
                remote.payload_type,
                ssrc=secrets.randbits(32),
                first_sequence=secrets.randbits(16),
                first_timestamp=secrets.randbits(32),
            )
            self._first_marker = True
        if self._task is None:
            self._task = asyncio.create_task(self._playout())

    def send(self, pcm: Pcm) -> None:
        """One caller frame out, unless the far end holds the call (it asked for no media from us)."""
        remote, sender, transport = self.remote, self._sender, self.transport
        if remote is None or sender is None or transport is None or self.ended is not None:
            return
        if remote.direction in ("sendonly", "inactive") or remote.port == 0:
            sender.skip(RTP_FRAME)
            return
        packet = sender.packet(self._encoder.encode(pcm), RTP_FRAME, marker=self._first_marker)
        self._first_marker = False
        if self._through_network(self._sendto, packet):
            self.counts["rtp_sent"] += 1

    def _sendto(self, packet: bytes) -> None:
        if self.transport is not None and self.remote is not None and not self.transport.is_closing():
            self.transport.sendto(packet, (self.remote.address, self.remote.port))

    def _through_network(self, deliver: Callable[[T], None], packet: T) -> bool:
        """The line's loss and jitter on one packet, either way: False if it is lost, else it is delivered
        now or up to ``jitter_ms`` later."""
        if self.effects.loss_rate and self._rng.random() < self.effects.loss_rate:
            self.counts["rtp_lost_on_purpose"] += 1
            return False
        jitter_ms = self.effects.jitter_ms
        delay = float(self._rng.uniform(0.0, jitter_ms)) / 1000 if jitter_ms else 0.0
        if delay:
            asyncio.get_running_loop().call_later(delay, deliver, packet)
        else:
            deliver(packet)
        return True

    # --- what the far end sends ---------------------------------------------------------------------------

    def _arrived(self, data: bytes, source: tuple[str, int]) -> None:
        remote = self.remote
        if remote is None or self.ended is not None:
            return
        if source != (remote.address, remote.port):
            self.counts["rtp_wrong_source"] += 1
            return
        if is_rtcp(data):
            return
        try:
            packet = parse_rtp(data)
        except ValueError:
            self.counts["rtp_malformed"] += 1
            return
        if packet.payload_type != remote.payload_type:
            if packet.payload_type == remote.dtmf_payload_type:
                self.counts["rtp_dtmf_received"] += 1
            else:
                self.counts["rtp_other_payload"] += 1
            return
        self._through_network(self._buffer, packet)

    def _buffer(self, packet: RtpPacket) -> None:
        if self.ended is not None:
            return
        self.counts["rtp_received"] += 1
        self.buffer.push(packet, ns_to_rtp(self.clock.now_ns()))
        if self.buffer.stats.overflow > FLOOD_OVERFLOW:
            dropped = self.buffer.stats.overflow
            self._end(f"protocol_error: flood: {dropped} RTP packets beyond the jitter buffer")
        self._wake.set()

    async def _playout(self) -> None:
        """Hand each frame on when it is due; ``no_media`` if nothing ever arrives."""
        opened = self.clock.now_ns()
        while self.ended is None:
            due = self.buffer.next_due()
            self._wake.clear()
            if due is None:
                if self.counts["rtp_received"] == 0:
                    left = opened + self.media_timeout_ns - self.clock.now_ns()
                    if left <= 0:
                        seconds = self.media_timeout_ns / 1e9
                        self._end(f"{NO_MEDIA}: no RTP from {self._remote_text()} within {seconds:g} s")
                        return
                    with contextlib.suppress(TimeoutError):  # asyncio.timeout: see SipLine._timers
                        async with asyncio.timeout(left / 1e9):
                            await self._wake.wait()
                else:
                    await self._wake.wait()
                continue
            wait_ns = rtp_to_ns(due) - self.clock.now_ns()
            if wait_ns > 0:
                waker = asyncio.ensure_future(self._wake.wait())
                sleeper = asyncio.ensure_future(self.clock.sleep_until(rtp_to_ns(due)))
                try:
                    await asyncio.wait({waker, sleeper}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waker.cancel()
                    sleeper.cancel()
                continue
            for payload in self.buffer.pop_due(ns_to_rtp(self.clock.now_ns())):
                self._hand_on(payload)

    def _hand_on(self, payload: bytes | None) -> None:
        pcm = self._decoder.decode(payload) if payload is not None else silence(FRAME_SAMPLES)
        self.counts["rtp_frames_heard"] += 1
        if self.drop_silence and (len(pcm) == 0 or int(np.abs(pcm.astype(np.int32)).max()) < SILENT_PEAK):
            self.counts["rtp_silent_frames"] += 1
            return
        self._put(AssistantAudio(pcm), pcm.nbytes)

    def _remote_text(self) -> str:
        return f"{self.remote.address}:{self.remote.port}" if self.remote else "the far end"

    def _end(self, reason: str) -> None:
        if self.ended is None:
            self.ended = reason
            self._put(LineClosed(reason), 0)
            self._wake.set()

    async def close(self) -> None:
        if self.ended is None:
            self.ended = "closed"
        self._wake.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=2.0)
        if self.transport is not None:
            self.transport.close()

    def describe(self) -> RtpMediaMeta:
        stats = self.buffer.stats
        d: RtpMediaMeta = {**self.counts, "jitter_buffer_ms": self.jitter_delay_ms, "rtp_late": stats.late,
                           "rtp_lost": stats.lost, "rtp_duplicates": stats.duplicates,
                           "rtp_overflow": stats.overflow, "rtp_reordered": stats.reordered,
                           "rtp_jitter_ms": round(float(stats.jitter) * 1000 / RTP_RATE, 3)}  # fmt: skip
        if self.remote is not None:
            d["codec"] = "PCMA" if self.remote.payload_type == PCMA else "PCMU"
        return d
