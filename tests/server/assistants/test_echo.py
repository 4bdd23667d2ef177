"""The echo assistant used by scripts/bench_capacity: its delay line, its limits, and a real call."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from websockets.asyncio.client import connect

from server.assistants.echo import EchoBuffer, EchoSettings, start_echo
from voice.core.call import AssistantAudio, LineClosed
from voice.lines.line import CallStart
from voice.lines.pcm import MAX_MESSAGE_BYTES, PcmWebsocketLine


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


async def test_a_message_over_the_protocols_limit_closes_the_call():
    server, url = await start_echo(EchoSettings(port=0, delay_ms=0))
    async with server, connect(url, ping_interval=None, max_size=None) as ws:
        await ws.send(bytes(MAX_MESSAGE_BYTES + 2))
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 1009  # message too big


async def test_a_call_on_the_pcm_line_hears_its_own_audio_back_after_the_delay():
    server, url = await start_echo(EchoSettings(port=0, delay_ms=40))
    async with server:
        line = PcmWebsocketLine(url)
        await line.open(CallStart("c", {"id": "d"}))
        for k in range(1, 6):
            await line.send(np.full(320, k, dtype=np.int16))
        heard = [await asyncio.wait_for(line.recv(), 5) for _ in range(3)]
        assert all(isinstance(x, AssistantAudio) for x in heard)
        assert [int(x.pcm[0]) for x in heard if isinstance(x, AssistantAudio)] == [1, 2, 3]
        await line.hangup("completed")
        assert isinstance(await asyncio.wait_for(line.recv(), 5), LineClosed)


async def test_stop_closes_the_call_and_pings_are_answered():
    server, url = await start_echo(EchoSettings(port=0, delay_ms=0))
    async with server, connect(url, ping_interval=None) as ws:
        await ws.send(json.dumps({"event": "start", "call_id": "c"}))
        await asyncio.wait_for(await ws.ping(b"hi"), 5)
        await ws.send(frame(3))
        assert await asyncio.wait_for(ws.recv(), 5) == frame(3)
        await ws.send(json.dumps({"event": "stop", "reason": "completed"}))
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 1000
