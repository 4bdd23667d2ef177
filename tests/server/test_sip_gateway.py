"""The SIP gateway on loopback, real sockets: CallSim's own SIP line dials it in front of a raw-PCM assistant
(the echo, or a scripted one served here), and hears it; either side's hang-up ends the call; a call beyond
the gateway's limit is busy."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator

import numpy as np
import pytest

from server.assistants.echo import EchoSettings, start_echo
from server.assistants.serving import CallConnection, serve_pcm
from server.sip_gateway import SipGateway
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.core.clock import MonotonicClock
from voice.errors import CallRefused
from voice.lines.line import CallStart
from voice.lines.sip import SipLine
from voice.lines.sip_message import new_branch, parse_message

pytestmark = pytest.mark.timeout(60)

FRAME = 320


def tone(k: int, hz: float = 440.0, amplitude: int = 8000) -> np.ndarray:
    n = np.arange(k * FRAME, (k + 1) * FRAME)
    return (amplitude * np.sin(2 * np.pi * hz * n / 16000)).astype(np.int16)


async def talk(line: SipLine, frames: int, pcm_of: object = tone) -> None:
    """Send ``frames`` caller frames on a real-time schedule, as the driver does."""
    clock = MonotonicClock(spin_ns=0)
    t0 = clock.now_ns()
    for k in range(frames):
        await clock.sleep_until(t0 + (k + 1) * 20_000_000)
        await line.send(pcm_of(k))  # type: ignore[operator]


async def heard_until(line: SipLine, stop: type, timeout_s: float = 10.0) -> list[LineInput]:
    """What the line gives until an item of type ``stop`` (included)."""
    items: list[LineInput] = []
    async with asyncio.timeout(timeout_s):
        while True:
            item = await line.recv()
            items.append(item)
            if isinstance(item, stop):
                return items


def loud(items: list[LineInput]) -> int:
    return sum(1 for i in items if isinstance(i, AssistantAudio) and int(np.abs(i.pcm).max()) > 1000)


@contextlib.asynccontextmanager
async def echo_gateway(max_calls: int = 8) -> AsyncIterator[SipGateway]:
    server, url = await start_echo(EchoSettings(port=0, delay_ms=100))
    async with server:
        gateway = SipGateway(url, max_calls=max_calls)
        async with gateway:
            yield gateway


async def test_a_sip_call_through_the_gateway_hears_the_echo_and_the_callers_bye_ends_it():
    async with echo_gateway() as gateway:
        line = SipLine(gateway.uri)
        await line.open(CallStart("call-1", {"id": "d"}))
        sender = asyncio.create_task(talk(line, 60))
        got: list[LineInput] = []
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                while loud(got) < 10:
                    got.append(await line.recv())
        await sender
        assert loud(got) >= 10, got[:5]
        assert gateway.active == 1
        await line.close()
        async with asyncio.timeout(5):
            while gateway.active:
                await asyncio.sleep(0.02)
        (call,) = gateway.calls.values()
        assert call.reason == "the caller hung up"
        assert call.media.counts["rtp_received"] > 0


async def scripted(ws: CallConnection, starts: list[dict[str, object]]) -> None:
    """An assistant that says 300 ms of tone, far ahead of real time, then hangs up."""
    starts.append(json.loads(await ws.recv()))
    voice = np.concatenate([tone(k, 660.0) for k in range(15)])
    await ws.send(voice.tobytes())
    await ws.send(json.dumps({"event": "hangup", "reason": "done"}))
    with contextlib.suppress(Exception):
        async for _ in ws:
            pass


async def test_the_assistants_hangup_plays_out_its_audio_then_sends_bye():
    starts: list[dict[str, object]] = []
    server, url = await serve_pcm(lambda ws: scripted(ws, starts))
    async with server, SipGateway(url) as gateway:
        line = SipLine(gateway.uri)
        await line.open(CallStart("call-2", {"id": "dialogue-2", "turns": []}))
        sender = asyncio.create_task(talk(line, 100, lambda k: np.zeros(FRAME, np.int16)))
        items = await heard_until(line, LineClosed)
        sender.cancel()
        await line.close()
    assert starts[0]["call_id"] == "call-2" and starts[0]["dialogue"] == {"id": "dialogue-2", "turns": []}
    audio = [i for i in items if isinstance(i, AssistantAudio)]
    assert 13 <= len(audio) <= 17, len(audio)  # 15 frames of tone, whatever the G.711 and jitter edges
    kinds = [type(i).__name__ if not isinstance(i, AssistantControl) else i.event for i in items]
    assert "hangup" in kinds and kinds.index("hangup") > max(
        k for k, x in enumerate(kinds) if x == "AssistantAudio"
    )


async def test_a_ninth_call_at_once_is_busy():
    async with echo_gateway() as gateway:
        lines = [SipLine(gateway.uri) for _ in range(9)]
        await asyncio.gather(*(line.open(CallStart(f"c{i}", {})) for i, line in enumerate(lines[:8])))
        assert gateway.active == 8
        with pytest.raises(CallRefused) as refused:
            await lines[8].open(CallStart("c8", {}))
        assert refused.value.outcome == "busy"
        await asyncio.gather(*(line.close() for line in lines))
        assert gateway.counts["busy"] == 1


async def test_options_is_answered_and_garbage_is_dropped():
    async with echo_gateway() as gateway:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(2.0)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.sendto(b"\x00\x01 not sip at all", ("127.0.0.1", gateway.port))
            options = (
                f"OPTIONS {gateway.uri} SIP/2.0\r\n"
                f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch={new_branch()};rport\r\n"
                "From: <sip:probe@127.0.0.1>;tag=1\r\nTo: <sip:assistant@127.0.0.1>\r\n"
                "Call-ID: probe-1\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
            )
            s.sendto(options.encode(), ("127.0.0.1", gateway.port))
            answer = await asyncio.to_thread(s.recv, 65535)
        reply = parse_message(answer)
        assert getattr(reply, "status_code", None) == 200
        assert gateway.counts["malformed"] == 1 and not gateway.calls


async def test_an_unreachable_assistant_is_503():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    async with SipGateway(f"ws://127.0.0.1:{port}/pcm") as gateway:
        line = SipLine(gateway.uri)
        with pytest.raises(CallRefused) as refused:
            await line.open(CallStart("c", {}))
        assert "503" in str(refused.value)


async def test_the_builtins_gateway_starts_only_with_a_sip_port_on_one_address():
    from server.config import ServingSettings
    from server.sip_gateway import gateway_in_front
    from voice.errors import ConfigError

    assert await gateway_in_front("ws://127.0.0.1:1/pcm", ServingSettings()) is None
    gateway = await gateway_in_front("ws://127.0.0.1:1/pcm", ServingSettings(port=0, sip_port=0, max_calls=3))
    assert gateway is not None
    try:
        assert (
            gateway.port > 0 and gateway.max_calls == 3 and gateway.uri.startswith("sip:assistant@127.0.0.1:")
        )
    finally:
        await gateway.close()
    with pytest.raises(ConfigError, match="--host"):
        await gateway_in_front("ws://x/pcm", ServingSettings(host="0.0.0.0", token="t", sip_port=0))
