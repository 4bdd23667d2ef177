"""A WebRTC caller made of aiortc alone, for the server's WebRTC tests (``test_webrtc_route.py``,
``test_webrtc_call.py``): a real Opus track out carrying 20 ms frames at real time (silence, or the speech
queued), the assistant's track in, recorded as it arrives; host candidates on loopback only, no STUN; and the
signalling as pipecat's runner takes it (plain HTTP, JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import json
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import av
import numpy as np
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

from tests.server.assistant_client import SILENT_RMS, rms
from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm
from voice.lines.webrtc_ice import gather_on

LOOPBACK = ("127.0.0.1",)
HTTP_TIMEOUT = 15.0


class SpeechTrack(MediaStreamTrack):
    """The caller's microphone: 20 ms frames at real time, silence unless speech is queued."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._frames: deque[tuple[np.ndarray, asyncio.Future[float] | None]] = deque()
        self._t0: float | None = None
        self._pts = 0

    def say(self, pcm: Pcm) -> asyncio.Future[float]:
        """Queue speech; the future gets the monotonic time its last frame went out."""
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        padded = np.zeros(-(-len(pcm) // FRAME_SAMPLES) * FRAME_SAMPLES, dtype=np.int16)
        padded[: len(pcm)] = pcm
        chunks = [padded[i : i + FRAME_SAMPLES] for i in range(0, len(padded), FRAME_SAMPLES)]
        self._frames.extend((c, done if i == len(chunks) - 1 else None) for i, c in enumerate(chunks))
        return done

    async def recv(self) -> av.AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._t0 is None:
            self._t0 = time.monotonic()
        await asyncio.sleep(max(0.0, self._t0 + self._pts / SAMPLE_RATE - time.monotonic()))
        samples, done = self._frames.popleft() if self._frames else (np.zeros(FRAME_SAMPLES, np.int16), None)
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, SAMPLE_RATE)
        self._pts += FRAME_SAMPLES
        if done is not None and not done.done():
            done.set_result(time.monotonic() + FRAME_SAMPLES / SAMPLE_RATE)
        return frame


@dataclass
class Caller:
    """One WebRTC call from the caller's side: its peer connection, microphone and what it heard."""

    pc: RTCPeerConnection
    mic: SpeechTrack
    answer: dict[str, Any] = field(default_factory=dict)
    heard: list[tuple[float, np.ndarray]] = field(default_factory=list)  # (arrival, 16 kHz mono PCM)
    events: list[dict[str, Any]] = field(default_factory=list)  # JSON on the data channel, if one was opened
    _reader: asyncio.Task[None] | None = None

    def on_message(self, message: str | bytes) -> None:
        self.events.append(json.loads(message))

    def said(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == event]

    def start_listening(self, track: MediaStreamTrack) -> None:
        self._reader = asyncio.create_task(self._listen(track))

    async def _listen(self, track: MediaStreamTrack) -> None:
        resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        with contextlib.suppress(MediaStreamError):
            while True:
                frame = await track.recv()
                for out in resampler.resample(frame):
                    self.heard.append((time.monotonic(), out.to_ndarray().reshape(-1).copy()))

    async def first_audio_after(self, t: float, timeout: float) -> float:
        """When the first audible 20 ms of the assistant arrived after ``t``."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for at, pcm in self.heard[seen:]:
                if at >= t and rms(pcm.tobytes()) > SILENT_RMS:
                    return at
            seen = len(self.heard)
            await asyncio.sleep(0.02)
        raise AssertionError(f"no audio from the assistant within {timeout:g} s")

    async def until_quiet(self, quiet_secs: float = 0.8, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            loud = [at for at, pcm in self.heard if rms(pcm.tobytes()) > SILENT_RMS]
            if time.monotonic() - (loud[-1] if loud else 0.0) >= quiet_secs:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the assistant never stopped talking")

    def audio_seconds(self, a: float, b: float) -> float:
        return (
            sum(len(p) for at, p in self.heard if a <= at < b and rms(p.tobytes()) > SILENT_RMS) / SAMPLE_RATE
        )

    def quiet_from(self, t: float, span: float = 0.3) -> float | None:
        """The first arrival at or after ``t`` from which ``span`` seconds of what arrived were silent."""
        start: float | None = None
        for at, pcm in self.heard:
            if at < t:
                continue
            if rms(pcm.tobytes()) > SILENT_RMS:
                start = None
            elif start is None:
                start = at
            elif at - start >= span:
                return start
        return None

    async def wait_state(self, state: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.pc.connectionState != state and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return self.pc.connectionState == state

    async def close(self) -> None:
        await asyncio.wait_for(self.pc.close(), 10)
        if self._reader is not None:
            await asyncio.wait([self._reader], timeout=5)


def local_candidates(pc: RTCPeerConnection) -> list[str]:
    return [
        c.ip
        for t in pc.getTransceivers()
        for c in t.sender.transport.transport.iceGatherer.getLocalCandidates()
    ]


def sdp_candidates(sdp: str) -> list[str]:
    return [line.split()[4] for line in sdp.splitlines() if line.startswith("a=candidate:")]


async def http(
    method: str, url: str, body: Any, headers: Mapping[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    """One request (JSON, or bytes as they are); the status and the JSON answer."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})}
    )

    def send() -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    return await asyncio.to_thread(send)


async def offer_sdp(audio: bool = True) -> str:
    """A real aiortc offer (loopback candidates): with an audio track, or only a data channel."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    try:
        if audio:
            pc.addTransceiver("audio")
        else:
            pc.createDataChannel("chat")
        with gather_on(LOOPBACK):
            await pc.setLocalDescription(await pc.createOffer())
        return pc.localDescription.sdp
    finally:
        await pc.close()


async def dial(url: str, request_data: Mapping[str, Any], *, data_channel: bool = False) -> Caller:
    """Offer a call with ``request_data`` and connect (host candidates on loopback, no STUN); with
    ``data_channel`` the caller opens one, and the assistant's events arrive on it."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    caller = Caller(pc, SpeechTrack())
    pc.addTrack(caller.mic)
    pc.on("track", caller.start_listening)
    if data_channel:
        pc.createDataChannel("events").on("message", caller.on_message)
    with gather_on(LOOPBACK):
        await pc.setLocalDescription(await pc.createOffer())
    body = {
        "sdp": pc.localDescription.sdp,
        "type": "offer",
        "pc_id": None,
        "request_data": dict(request_data),
    }
    status, answer = await http("POST", url, body)
    assert status == 200, answer
    caller.answer = answer
    await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
    assert await caller.wait_state("connected", 10), pc.connectionState
    return caller
