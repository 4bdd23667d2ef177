"""A test assistant (the reference, the echo) over WebRTC, as pipecat's development runner serves a bot.

The test assistants speak CallSim's raw PCM protocol to one connection per call (binary 16 kHz frames, JSON
events); here that connection is :class:`PeerConnectionLink`, one aiortc peer connection behind
``POST /api/offer`` / ``PATCH /api/offer`` (pipecat's runner's routes), so ``scripts/bench_fidelity
--transport webrtc`` and ``scripts/bench_capacity --transport webrtc`` measure a WebRTC line against an
assistant whose behaviour is known:

- the caller's track (Opus decoded after aiortc's jitter buffer, 48 kHz) comes in as 16 kHz PCM frames,
  every frame, silence included (the reference counts caller samples);
- what the assistant sends is played by :class:`PlayoutTrack`, a 20 ms frame track on this process's
  clock: each chunk is placed at the sample it arrived at (the same playout rule as CallSim's caller side,
  :class:`~voice.core.playout.PlayoutBuffer`), and frame ``k`` leaves once its 20 ms have passed, so a
  reply's first sample keeps its place inside a frame; ``clear`` drops what has not played;
- the call's ``start`` comes from the offer's ``request_data`` (``dialogue.reference`` holds a reference's
  behaviour); there is no channel for ``log`` reports (the fidelity table has no delivery rows over
  WebRTC); ``ping`` answers 0 (the link's delay is what the fidelity bench reports as the line's constant).

ICE is gathered on 127.0.0.1 only when the assistant serves on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import json
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import numpy as np
from aiohttp import web
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from aiortc.sdp import candidate_from_sdp
from av import AudioFrame, AudioResampler

from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, from_bytes, ns_to_samples, samples_to_ns, to_bytes
from voice.core.clock import Clock, MonotonicClock
from voice.core.playout import PlayoutBuffer
from voice.lines.webrtc_ice import is_loopback_host, only_loopback_everywhere

if TYPE_CHECKING:
    from server.pcm_serializer import StartMessage  # its pipecat is not this assistant's to load

FRAME_NS = samples_to_ns(FRAME_SAMPLES)
CALL_TIMEOUT_S = 3600.0  # one test call, at most
Handler = Callable[["PeerConnectionLink"], Awaitable[None]]  # one call, as the websocket servers' handlers


class PlayoutTrack(MediaStreamTrack):
    """The assistant's voice: chunks placed at their arrival sample, sent as 20 ms frames on time."""

    kind = "audio"

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock
        self.buffer = PlayoutBuffer()
        self._t0: int | None = None
        self._k = 0

    def _now(self) -> int:
        return 0 if self._t0 is None else ns_to_samples(self.clock.now_ns() - self._t0)

    def play(self, pcm: np.ndarray) -> None:
        self.buffer.schedule(pcm, self._now())

    def clear(self) -> None:
        self.buffer.clear(self._now())

    async def recv(self) -> AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._t0 is None:
            self._t0 = self.clock.now_ns()
        k, self._k = self._k, self._k + 1
        await self.clock.sleep_until(self._t0 + (k + 1) * FRAME_NS)
        pcm = np.ascontiguousarray(self.buffer.render(k * FRAME_SAMPLES, FRAME_SAMPLES)).reshape(1, -1)
        frame = AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.sample_rate, frame.pts = SAMPLE_RATE, k * FRAME_SAMPLES
        frame.time_base = fractions.Fraction(1, SAMPLE_RATE)
        return frame


class PeerConnectionLink:
    """One peer connection as the reference's :class:`~server.assistants.serving.CallConnection`."""

    def __init__(self, pc: RTCPeerConnection, start: StartMessage, clock: Clock) -> None:
        self.pc = pc
        self.out = PlayoutTrack(clock)
        self._inbox: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._inbox.put_nowait(json.dumps(start, ensure_ascii=False))
        self._reader: asyncio.Task[None] | None = None

    def hear(self, track: MediaStreamTrack) -> None:
        if track.kind == "audio" and self._reader is None:
            self._reader = asyncio.create_task(self._read(track))

    async def _read(self, track: MediaStreamTrack) -> None:
        resampler = AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        try:
            while True:
                frame = await track.recv()
                for out in resampler.resample(frame):  # type: ignore[arg-type]  # an audio track: AudioFrames
                    self._inbox.put_nowait(to_bytes(np.asarray(out.to_ndarray(), np.int16).reshape(-1)))
        except MediaStreamError:
            self._inbox.put_nowait(None)  # the caller hung up

    async def __aiter__(self) -> AsyncIterator[str | bytes]:
        while (message := await self._inbox.get()) is not None:
            yield message

    async def recv(self) -> str | bytes:
        message = await self._inbox.get()
        if message is None:
            raise ConnectionError("the caller hung up")
        return message

    async def send(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            self.out.play(from_bytes(message))
            return
        event = json.loads(message).get("event")
        if event == "clear":
            self.out.clear()
        elif event == "hangup":
            await self.close()

    async def ping(self) -> Awaitable[float]:
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        done.set_result(0.0)
        return done

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self.out.stop()
        if self._reader is not None:
            self._reader.cancel()
        await self.pc.close()


def create_app(handler: Handler, clock: Clock | None = None) -> web.Application:
    """``POST``/``PATCH /api/offer`` as pipecat's runner; each offer is one call of ``handler``."""
    pcs: dict[str, RTCPeerConnection] = {}
    tasks: set[asyncio.Task[None]] = set()

    async def offer(request: web.Request) -> web.Response:
        try:
            body = await request.json()
            sdp, kind = body["sdp"], body["type"]
            data = body.get("request_data") or {}
        except (ValueError, KeyError, TypeError) as exc:
            return web.json_response(
                {"error": f"not an offer {{sdp, type, request_data}}: {exc}"}, status=400
            )
        pc = RTCPeerConnection()
        call_id, dialogue = data.get("call_id"), data.get("dialogue") or {}
        start: StartMessage = {"event": "start", "call_id": call_id, "dialogue": dialogue}
        link = PeerConnectionLink(pc, start, clock or MonotonicClock())
        pc.on("track", link.hear)
        await pc.setRemoteDescription(RTCSessionDescription(sdp, kind))
        for transceiver in pc.getTransceivers():
            if transceiver.kind == "audio":
                transceiver.sender.replaceTrack(link.out)
                transceiver.direction = "sendrecv"
        await pc.setLocalDescription(await pc.createAnswer())
        pc_id = f"callsim-test-{id(pc):x}"
        pcs[pc_id] = pc

        async def run() -> None:
            with contextlib.suppress(ConnectionError, TimeoutError):
                await asyncio.wait_for(handler(link), CALL_TIMEOUT_S)
            await link.close()
            pcs.pop(pc_id, None)

        task = asyncio.create_task(run())
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return web.json_response({"sdp": pc.localDescription.sdp, "type": "answer", "pc_id": pc_id})

    async def patch(request: web.Request) -> web.Response:
        body = await request.json()
        pc = pcs.get(body.get("pc_id", ""))
        if pc is None:
            return web.json_response({"error": "peer connection not found"}, status=404)
        for c in body.get("candidates", []):
            candidate = candidate_from_sdp(c["candidate"].removeprefix("candidate:"))
            candidate.sdpMid, candidate.sdpMLineIndex = c.get("sdp_mid"), c.get("sdp_mline_index")
            await pc.addIceCandidate(candidate)
        return web.json_response({"status": "success"})

    app = web.Application()
    app.router.add_post("/api/offer", offer)
    app.router.add_patch("/api/offer", patch)
    return app


async def serve_webrtc(handler: Handler, host: str, port: int, banner: str = "{url}") -> None:
    """Serve ``handler`` until SIGINT or SIGTERM; print ``banner`` with the offer URL once listening."""
    if is_loopback_host(host):
        only_loopback_everywhere()
    runner = web.AppRunner(create_app(handler), handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    print(banner.format(url=f"http://{host}:{bound}/api/offer"), flush=True)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
