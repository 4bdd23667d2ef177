"""The echo assistant used by scripts/bench_capacity: its delay line, its framing, and a real call."""

from __future__ import annotations

import asyncio
import json
import os

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.frames import apply_mask

from server.assistants.echo import EchoBuffer, EchoSettings, FrameCodec, start_echo
from voice.core.call import AssistantAudio, LineClosed
from voice.lines.base import CallStart
from voice.lines.pcm import PcmWebsocketLine


def frame(value: int) -> bytes:
    return np.full(320, value, dtype="<i2").tobytes()


def test_echo_buffer_returns_each_frame_after_the_delay():
    buf = EchoBuffer(2)
    out = [buf.push(frame(k)) for k in range(1, 6)]
    assert out == [None, None, frame(1), frame(2), frame(3)]


def test_echo_buffer_can_join_frames_and_leave_silence_out():
    buf = EchoBuffer(0, chunk_frames=2)
    assert [buf.push(frame(k)) for k in (1, 2, 3)] == [None, frame(1) + frame(2), None]
    quiet = EchoBuffer(1, skip_silence=True)
    assert [quiet.push(frame(k)) for k in (0, 5, 0, 0)] == [None, None, frame(5), None]
    with pytest.raises(ValueError):
        EchoBuffer(-1)


def _client_frame(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    """A masked client frame, as RFC 6455 requires of a client."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    mask = os.urandom(4)
    return head + mask + apply_mask(payload, mask)


def test_frame_codec_parses_masked_frames_split_anywhere():
    big = bytes(range(256)) * 300  # 76,800 bytes: a 64-bit length
    wire = _client_frame(2, frame(7)) + _client_frame(1, b'{"event":"stop"}') + _client_frame(2, big)
    codec = FrameCodec()
    got: list[tuple[int, bool, bytes]] = []
    for i in range(0, len(wire), 97):
        got += codec.feed(wire[i : i + 97])
    assert got == [(2, True, frame(7)), (1, True, b'{"event":"stop"}'), (2, True, big)]
    with pytest.raises(ValueError):
        FrameCodec(max_size=100).feed(_client_frame(2, bytes(200)))


def test_frame_codec_builds_unmasked_server_frames():
    for n in (5, 640, 70_000):
        payload = bytes(n)
        wire = FrameCodec.frame(2, payload)
        assert wire[0] == 0x82 and wire.endswith(payload) and not wire[1] & 0x80
        assert len(wire) == n + {5: 2, 640: 4, 70_000: 10}[n]


async def test_a_call_on_the_pcm_line_hears_its_own_audio_back_after_the_delay():
    server = await start_echo(EchoSettings(port=0, delay_ms=40))
    port = server.sockets[0].getsockname()[1]
    async with server:
        line = PcmWebsocketLine(f"ws://127.0.0.1:{port}/pcm")
        await line.open(CallStart("c", {"id": "d"}))
        for k in range(1, 6):
            await line.send(np.full(320, k, dtype=np.int16))
        heard = [await asyncio.wait_for(line.recv(), 5) for _ in range(3)]
        assert all(isinstance(x, AssistantAudio) for x in heard)
        assert [int(x.pcm[0]) for x in heard if isinstance(x, AssistantAudio)] == [1, 2, 3]
        await line.hangup("completed")
        assert isinstance(await asyncio.wait_for(line.recv(), 5), LineClosed)


async def test_stop_closes_the_call_and_pings_are_answered():
    server = await start_echo(EchoSettings(port=0, delay_ms=0))
    port = server.sockets[0].getsockname()[1]
    async with server, connect(f"ws://127.0.0.1:{port}/pcm", ping_interval=None) as ws:
        await ws.send(json.dumps({"event": "start", "call_id": "c"}))
        await asyncio.wait_for(await ws.ping(b"hi"), 5)
        await ws.send(frame(3))
        assert await asyncio.wait_for(ws.recv(), 5) == frame(3)
        await ws.send(json.dumps({"event": "stop", "reason": "completed"}))
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 1000
