"""The WebRTC line (``webrtc+http://host:port/api/offer``): CallSim as a WebRTC peer, as a browser would be.

This is how pipecat's development runner serves a bot by default (SmallWebRTC over aiortc), so a bot is
tested as it is deployed, unmodified.  CallSim offers one ``sendrecv`` audio transceiver (Opus; PCMU/PCMA
too, as aiortc offers), posts the offer and trickles its ICE candidates (:mod:`voice.lines.webrtc_signalling`)
with ``request_data`` = ``{"call_id", "dialogue"}`` plus what the config adds, waits for the connection
(:data:`CONNECT_TIMEOUT_S`), then:

- the caller's frames go out as the call driver sends them (:class:`~voice.lines.webrtc_media.CallerTrack`:
  the driver's schedule is the RTP stream's pacing; no second pacing loop);
- the bot's track comes back through aiortc's receive path (jitter buffer, Opus decoder) and is handed to
  the call core as it comes out, so what is recorded and measured is what a caller's phone would play
  (:class:`~voice.lines.webrtc_media.HeardAudio`);
- WebRTC has no "stop playing" message: a bot that is cut off simply stops sending speech, and the stop is
  measured on what the caller hears, as on every line;
- the bot hangs up by closing the peer connection (pipecat does when its pipeline ends): the track ends or
  the connection closes, and the line returns ``AssistantControl("hangup")`` then
  :class:`~voice.core.call.LineClosed`, as the Twilio line does for a closed stream.  A connection that
  *fails* (ICE or DTLS lost mid-call) is a :class:`LineClosed` with that reason.

ICE: for a bot on a loopback address, candidates are gathered on ``127.0.0.1`` only
(:mod:`voice.lines.webrtc_ice`); no STUN is needed there.  A remote bot behind NAT needs ``ice_servers``
(STUN, or TURN), as any WebRTC client does.  Every wait is bounded: the HTTP exchange
(``signalling_timeout_s``), the connection (``connect_timeout_s``), the close (:data:`CLOSE_TIMEOUT_S`).
:meth:`WebrtcLine.recv` never raises; :meth:`WebrtcLine.open` raises :class:`~voice.errors.LineError`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

from voice.core.audio import Pcm
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.core.event_json import JsonObject, JsonValue, as_json_object
from voice.errors import LineError
from voice.lines.headers import Headers
from voice.lines.line import CallStart
from voice.lines.line_meta import WebrtcLineMeta, WebrtcRtpStats
from voice.lines.redact import redact_text
from voice.lines.webrtc_ice import is_loopback_host, loopback_candidates
from voice.lines.webrtc_media import CallerTrack, HeardAudio
from voice.lines.webrtc_signalling import Signalling, split_candidates

__all__ = ["CLOSE_TIMEOUT_S", "CONNECT_TIMEOUT_S", "FLOOD_BYTES", "WebrtcLine", "request_data_for"]

SIGNALLING_TIMEOUT_S = 5.0  # each HTTP request to the offer route
CONNECT_TIMEOUT_S = 8.0  # ICE + DTLS after the answer (with the signalling, within the driver's 15 s)
CLOSE_TIMEOUT_S = 5.0
FLOOD_BYTES = 4 << 20  # decoded audio waiting in the inbox: RTP faster than real time, for minutes
BOT_HUNG_UP = "the bot closed the peer connection"


def request_data_for(start: CallStart, extra: JsonObject | None = None) -> dict[str, JsonValue]:
    """What the offer's ``request_data`` carries: the config's extra keys, then the call id and dialogue."""
    return {**dict(extra or {}), "call_id": start.call_id, "dialogue": as_json_object(start.dialogue)}


class WebrtcLine:
    """A :class:`~voice.lines.line.Line` to a bot's WebRTC offer route (pipecat's SmallWebRTC runner)."""

    def __init__(
        self,
        url: str,
        *,
        request_data: JsonObject | None = None,
        headers: Headers = (),
        ice_servers: Sequence[RTCIceServer] = (),
        signalling_timeout_s: float = SIGNALLING_TIMEOUT_S,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        flood_bytes: int = FLOOD_BYTES,
    ) -> None:
        self.url = url
        self.extra = dict(request_data or {})
        self.ice_servers = list(ice_servers)
        self.connect_timeout_s = connect_timeout_s
        self.flood_bytes = flood_bytes
        self._signalling = Signalling(url, headers=dict(headers), timeout_s=signalling_timeout_s)
        self._pc: RTCPeerConnection | None = None
        self._track = CallerTrack()
        self._heard = HeardAudio()
        self._inbox: asyncio.Queue[tuple[LineInput, int]] = asyncio.Queue()
        self._queued_bytes = 0
        self._closed_reason: str | None = None
        self._closing = False  # CallSim is ending the call: what the connection does next is not the bot's
        self._reader: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self.pc_id: str | None = None
        self._stats: WebrtcRtpStats = {}

    @property
    def is_open(self) -> bool:
        return self._pc is not None and self._closed_reason is None

    # --- Line protocol ---------------------------------------------------------------------------------

    async def open(self, start: CallStart) -> None:
        """Offer, answer, ICE; returns once media can flow.  :class:`LineError` for anything in the way."""
        try:
            await self._open(start)
        except BaseException:
            await self.close()
            raise

    async def _open(self, start: CallStart) -> None:
        host = urlsplit(self.url).hostname or ""
        with loopback_candidates(is_loopback_host(host)):
            pc = self._pc = RTCPeerConnection(RTCConfiguration(iceServers=self.ice_servers))
            pc.addTransceiver(self._track, direction="sendrecv")
            pc.on("track", self._on_track)
            pc.on("connectionstatechange", self._on_state)
            await pc.setLocalDescription(await pc.createOffer())
        sdp, candidates = split_candidates(pc.localDescription.sdp)  # they follow by PATCH, as a browser's do
        answer = await self._signalling.offer(sdp, request_data_for(start, self.extra))
        self.pc_id = answer.pc_id
        try:
            await pc.setRemoteDescription(RTCSessionDescription(answer.sdp, answer.type))
        except (ValueError, TypeError, AssertionError) as exc:
            raise LineError(redact_text(f"the bot's SDP answer from {self.url} is unusable: {exc}")) from exc
        if pc.connectionState != "connected":
            if answer.pc_id is None:
                raise LineError(
                    redact_text(f"the answer from {self.url} has no pc_id to send ICE candidates to")
                )
            await self._signalling.trickle(answer.pc_id, candidates)
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                await self._connected.wait()
        except TimeoutError as exc:
            state = pc.connectionState
            raise LineError(
                redact_text(
                    f"WebRTC to {self.url}: no connection within {self.connect_timeout_s:g} s "
                    f"(ICE state {state})"
                )
            ) from exc
        if self._closed_reason is not None:
            raise LineError(redact_text(f"WebRTC to {self.url}: {self._closed_reason}"))

    async def send(self, pcm: Pcm) -> None:
        if self.is_open:
            self._track.push(pcm)

    async def recv(self) -> LineInput:
        """The next input, in order; ``LineClosed`` for ever once the line is over and the inbox empty."""
        if self._pc is None:
            return LineClosed("never connected")
        if self._inbox.empty() and self._closed_reason is not None:
            return LineClosed(self._closed_reason)
        item, weight = await self._inbox.get()
        self._queued_bytes -= weight
        return item

    async def played(self, marks: tuple[str, ...]) -> None:
        return None  # WebRTC has no playout marks

    async def hangup(self, reason: str) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the peer connection (the bot sees the caller hang up), within :data:`CLOSE_TIMEOUT_S`."""
        self._closing = True
        pc = self._pc
        if pc is not None and not self._stats:
            with contextlib.suppress(Exception):  # statistics are a courtesy; a dying connection may refuse
                async with asyncio.timeout(1.0):
                    self._stats = _rtp_stats(await pc.getStats())
        self._track.stop()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                if pc is not None:
                    await pc.close()
                if self._reader is not None:
                    self._reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError, MediaStreamError):
                        await self._reader
        if pc is not None:
            self._end("closed by caller")

    def describe(self) -> WebrtcLineMeta:
        """What the line saw, for the recording's meta (``line_stats``)."""
        return {
            "transport": "webrtc",
            "frames_received": self._heard.frames,
            "silent_frames": self._heard.silent,
            "caller_frames_dropped": self._track.dropped,
            **self._stats,
        }

    # --- inside ------------------------------------------------------------------------------------------

    def _on_state(self) -> None:
        assert self._pc is not None
        state = self._pc.connectionState
        if state == "connected":
            self._connected.set()
        elif state == "failed" and not self._closing:
            self._end("the WebRTC connection failed (ICE or DTLS lost)")
            self._connected.set()
        elif state == "closed" and not self._closing:
            self._bot_hung_up()
            self._connected.set()

    def _on_track(self, track: MediaStreamTrack) -> None:
        if track.kind == "audio" and self._reader is None:
            self._reader = asyncio.create_task(self._read(track))

    async def _read(self, track: MediaStreamTrack) -> None:
        while self._closed_reason is None:
            try:
                frame = await track.recv()
            except MediaStreamError:
                if not self._closing:
                    self._bot_hung_up()
                return
            pcm = self._heard.convert(frame)  # type: ignore[arg-type]  # an audio track gives AudioFrames
            if pcm is None:
                continue
            self._put(AssistantAudio(pcm), pcm.nbytes)
            if self._queued_bytes > self.flood_bytes:
                kib = self._queued_bytes // 1024
                self._end(f"protocol_error: flood: {kib} KiB of the bot's audio not yet taken")
                return

    def _bot_hung_up(self) -> None:
        if self._closed_reason is None:
            self._put(AssistantControl("hangup", {"reason": BOT_HUNG_UP}))
            self._end(BOT_HUNG_UP)

    def _put(self, item: LineInput, weight: int = 0) -> None:
        self._queued_bytes += weight
        self._inbox.put_nowait((item, weight))

    def _end(self, reason: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = reason
            self._put(LineClosed(reason))


def _rtp_stats(report: Any) -> WebrtcRtpStats:
    """The inbound audio's loss and jitter from aiortc's statistics (``RTCInboundRtpStreamStats``)."""
    for stats in report.values():
        if getattr(stats, "type", None) == "inbound-rtp" and getattr(stats, "kind", None) == "audio":
            return {"rtp_packets_received": stats.packetsReceived, "rtp_packets_lost": stats.packetsLost,
                    "rtp_jitter_ms": round(float(stats.jitter) / 48, 3)}  # fmt: skip
    return {}
