"""The lines' playout mirror and flood limit, and the flood limit on the raw PCM line."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from websockets.asyncio.server import serve

from voice.core.call import AssistantAudio, LineClosed
from voice.lines.base import CallStart
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.wsutil import FloodGuard, PlayoutMirror, closed_reason

S = 1_000_000_000  # one second in ns


def test_the_mirror_schedules_like_the_playout_buffer() -> None:
    m = PlayoutMirror()
    assert m.end_ns(5 * S) == 5 * S and m.queued_s(5 * S) == 0
    assert m.add(16000, 0) == S  # 1 s arriving at 0 plays until 1 s
    assert m.add(8000, S // 4) == S + S // 2  # queued behind it
    assert m.queued_s(S) == 0.5
    assert m.add(16000, 3 * S) == 4 * S  # after a gap it starts on arrival
    m.clear(3 * S + S // 2)
    assert m.end_ns(3 * S) == 3 * S + S // 2 and m.queued_s(4 * S) == 0


def test_the_flood_guard_allows_a_minute_ahead() -> None:
    g = FloodGuard(max_queued_s=60)
    assert all(g.audio(16000, 0) is None for _ in range(60))
    reason = g.audio(16000, 0)
    assert reason is not None and reason.startswith("protocol_error: flood")
    g = FloodGuard(max_queued_s=2)
    assert g.audio(32000, 0) is None
    g.clear(0)  # a clear empties the queue
    assert g.audio(32000, 0) is None
    assert g.audio(16000, S) is None  # 1 s played meanwhile


async def test_the_pcm_line_ends_a_flooding_call() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv()
        for _ in range(70):
            await ws.send(bytes(32000))  # 1 s each
        await asyncio.sleep(1)

    server = await serve(bot, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        line = PcmWebsocketLine(f"ws://127.0.0.1:{port}/pcm")
        await line.open(CallStart("c", {}))
        items = [await asyncio.wait_for(line.recv(), 5) for _ in range(61)]
        assert all(isinstance(i, AssistantAudio) for i in items[:60])
        assert isinstance(items[60], LineClosed) and "flood" in items[60].reason
        await line.send(np.zeros(320, np.int16))
        await line.close()


def test_closed_reason_blames_the_bot_only_when_callsim_failed_the_connection() -> None:
    from websockets.exceptions import ConnectionClosedError
    from websockets.frames import Close

    ours = ConnectionClosedError(None, Close(1008, "stopped reading (2048 KiB unsent)"))
    assert closed_reason(ours) == "protocol_error: stopped reading (2048 KiB unsent)"
    too_big = ConnectionClosedError(Close(1009, ""), Close(1009, ""), rcvd_then_sent=False)
    assert closed_reason(too_big).startswith("protocol_error: message larger than")
    echoed = ConnectionClosedError(Close(1002, "bad"), Close(1002, "bad"), rcvd_then_sent=True)
    assert closed_reason(echoed) == "closed by assistant (code 1002: bad)"  # the bot closed first
    assert closed_reason(ConnectionClosedError(None, None)) == "connection lost (no close frame)"
