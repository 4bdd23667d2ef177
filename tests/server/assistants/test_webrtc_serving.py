"""The test assistants' WebRTC shell: its playout track on a virtual clock, and the link's messages."""

from __future__ import annotations

import asyncio
import json

import numpy as np
from aiortc import RTCPeerConnection

from server.assistants.webrtc_serving import PeerConnectionLink, PlayoutTrack
from voice.core.audio import FRAME_SAMPLES, to_bytes
from voice.core.clock import VirtualClock

TONE = np.full(100, 5000, np.int16)


async def test_a_chunk_plays_from_the_sample_it_arrived_at_and_frames_leave_on_time() -> None:
    clock = VirtualClock()
    track = PlayoutTrack(clock)
    first = await track.recv()  # frame 0 leaves once its 20 ms have passed
    assert clock.now_ns() == 20_000_000 and first.pts == 0
    clock.advance(5_000_000)  # 25 ms: sample 400, inside frame 1
    track.play(TONE)
    frame = await track.recv()
    pcm = frame.to_ndarray().reshape(-1)
    assert frame.pts == FRAME_SAMPLES and clock.now_ns() == 40_000_000
    assert not pcm[: 400 - FRAME_SAMPLES].any() and (pcm[80:180] == 5000).all() and not pcm[180:].any()


async def test_clear_drops_what_has_not_played() -> None:
    clock = VirtualClock()
    track = PlayoutTrack(clock)
    await track.recv()
    track.play(np.full(3 * FRAME_SAMPLES, 5000, np.int16))
    await track.recv()  # one frame of it played
    track.clear()
    assert not (await track.recv()).to_ndarray().any()


async def test_the_link_speaks_the_websocket_messages_of_the_reference() -> None:
    pc = RTCPeerConnection()
    link = PeerConnectionLink(pc, {"event": "start", "dialogue": {"reference": {}}}, VirtualClock())
    assert json.loads(await link.recv())["event"] == "start"  # the offer's request_data, as a start
    await link.send(to_bytes(TONE))
    assert link.out.buffer.pending(0) == len(TONE)
    await link.send(json.dumps({"event": "clear"}))
    assert link.out.buffer.pending(0) == 0
    assert await asyncio.wait_for(await link.ping(), 1) == 0.0
    await link.close()
    assert link.out.readyState == "ended"
