"""The Twilio Media Streams line against plain websocket bots on localhost, and its message parser."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import serve

from tests.fakes import plan, turn
from voice.core import events as ev
from voice.core.call import AssistantAudio, AssistantControl, CallCore, LineClosed, LineInput, PlayoutMark
from voice.errors import LineError
from voice.lines.codec import mulaw_encode
from voice.lines.line import CallStart
from voice.lines.twilio import StreamIds, TwilioLine, Violation, parse_twilio_message

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
    ended = asyncio.Event()

    async def bot(ws: Any) -> None:
        async for message in ws:
            got.append(json.loads(message))
        ended.set()  # CallSim closed the socket: every message it sent is in

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        for _ in range(3):
            await line.send(np.full(320, 2000, dtype=np.int16))
        await line.hangup("completed")
        await asyncio.wait_for(ended.wait(), 5)
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
        await ws.wait_closed()

    server, url = await _server(bot)
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        a, b, m, c, log, unknown = await recv_until(line, 6)
        assert isinstance(a, AssistantAudio) and len(a.pcm) == 320
        assert abs(int(a.pcm[100]) - 1000) < 60  # mu-law round trip, upsampled to 16 kHz
        assert isinstance(b, AssistantAudio) and len(b.pcm) == 14
        assert m == PlayoutMark("m1")  # in order with the audio: the core plays it
        assert c == AssistantControl("clear")
        assert log == AssistantControl("log", {"kind": "reply", "text": "好的"})
        assert unknown == AssistantControl("unknown", {"event": "dtmf_please", "x": 1})
        await line.close()


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


async def test_marks_are_answered_when_the_core_has_played_their_audio_and_at_once_on_clear() -> None:
    frames: list[int] = []  # media frames CallSim has sent, as the bot counts them
    echoes: list[tuple[dict[str, Any], int]] = []  # (CallSim's mark message, media frames before it)

    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        await ws.send(media(8000))  # 1 s
        await ws.send(mark("after-1s"))
        async for message in ws:
            event = json.loads(message)
            if event["event"] == "media":
                frames.append(int(event["media"]["chunk"]))
            elif event["event"] == "mark":
                echoes.append((event, len(frames)))
                if event["mark"]["name"] == "after-1s":
                    await ws.send(media(8000))
                    await ws.send(mark("cleared"))
                    await ws.send(CLEAR)

    async def take(n: int) -> None:  # what the line delivered, to the core at the start of the next frame
        for item in await recv_until(line, n):
            core.receive(item, core.now)

    async def frame() -> tuple[str, ...]:  # one frame as the driver runs it
        tick = core.tick()
        if tick.marks:
            await line.played(tick.marks)
        await line.send(tick.caller)
        return tick.marks

    server, url = await _server(bot)
    async with server:
        core = CallCore(plan(turn(0), response_timeout_ms=60_000))
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        await take(2)  # the second of audio and its mark, at sample 0
        assert [await frame() for _ in range(49)] == [()] * 49
        await until(lambda: len(frames) == 49)
        assert echoes == []  # 49 frames heard, the audio ends with the next one
        assert await frame() == ("after-1s",)  # frame 49 ends at 1 s: answered before it goes out
        await take(3)  # the bot's next second of audio, its mark, its clear
        assert await frame() == ("cleared",)  # the clear dropped that audio: answered at once
        await until(lambda: len(echoes) == 2 and len(frames) == 51)
        assert [(e["mark"]["name"], n) for e, n in echoes] == [("after-1s", 49), ("cleared", 50)]
        shape = {"event": "mark", "sequenceNumber": "51", "streamSid": SID, "mark": {"name": "after-1s"}}
        assert echoes[0][0] == shape  # as Twilio sends it, numbered in line with the media
        assert line.marks_echoed == ["after-1s", "cleared"]
        assert [e for e in core.events if isinstance(e, ev.MarkPlayed)] == [
            ev.MarkPlayed(16000, "after-1s", at=16000),
            ev.MarkPlayed(16320, "cleared", at=16000),
        ]
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
    ],
)
def test_protocol_violations_are_named(message: str | bytes, reason: str) -> None:
    parsed = parse_twilio_message(message, SID)
    assert isinstance(parsed, Violation)
    assert parsed.reason.startswith("protocol_error: ") and reason in parsed.reason


def serve_then_wait(*messages: str) -> Callable[[Any], Awaitable[None]]:
    """A bot that sends ``messages`` after CallSim's first two, then waits for CallSim to close."""

    async def bot(ws: Any) -> None:
        await ws.recv(), await ws.recv()
        for m in messages:
            await ws.send(m)
        await ws.wait_closed()

    return bot


@pytest.mark.parametrize(
    ("message", "reason"), [("{not json", "malformed JSON"), ("x" * (1 << 21), "larger than")]
)
async def test_a_violation_ends_the_call_after_what_came_before_and_the_line_stays_closed(
    message: str, reason: str
) -> None:
    server, url = await _server(serve_then_wait(media(160), message, media(160)))
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
        assert await line.recv() == item  # and it stays closed: nothing after the violation is taken
        await line.send(np.zeros(320, np.int16))  # sending after the end is harmless
        await line.played(("late",))  # and so is answering a mark
        assert line.marks_echoed == []
        await line.close()


async def test_a_flood_of_pending_marks_ends_the_call() -> None:
    marks = [mark(f"m{i}") for i in range(1100)]
    server, url = await _server(serve_then_wait(*marks))
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        items = []
        while not isinstance(item := await asyncio.wait_for(line.recv(), 5), LineClosed):
            items.append(item)
        assert len(items) == 1000 and all(isinstance(i, PlayoutMark) for i in items)
        assert item.reason == "protocol_error: flood: over 1000 marks pending"
        await line.close()


async def test_a_flood_of_unknown_events_is_passed_on_for_the_core_to_cap() -> None:
    spam = [json.dumps({"event": "spam", "i": i}) for i in range(1100)]
    server, url = await _server(serve_then_wait(*spam, mark("end")))
    async with server:
        line = TwilioLine(url)
        await line.open(CallStart("c1", VIEW))
        items = [await asyncio.wait_for(line.recv(), 5) for _ in range(1101)]
        assert items[-1] == PlayoutMark("end")  # the line is still open after them
        assert items[1099] == AssistantControl("unknown", {"event": "spam", "i": 1099})
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
    with pytest.raises(LineError, match=r"cannot connect to ws://\*\*\*@") as caught:  # credentials redacted
        await TwilioLine(url.replace("ws://", "ws://u:PW1@") + "?key=K3Y", open_timeout_s=2).open(
            CallStart("c", {})
        )
    assert "PW1" not in str(caught.value) and "K3Y" not in str(caught.value)


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
