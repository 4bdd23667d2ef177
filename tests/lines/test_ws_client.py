"""The lean websocket client against websockets' own server on localhost: every RFC rule it relies on."""

import asyncio
import socket

import pytest
from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, ConnectionClosedError, InvalidStatus, InvalidURI
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Response

from voice.lines import ws_client
from voice.lines.ws_client import binary_frame, closed_reason, connect


async def _server(handler, **kw):
    server = await serve(handler, "127.0.0.1", 0, **kw)
    port = server.sockets[0].getsockname()[1]
    return server, f"ws://127.0.0.1:{port}/x"


async def _echo(ws):
    async for message in ws:
        await ws.send(message)


@pytest.mark.parametrize("size", [0, 1, 125, 126, 640, 65535, 65536, 200_000])
async def test_binary_messages_of_every_length_class_arrive_masked_and_intact(size):
    payload = bytes(i % 251 for i in range(size))
    server, url = await _server(_echo)  # websockets' server rejects unmasked or malformed client frames
    async with server:
        client = await connect(url, max_size=None)  # the sizes a send can frame
        await client.send(payload)
        assert await asyncio.wait_for(client.recv(), 5) == payload
        await client.close()


async def test_text_round_trip_and_masks_are_never_reused_within_a_pool():
    server, url = await _server(_echo)
    async with server:
        client = await connect(url)
        await client.send('{"event": "start", "text": "你好"}')
        assert await asyncio.wait_for(client.recv(), 5) == '{"event": "start", "text": "你好"}'
        masks = [client._mask() for _ in range(ws_client.MASK_POOL_BYTES // 4)]
        assert len(set(masks)) > len(masks) - 3  # random 32-bit masks: collisions are vanishingly rare
        await client.close()


def test_binary_frame_header_follows_rfc_6455():
    mask = b"\x01\x02\x03\x04"
    frame = binary_frame(b"\x00" * 200, mask)
    assert frame[:2] == bytes((0x82, 0x80 | 126)) and frame[2:4] == (200).to_bytes(2, "big")
    assert frame[4:8] == mask and frame[8:12] == mask  # zeros XOR the mask are the mask


async def test_fragmented_messages_are_reassembled():
    async def handler(ws):
        await ws.recv()
        await ws.send([b"ab", b"cd", b"ef"])  # one binary message in three frames
        await ws.send(["你", "好"])  # one text message in two frames

    server, url = await _server(handler)
    async with server:
        client = await connect(url)
        await client.send(b"go")
        assert await asyncio.wait_for(client.recv(), 5) == b"abcdef"
        assert await asyncio.wait_for(client.recv(), 5) == "你好"
        await client.close()


async def test_a_ping_from_the_server_is_answered():
    answered = []

    async def handler(ws):
        waiter = await ws.ping(b"hi")
        await asyncio.wait_for(waiter, 5)
        answered.append(True)
        await ws.send(b"done")

    server, url = await _server(handler)
    async with server:
        client = await connect(url)
        assert await asyncio.wait_for(client.recv(), 5) == b"done"
        assert answered == [True]
        await client.close()


async def test_a_close_from_the_server_ends_recv_with_its_code_and_reason_after_the_queued_messages():
    async def handler(ws):
        await ws.send(b"last words")
        await ws.close(4000, "bye")

    server, url = await _server(handler)
    async with server:
        client = await connect(url)
        assert await asyncio.wait_for(client.recv(), 5) == b"last words"
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(client.recv(), 5)
        assert (
            info.value.rcvd is not None and info.value.rcvd.code == 4000 and info.value.rcvd.reason == "bye"
        )
        with pytest.raises(ConnectionClosed):
            await client.send(b"too late")
        await client.close()  # closing a closed connection is harmless


async def test_a_message_over_max_size_closes_with_1009():
    async def handler(ws):
        await ws.recv()
        await ws.send(b"x" * 2000)
        await ws.wait_closed()  # the client fails the connection: the closing handshake ends it

    server, url = await _server(handler)
    async with server:
        client = await connect(url, max_size=1000)
        await client.send(b"go")
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(client.recv(), 5)
        assert info.value.sent is not None and info.value.sent.code == 1009


async def test_the_client_closing_handshake_completes():
    closed = asyncio.get_running_loop().create_future()

    async def handler(ws):
        with pytest.raises(ConnectionClosed):
            await ws.recv()
        closed.set_result((ws.close_code, ws.close_reason))

    server, url = await _server(handler)
    async with server:
        client = await connect(url)
        await client.close(1000, "hung up")
        assert await asyncio.wait_for(closed, 5) == (1000, "hung up")
        assert client._lost.done()


async def test_a_refused_handshake_raises_invalid_status():
    def refuse(connection, request):
        return Response(404, "Not Found", Headers(), b"no such bot\n")

    server, url = await _server(_echo, process_request=refuse)
    async with server:
        with pytest.raises(InvalidStatus):
            await connect(url)


async def test_connect_errors_are_the_ones_websockets_raises():
    with pytest.raises(InvalidURI):
        await connect("http://example.invalid/")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(OSError):
            await connect(f"ws://127.0.0.1:{port}/")


async def test_a_server_that_never_answers_the_handshake_times_out():
    async def mute(reader, writer):
        await asyncio.sleep(5)
        writer.close()

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(TimeoutError):
            await connect(f"ws://127.0.0.1:{port}/", open_timeout=0.2)


async def test_invalid_utf8_text_fails_the_connection_with_1007():
    async def handler(ws):
        await ws.recv()
        await ws.send(b"ok")
        # a text frame whose bytes are not UTF-8, written below the library's checks
        ws.protocol.send_frame(Frame(Opcode.TEXT, b"\xff\xfe"))
        ws.send_data()
        await ws.wait_closed()

    server, url = await _server(handler)
    async with server:
        client = await connect(url)
        await client.send(b"go")
        assert await asyncio.wait_for(client.recv(), 5) == b"ok"
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(client.recv(), 5)
        assert info.value.sent is not None and info.value.sent.code == 1007


async def test_reading_pauses_while_too_many_messages_wait_and_resumes_as_they_are_taken(monkeypatch):
    monkeypatch.setattr(ws_client, "HIGH_WATER", 5)
    monkeypatch.setattr(ws_client, "LOW_WATER", 2)

    async def handler(ws):
        for i in range(50):
            await ws.send(bytes([i]))
        await ws.close()

    server, url = await _server(handler)
    async with server:
        client = await connect(url)
        async with asyncio.timeout(5):  # until the client has read past the high water
            while not client._paused:
                await asyncio.sleep(0.005)
        assert client._paused and len(client._messages) < 50
        got = [await asyncio.wait_for(client.recv(), 5) for _ in range(50)]
        assert got == [bytes([i]) for i in range(50)]


async def test_a_peer_that_stops_reading_is_failed_with_1008_instead_of_buffering_forever(monkeypatch):
    monkeypatch.setattr(ws_client, "MAX_UNSENT_BYTES", 256 * 1024)
    idle = asyncio.Event()

    async def handler(ws):  # never reads: its own buffers fill, then the kernel's, then the client's
        await idle.wait()

    server, url = await _server(handler, max_size=None, close_timeout=0.5)
    async with server:
        client = await connect(url)
        chunk = bytes(256 * 1024)
        with pytest.raises(ConnectionClosed) as info:
            for _ in range(400):  # up to 100 MB: far beyond any kernel socket buffer
                await client.send(chunk)
                await asyncio.sleep(0)
            await asyncio.wait_for(client.recv(), 5)
        idle.set()
        sent = info.value.sent
        assert sent is not None and sent.code == 1008 and sent.reason.startswith("stopped reading")


def test_closed_reason_blames_the_bot_only_when_callsim_failed_the_connection():
    ours = ConnectionClosedError(None, Close(1008, "stopped reading (2048 KiB unsent)"))
    assert closed_reason(ours) == "protocol_error: stopped reading (2048 KiB unsent)"
    too_big = ConnectionClosedError(Close(1009, ""), Close(1009, ""), rcvd_then_sent=False)
    assert closed_reason(too_big).startswith("protocol_error: message larger than")
    echoed = ConnectionClosedError(Close(1002, "bad"), Close(1002, "bad"), rcvd_then_sent=True)
    assert closed_reason(echoed) == "closed by assistant (code 1002: bad)"  # the bot closed first
    assert closed_reason(ConnectionClosedError(None, None)) == "connection lost (no close frame)"


async def test_extra_headers_go_on_the_upgrade_and_replace_the_urls_basic_authorization():
    seen = []

    def note(connection, request):
        seen.append(
            [(k, v) for k, v in request.headers.raw_items() if k.lower() in ("authorization", "x-key")]
        )

    server, url = await _server(_echo, process_request=note)
    async with server:
        with_userinfo = url.replace("ws://", "ws://u:p@")
        client = await connect(with_userinfo, headers=(("Authorization", "Bearer t"), ("X-Key", "k")))
        await client.close()
        client = await connect(with_userinfo)  # without headers: the userinfo's Basic, as before
        await client.close()
    assert seen[0] == [("Authorization", "Bearer t"), ("X-Key", "k")]
    assert seen[1] == [("Authorization", "Basic dTpw")]


async def test_a_flood_of_big_messages_is_held_back_at_the_byte_high_water_and_arrives_whole():
    big = b"x" * 60_000
    sent = asyncio.get_running_loop().create_future()

    async def flood(ws):
        await ws.recv()
        for _ in range(300):  # 18 MB, more than the kernel's socket buffers hold
            await ws.send(big)
        sent.set_result(None)
        await ws.wait_closed()

    server, url = await _server(flood)
    async with server:
        client = await connect(url)
        await client.send(b"go")
        await asyncio.sleep(0.5)  # whatever the client reads meanwhile, it holds at most ~1 MiB
        # one socket read (asyncio reads up to 256 KiB) may land after the high water is passed
        assert client._buffered <= ws_client.HIGH_WATER_BYTES + 256 * 1024 + len(big) and not sent.done()
        for _ in range(300):
            assert await asyncio.wait_for(client.recv(), 5) == big
        assert client._buffered == 0
        await client.close()
