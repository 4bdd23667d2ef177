"""CallSim's one websocket server stack (``voice/lines/ws_server.py``), on localhost with CallSim's client."""

from __future__ import annotations

import asyncio
import urllib.request
from http import HTTPStatus

import pytest
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.http11 import Request, Response

from voice.lines.ws_client import closed_reason, connect
from voice.lines.ws_server import CLOSE_TIMEOUT_S, ServerConnection, bound_port, serve_websocket


async def _echo(ws: ServerConnection) -> None:
    async for message in ws:
        await ws.send(message)


async def test_it_serves_on_the_port_it_was_given_or_picked_with_the_shared_profile() -> None:
    server = await serve_websocket(_echo, max_size=1000)
    async with server:
        port = bound_port(server)
        assert port > 0
        client = await connect(f"ws://127.0.0.1:{port}/any/path")
        await client.send("你好")
        assert await asyncio.wait_for(client.recv(), 5) == "你好"
        assert client.protocol.extensions == []  # no compression
        await client.close()
    assert bound_port(server, 1234) == 1234  # closed: no socket, the port asked for


async def test_a_message_over_the_limit_is_refused_with_1009() -> None:
    server = await serve_websocket(_echo, max_size=1000)
    async with server:
        client = await connect(f"ws://127.0.0.1:{bound_port(server)}/", max_size=None)
        await client.send(bytes(1001))
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(client.recv(), 5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        assert "1009" in closed_reason(closed.value)
        await client.close()


async def test_no_limit_lets_a_bot_take_anything() -> None:
    server = await serve_websocket(_echo, max_size=None)
    async with server:
        client = await connect(f"ws://127.0.0.1:{bound_port(server)}/", max_size=None)
        await client.send(bytes(3 << 20))
        assert len(await asyncio.wait_for(client.recv(), 10)) == 3 << 20
        await client.close()


async def test_a_request_can_be_answered_over_plain_http_instead_of_upgraded() -> None:
    def page(connection: ServerConnection, request: Request) -> Response | None:
        if request.path != "/page":
            return None
        body = b"<p>hi</p>"
        headers = Headers([("Content-Type", "text/html"), ("Content-Length", str(len(body)))])
        return Response(HTTPStatus.OK.value, "OK", headers, body)

    server = await serve_websocket(_echo, max_size=1000, process_request=page, keepalive_s=20)
    async with server:
        url = f"http://127.0.0.1:{bound_port(server)}/page"
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
        assert body == b"<p>hi</p>"
        with pytest.raises(InvalidStatus):  # a websocket client asking for the page is not upgraded
            await connect(f"ws://127.0.0.1:{bound_port(server)}/page")
        client = await connect(f"ws://127.0.0.1:{bound_port(server)}/call")
        await client.close()


async def test_a_peer_that_never_answers_the_close_is_let_go_within_the_close_timeout() -> None:
    closed_at: list[float] = []

    async def hang_up(ws: ServerConnection) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await ws.close()
        closed_at.append(loop.time() - start)

    server = await serve_websocket(hang_up, max_size=1000)
    async with server:
        reader, writer = await asyncio.open_connection("127.0.0.1", bound_port(server))
        writer.write(
            b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        async with asyncio.timeout(CLOSE_TIMEOUT_S + 5):
            while not closed_at:  # read, but never answer the server's close frame
                if not await reader.read(4096):
                    break
            while not closed_at:
                await asyncio.sleep(0.05)
        writer.close()
    assert closed_at[0] <= CLOSE_TIMEOUT_S + 1
