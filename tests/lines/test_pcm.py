"""The raw PCM line against real websocket servers on localhost, and its message parser."""

import asyncio
import json

import numpy as np
import pytest
from websockets.asyncio.server import serve

from voice.core.call import AssistantAudio, AssistantControl, LineClosed
from voice.errors import LineError
from voice.lines.line import CallStart
from voice.lines.pcm import PcmWebsocketLine, parse_pcm_message


async def _server(handler):
    server = await serve(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"ws://127.0.0.1:{port}/pcm"


async def test_start_audio_control_and_stop_round_trip():
    got: list = []

    async def handler(ws):
        start = json.loads(await ws.recv())
        got.append(start)
        frame = await ws.recv()
        got.append(frame)
        await ws.send(np.arange(4, dtype="<i2").tobytes())
        await ws.send(json.dumps({"event": "clear"}))
        got.append(json.loads(await ws.recv()))

    server, url = await _server(handler)
    async with server:
        line = PcmWebsocketLine(url)
        await line.open(CallStart("c1", {"id": "d1", "preset": {"type": "none", "text": ""}}))
        await line.send(np.ones(320, dtype=np.int16))
        audio = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(audio, AssistantAudio) and list(audio.pcm) == [0, 1, 2, 3]
        ctl = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(ctl, AssistantControl) and ctl.event == "clear"
        await line.hangup("completed")
        closed = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(closed, LineClosed)
    start, frame, stop = got
    assert start["event"] == "start" and start["call_id"] == "c1" and start["sample_rate"] == 16000
    assert start["dialogue"]["id"] == "d1"
    assert len(frame) == 640
    assert stop == {"event": "stop", "reason": "completed"}


@pytest.mark.parametrize(
    ("payload", "reason"),
    [(b"\x00\x01\x02", "odd number of bytes"), ("{not json", "malformed JSON"), ('["x"]', "string 'event'")],
)
def test_protocol_violations_are_named(payload, reason):
    item = parse_pcm_message(payload)
    assert (
        isinstance(item, LineClosed) and item.reason.startswith("protocol_error: ") and reason in item.reason
    )


async def test_a_violation_ends_the_call_after_what_came_before_and_the_line_stays_closed():
    async def handler(ws):
        await ws.recv()
        await ws.send(np.arange(4, dtype="<i2").tobytes())
        await ws.send("{not json")
        await ws.send(np.arange(4, dtype="<i2").tobytes())
        await ws.wait_closed()

    server, url = await _server(handler)
    async with server:
        line = PcmWebsocketLine(url)
        await line.open(CallStart("c", {}))
        audio = await asyncio.wait_for(line.recv(), 5)
        item = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(audio, AssistantAudio)
        assert isinstance(item, LineClosed) and item.reason.startswith("protocol_error: malformed JSON")
        assert await line.recv() == item  # it stays closed: nothing after the violation is taken
        await line.send(np.zeros(320, dtype=np.int16))  # sending after the end is harmless
        await line.close()


async def test_assistant_closing_mid_call_is_a_line_closed_not_an_exception():
    async def handler(ws):
        await ws.recv()
        await ws.close(code=1011, reason="boom")

    server, url = await _server(handler)
    async with server:
        line = PcmWebsocketLine(url)
        await line.open(CallStart("c", {}))
        item = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(item, LineClosed) and "1011" in item.reason and "boom" in item.reason
        await line.send(np.zeros(320, dtype=np.int16))  # sending after close is harmless
        await line.close()


async def test_nobody_listening_is_a_line_error():
    server, url = await _server(lambda ws: asyncio.sleep(0))
    server.close()
    await server.wait_closed()
    with pytest.raises(LineError, match="cannot connect"):
        await PcmWebsocketLine(url, open_timeout_s=2).open(CallStart("c", {}))


async def test_a_connect_error_names_the_target_with_its_credentials_redacted():
    server, url = await _server(lambda ws: asyncio.sleep(0))
    server.close()
    await server.wait_closed()
    secret_url = url.replace("ws://", "ws://user:PW1@") + "?token=T0K"
    with pytest.raises(LineError, match=r"cannot connect to ws://\*\*\*@127\.0\.0\.1") as caught:
        await PcmWebsocketLine(secret_url, open_timeout_s=2).open(CallStart("c", {}))
    assert "PW1" not in str(caught.value) and "T0K" not in str(caught.value)


async def test_headers_reach_the_assistant_on_the_upgrade():
    seen = []

    async def note(ws):
        seen.append(ws.request.headers.get("Authorization"))
        await ws.recv()

    server, url = await _server(note)
    async with server:
        line = PcmWebsocketLine(url, open_timeout_s=2, headers=(("Authorization", "Bearer abc"),))
        await line.open(CallStart("c", {}))
        await line.close()
    assert seen == ["Bearer abc"]


async def test_audio_up_to_the_message_limit_plays_and_a_bigger_message_is_refused_not_heard():
    from voice.lines.pcm import MAX_AUDIO_MESSAGE_MS, MAX_MESSAGE_BYTES

    async def bot(ws):
        await ws.recv()
        await ws.send(bytes(MAX_MESSAGE_BYTES))
        await ws.send(bytes(2_000_000))  # 62.5 s of audio in one message
        await ws.wait_closed()

    server, url = await _server(bot)
    async with server:
        line = PcmWebsocketLine(url)
        await line.open(CallStart("c1"))
        audio = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(audio, AssistantAudio) and len(audio.pcm) == MAX_AUDIO_MESSAGE_MS * 16
        closed = await asyncio.wait_for(line.recv(), 5)
        assert isinstance(closed, LineClosed)
        assert closed.reason.startswith("protocol_error: message larger than the line allows")
        assert "2000000" in closed.reason
        await line.close()
