"""The one websocket line shell (``voice/lines/ws_shell.py``) against real websocket bots on localhost.

The protocol on top is a small stand-in codec (text in, ``say`` controls out) so that what is checked is
the shell's: the reader's inbox and its order, the byte-bounded flood cap, closes, connect errors.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from voice.core.audio import Pcm, from_bytes, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.errors import CallSimError, LineError
from voice.lines import ws_shell
from voice.lines.line import CallStart
from voice.lines.ws_shell import HIGH_WATER_FRACTION, ITEM_OVERHEAD_BYTES, Message, WebsocketLine


class SayCodec:
    """A stand-in protocol: text is a ``say`` control, binary is audio, ``bad`` is a violation."""

    max_message_bytes = 1 << 16

    def start(self, start: CallStart) -> Sequence[Message]:
        return [f"hello {start.call_id}"]

    def audio(self, pcm: Pcm) -> Message:
        return to_bytes(pcm)

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        return [f"played {m}" for m in marks]

    def hangup(self, reason: str) -> Sequence[Message]:
        return [f"bye {reason}"]

    def decode(self, message: Message) -> Sequence[LineInput]:
        if message == "bad":
            return (LineClosed("protocol_error: bad"),)
        if isinstance(message, bytes):
            return (AssistantAudio(from_bytes(message)),)
        return (AssistantControl("say", {"text": message}),)

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return (AssistantControl("closed", {"code": exc.rcvd.code if exc.rcvd else None}),)


Bot = Callable[[Any], Awaitable[None]]


async def _server(bot: Bot) -> tuple[Any, str]:
    server = await serve(bot, "127.0.0.1", 0, max_size=None)
    return server, f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/shell"


def _line(url: str, **kw: Any) -> WebsocketLine[SayCodec]:
    return WebsocketLine(url, SayCodec(), open_timeout_s=2, **kw)


async def _until_closed(line: WebsocketLine[SayCodec]) -> tuple[list[LineInput], LineClosed]:
    items: list[LineInput] = []
    while not isinstance(item := await asyncio.wait_for(line.recv(), 5), LineClosed):
        items.append(item)
    return items, item


async def test_the_codec_speaks_and_inputs_come_through_the_inbox_in_order() -> None:
    heard: list[Any] = []

    async def bot(ws: Any) -> None:
        heard.append(await ws.recv())
        await ws.send("one")
        await ws.send(np.arange(4, dtype="<i2").tobytes())
        await ws.send("two")
        async for message in ws:
            heard.append(message)

    server, url = await _server(bot)
    async with server:
        line = _line(url)
        await line.open(CallStart("c1"))
        one, audio, two = [await asyncio.wait_for(line.recv(), 5) for _ in range(3)]
        assert one == AssistantControl("say", {"text": "one"}) and two.event == "say"  # type: ignore[union-attr]
        assert isinstance(audio, AssistantAudio) and list(audio.pcm) == [0, 1, 2, 3]
        await line.send(np.ones(320, np.int16))
        await line.played(("m1",))
        await line.hangup("done")
        assert await line.recv() == LineClosed("closed by caller")
        await asyncio.sleep(0.1)
    assert heard[0] == "hello c1" and len(heard[1]) == 640 and heard[2:] == ["played m1", "bye done"]


@pytest.mark.parametrize("size", [100, 5000])
async def test_a_flood_that_nobody_takes_ends_the_line_once_its_bytes_pass_the_cap(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ws_shell, "TAKE_WAIT_S", 0.1)  # how long the reader waits for a call that stalled
    cap, sent = 20_000, asyncio.Event()

    async def bot(ws: Any) -> None:
        await ws.recv()
        for _ in range(200):
            await ws.send("x" * size)
        sent.set()
        await ws.wait_closed()

    server, url = await _server(bot)
    async with server:
        line = _line(url, flood_bytes=cap)
        await line.open(CallStart("c1"))
        await asyncio.wait_for(sent.wait(), 5)
        await asyncio.sleep(0.2)  # nobody takes anything meanwhile
        items, closed = await _until_closed(line)
        weight = size + ITEM_OVERHEAD_BYTES
        assert (len(items) - 1) * weight <= cap < len(items) * weight  # everything up to the cap, in order
        assert all(i == AssistantControl("say", {"text": "x" * size}) for i in items)
        assert closed.reason.startswith("protocol_error: flood: ") and "not yet taken" in closed.reason
        assert await line.recv() == closed  # and it stays closed
        await line.close()


async def test_a_call_that_takes_its_input_holds_the_bot_back_and_is_never_flooded() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv()
        for i in range(3000):  # tiny messages: one socket read brings a great many of them
            await ws.send(f"m{i}")
        await ws.close()

    server, url = await _server(bot)
    async with server:
        line = _line(url, flood_bytes=20_000)  # 3000 messages weigh about 80 times that
        await line.open(CallStart("c1"))
        items, closed = await _until_closed(line)
        said = [i.payload["text"] for i in items if isinstance(i, AssistantControl) and i.event == "say"]
        assert said == [f"m{i}" for i in range(3000)]
        assert items[-1] == AssistantControl("closed", {"code": 1000})  # the codec's reading of the close
        assert "code 1000" in closed.reason and "flood" not in closed.reason
        await line.close()


async def test_while_the_call_is_slow_to_take_its_input_the_reader_waits_and_the_inbox_stays_small() -> None:
    cap, peak = 20_000, 0

    async def bot(ws: Any) -> None:
        await ws.recv()
        for i in range(300):
            await ws.send(f"{i:0100d}")
        await ws.close()

    server, url = await _server(bot)
    async with server:
        line = _line(url, flood_bytes=cap)
        await line.open(CallStart("c1"))
        taken = 0
        async with asyncio.timeout(20):
            while not isinstance(await line.recv(), LineClosed):
                taken += 1
                peak = max(peak, line._inbox.qsize())
                await asyncio.sleep(0.001)  # a call busy between its takes (under the reader's wait)
        assert taken == 301  # 300 messages and the codec's reading of the close
        high_water = cap // HIGH_WATER_FRACTION // (100 + ITEM_OVERHEAD_BYTES) + 1
        assert peak <= high_water  # the reader stopped at the high water each time, never near the cap
        await line.close()


async def test_a_violation_ends_the_line_after_what_came_before_and_nothing_after_is_taken() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv()
        for message in ("before", "bad", "after"):
            await ws.send(message)
        await ws.wait_closed()

    server, url = await _server(bot)
    async with server:
        line = _line(url)
        await line.open(CallStart("c1"))
        items, closed = await _until_closed(line)
        assert items == [AssistantControl("say", {"text": "before"})]
        assert closed == LineClosed("protocol_error: bad") and await line.recv() == closed
        await line.send(np.zeros(320, np.int16))  # harmless once over
        await line.played(("late",))
        await line.close()


async def test_an_abnormal_close_is_named_and_read_by_the_codec_first() -> None:
    async def bot(ws: Any) -> None:
        await ws.recv()
        await ws.close(code=1011, reason="boom")

    server, url = await _server(bot)
    async with server:
        line = _line(url)
        await line.open(CallStart("c1"))
        items, closed = await _until_closed(line)
        assert items == [AssistantControl("closed", {"code": 1011})]
        assert closed.reason == "closed by assistant (code 1011: boom)"
        await line.close()
        await line.close()  # idempotent
        assert await line.recv() == closed


async def test_unreachable_targets_are_line_errors_with_credentials_redacted() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: nobody listens there
    with pytest.raises(LineError, match=r"cannot connect to ws://\*\*\*@127\.0\.0\.1") as caught:
        await _line(f"ws://u:PW1@127.0.0.1:{port}/x?token=T0K").open(CallStart("c"))
    assert "PW1" not in str(caught.value) and "T0K" not in str(caught.value)
    with pytest.raises(CallSimError, match="cannot connect to http://"):  # one exception root
        await _line("http://127.0.0.1:1/x").open(CallStart("c"))


async def test_a_server_that_never_answers_the_upgrade_is_a_line_error_within_the_open_timeout() -> None:
    silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    async with silent:
        line = WebsocketLine(f"ws://127.0.0.1:{port}/x", SayCodec(), open_timeout_s=0.3)
        async with asyncio.timeout(5):
            with pytest.raises(LineError, match="cannot connect"):
                await line.open(CallStart("c"))


async def test_recv_before_open_is_closed_and_everything_else_is_harmless() -> None:
    line = _line("ws://127.0.0.1:9/x")
    assert await line.recv() == LineClosed("never connected")
    await line.send(np.zeros(320, np.int16))
    await line.played(("m",))
    await line.hangup("x")
    assert not line.is_open
