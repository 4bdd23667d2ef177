"""The Twilio Media Streams line against plain websocket bots on localhost."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import serve

from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.core.clock import VirtualClock
from voice.errors import LineError
from voice.lines.base import CallStart
from voice.lines.codec import mulaw_encode
from voice.lines.twilio import StreamIds, TwilioLine

VIEW = {"id": "d1", "scenario": "takeout", "preset": {"type": "none", "text": ""}, "owner_goal": "外卖"}
SID = StreamIds.for_call("c1").stream_sid


async def _server(handler: Any) -> tuple[Any, str]:
    server = await serve(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"ws://127.0.0.1:{port}/twilio"


def media(n_bytes: int, value: int = 1000, sid: str = SID) -> str:
    payload = mulaw_encode(np.full(n_bytes, value, dtype=np.int16))
    return json.dumps(
        {"event": "media", "streamSid": sid, "media": {"payload": base64.b64encode(payload).decode()}}
    )


def mark(name: str) -> str:
    return json.dumps({"event": "mark", "streamSid": SID, "mark": {"name": name}})


CLEAR = json.dumps({"event": "clear", "streamSid": SID})


async def recv_until(line: TwilioLine, n: int, timeout: float = 5.0) -> list[LineInput]:
    return [await asyncio.wait_for(line.recv(), timeout) for _ in range(n)]


async def test_handshake_media_and_stop_are_twilio_shaped() -> None:
    got: list[dict[str, Any]] = []

    async def bot(ws: Any) -> None:
        async for message in ws:
            got.append(json.loads(message))

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        for _ in range(3):
            await line.send(np.full(320, 2000, dtype=np.int16))
        await line.hangup("completed")
        await asyncio.sleep(0.2)
    connected, start, *frames, stop = got
    assert connected == {"event": "connected", "protocol": "Call", "version": "1.0.0"}
    assert start["event"] == "start" and start["sequenceNumber"] == "1" and start["streamSid"] == SID
    s = start["start"]
    assert s["streamSid"] == SID and s["callSid"].startswith("CA") and s["accountSid"].startswith("AC")
    assert s["mediaFormat"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    assert s["tracks"] == ["inbound"]
    assert s["customParameters"]["call_id"] == "c1"
    assert json.loads(s["customParameters"]["dialogue"]) == VIEW
    assert [f["sequenceNumber"] for f in frames] == ["2", "3", "4"]
    assert [f["media"]["chunk"] for f in frames] == ["1", "2", "3"]
    assert [f["media"]["timestamp"] for f in frames] == ["0", "20", "40"]
    assert all(f["media"]["track"] == "inbound" and f["streamSid"] == SID for f in frames)
    assert all(len(base64.b64decode(f["media"]["payload"])) == 160 for f in frames)
    assert stop == {
        "event": "stop",
        "sequenceNumber": "5",
        "streamSid": SID,
        "stop": {"accountSid": s["accountSid"], "callSid": s["callSid"]},
    }


async def test_bot_media_clear_mark_and_log_become_line_inputs() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        await ws.send(media(160))
        await ws.send(media(7))  # any size is fine
        await ws.send(media(0))  # an empty payload is nothing
        await ws.send(mark("m1"))
        await ws.send(CLEAR)
        await ws.send(json.dumps({"event": "log", "kind": "reply", "text": "好的"}))
        await ws.send(json.dumps({"event": "dtmf_please", "x": 1}))
        await asyncio.sleep(1)

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        a, b, m, c, log, unknown = await recv_until(line, 6)
        assert isinstance(a, AssistantAudio) and len(a.pcm) == 320
        assert abs(int(a.pcm[100]) - 1000) < 60  # mu-law round trip, upsampled to 16 kHz
        assert isinstance(b, AssistantAudio) and len(b.pcm) == 14
        assert m == AssistantControl("mark", {"name": "m1"})
        assert c == AssistantControl("clear")
        assert log == AssistantControl("log", {"kind": "reply", "text": "好的"})
        assert unknown == AssistantControl("unknown", {"event": "dtmf_please", "x": 1})
        await line.close()


async def test_marks_are_answered_when_their_audio_has_played_and_at_once_on_clear() -> None:
    clock = VirtualClock(auto_advance=False)
    echoes: list[tuple[str, int]] = []  # (name, media frames CallSim had sent before the echo)

    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        await ws.send(media(8000))  # 1 s
        await ws.send(mark("after-1s"))
        frames = 0
        async for message in ws:
            event = json.loads(message)
            if event["event"] == "media":
                frames += 1
            elif event["event"] == "mark":
                echoes.append((event["mark"]["name"], frames))
                if event["mark"]["name"] == "after-1s":
                    await ws.send(media(8000))
                    await ws.send(mark("cleared"))
                    await ws.send(CLEAR)

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url, clock=clock)
        await line.open(CallStart("c1", VIEW))
        await recv_until(line, 2)  # audio, mark: delivered at t=0, the mark plays at t=1 s
        for _ in range(50):
            await line.send(np.zeros(320, np.int16))
            clock.advance(20_000_000)
        await asyncio.sleep(0.1)
        assert echoes == []  # 49 frames sent, t = 1 s: not yet answered
        await line.send(np.zeros(320, np.int16))  # due now: answered before this frame
        played = await asyncio.wait_for(line.recv(), 5)
        assert played == AssistantControl("mark_played", {"name": "after-1s", "by": "callsim"})
        await recv_until(line, 3)  # the next second of audio, its mark, the clear
        await line.send(np.zeros(320, np.int16))
        await asyncio.sleep(0.1)
        assert echoes == [("after-1s", 50), ("cleared", 51)]
        assert line.marks_echoed == ["after-1s", "cleared"]
        await line.close()


async def test_a_mark_with_nothing_queued_is_answered_with_the_next_frame() -> None:
    echoed = asyncio.Event()

    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        await ws.send(mark("now"))
        async for message in ws:
            if json.loads(message)["event"] == "mark":
                echoed.set()

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        assert await asyncio.wait_for(line.recv(), 5) == AssistantControl("mark", {"name": "now"})
        await line.send(np.zeros(320, np.int16))
        await asyncio.wait_for(echoed.wait(), 5)
        await line.close()


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("{not json", "malformed JSON"),
        ("[1, 2]", "string 'event'"),
        (b"\x00\x01", "binary message"),
        (json.dumps({"event": "media", "media": {"payload": "@@not base64@@"}}), "not base64"),
        (json.dumps({"event": "media", "media": {"payload": 5}}), "media.payload"),
        (json.dumps({"event": "media"}), "media.payload"),
        (json.dumps({"event": "mark", "mark": {}}), "mark.name"),
        (media(160, sid="MZ-someone-else"), "for stream"),
        ("[" * 100_000, "malformed JSON"),
        ("x" * (1 << 21), "larger than"),
    ],
)
async def test_protocol_violations_end_the_call_with_a_reason(message: str | bytes, reason: str) -> None:
    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        await ws.send(media(160))
        await ws.send(message)
        await asyncio.sleep(1)

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        first, item = await recv_until(line, 2)
        assert isinstance(first, AssistantAudio)
        assert (
            isinstance(item, LineClosed)
            and item.reason.startswith("protocol_error")
            and reason in item.reason
        )
        assert await line.recv() == item  # and it stays closed
        await line.send(np.zeros(320, np.int16))  # sending after the end is harmless
        await line.close()


async def test_a_flood_of_audio_ends_the_call() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        for _ in range(70):  # 70 s of audio at once
            await ws.send(media(8000))
        await asyncio.sleep(1)

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        items = [await asyncio.wait_for(line.recv(), 5) for _ in range(62)]
        closed = [i for i in items if isinstance(i, LineClosed)]
        assert closed and "flood" in closed[0].reason and closed[0].reason.startswith("protocol_error")
        assert sum(isinstance(i, AssistantAudio) for i in items) == 60  # a minute is allowed
        await line.close()


async def test_a_flood_of_unknown_events_ends_the_call() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        for i in range(1100):
            await ws.send(json.dumps({"event": "spam", "i": i}))
        await asyncio.sleep(1)

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        while not isinstance(item := await asyncio.wait_for(line.recv(), 5), LineClosed):
            assert isinstance(item, AssistantControl) and item.event == "unknown"
        assert "flood" in item.reason
        await line.close()


async def test_the_bot_closing_mid_call_is_a_line_closed() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        await ws.close(code=1011, reason="boom")

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        item = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(item, LineClosed) and "1011" in item.reason and "boom" in item.reason
        await line.send(np.zeros(320, dtype=np.int16))
        await line.close()


async def test_nobody_listening_is_a_line_error() -> None:
    server, url = await _server(lambda ws: asyncio.sleep(0))
    server.close()
    await server.wait_closed()
    with pytest.raises(LineError, match="cannot connect"):
        await TwilioLine(url, open_timeout_s=2).open(CallStart("c", {}))


async def test_recv_before_open_and_after_close() -> None:
    line = TwilioLine("ws://127.0.0.1:9/x")
    assert isinstance(await line.recv(), LineClosed)
    await line.send(np.zeros(320, np.int16))
    await line.hangup("x")


async def test_a_normal_close_is_the_bots_hang_up() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        await ws.send(media(160))
        await ws.close(code=1000, reason="bye")

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        audio, hangup, closed = await recv_until(line, 3)
        assert isinstance(audio, AssistantAudio)
        assert hangup == AssistantControl(
            "hangup", {"reason": "the bot closed the stream (code 1000)", "detail": "bye"}
        )
        assert isinstance(closed, LineClosed) and "1000" in closed.reason
        await line.close()
