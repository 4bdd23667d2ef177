"""The built-in server's door (``server/gate.py``), against a real server on localhost with real websocket
clients: the token and Origin checks on the upgrade, the call slots, message sizes, idle sockets, the first
control message, and clean closes.  The speech engines are the memory doubles; a test that starts a call
builds its pipeline, whose Silero VAD loads an ONNX model, so those are ``models`` tests; every refusal
happens before any pipeline, so those are fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from server.app import AssistantServer
from server.config import AssistantSettings, ServingSettings, SpeechEngines
from server.gate import check_upgrade, control_problem, json_depth
from tests.server.assistant_client import start_message
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

pytestmark = [pytest.mark.asyncio]

FRAME = b"\0" * 640


@contextlib.asynccontextmanager
async def gated(**kw: Any) -> AsyncIterator[AssistantServer]:
    engines = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    settings = AssistantSettings(
        serving=ServingSettings(port=0, **kw), configure_logging=False, prewarm=False
    )
    server = AssistantServer(settings, engines=engines)
    await server.start(timeout=30)
    try:
        yield server
    finally:
        await server.stop()
        engines.close()


async def closed(ws: Any, timeout: float = 5.0) -> tuple[int | None, str | None]:
    """Read until the server closes; its close code and reason (None, None if it never did)."""
    with contextlib.suppress(websockets.ConnectionClosed, TimeoutError):
        async with asyncio.timeout(timeout):
            async for _ in ws:
                pass
    rcvd = ws.protocol.close_rcvd
    return (rcvd.code, rcvd.reason) if rcvd is not None else (None, None)


# --- the upgrade -------------------------------------------------------------------------------------------


def scope(headers: dict[str, str], query: str = "") -> dict[str, Any]:
    pairs = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return {"type": "websocket", "headers": pairs, "query_string": query.encode()}


def test_the_token_comes_as_a_bearer_header_or_a_query_parameter() -> None:
    settings = AssistantSettings(serving=ServingSettings(token="s3cret"))
    assert check_upgrade(scope({"Authorization": "Bearer s3cret"}), settings) is None
    assert check_upgrade(scope({}, "token=s3cret"), settings) is None
    missing = check_upgrade(scope({}), settings)
    assert missing is not None and missing.status == 401 and "Bearer" in missing.reason
    wrong = check_upgrade(scope({"Authorization": "Bearer s3cre"}), settings)
    assert wrong is not None and (wrong.status, wrong.reason) == (401, "wrong token")


def test_a_foreign_page_is_refused_and_a_listed_one_is_not() -> None:
    assert check_upgrade(scope({"Origin": "https://evil.example"}), AssistantSettings()) is not None
    listed = AssistantSettings(serving=ServingSettings(allowed_origins=("https://evil.example",)))
    assert check_upgrade(scope({"Origin": "https://evil.example"}), listed) is None


async def test_no_token_a_wrong_one_or_a_foreign_page_never_reach_a_call() -> None:
    async with gated(token="s3cret") as server:
        url = server.url
        for headers, status in [
            ({}, 401),
            ({"Authorization": "Bearer nope"}, 401),
            ({"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}, 403),
        ]:
            with pytest.raises(InvalidStatus) as refused:
                await websockets.connect(url, additional_headers=headers, open_timeout=5)
            assert refused.value.response.status_code == status
        assert server.app is not None and not server.app.state.calls
        for good in (url + "?token=s3cret", url):
            headers = {} if "?" in good else {"Authorization": "Bearer s3cret"}
            async with websockets.connect(good, additional_headers=headers, open_timeout=5) as ws:
                assert ws.protocol.state.name == "OPEN"  # admitted; no call until it says something


# --- slots, sizes, idle, first message ---------------------------------------------------------------------


async def test_calls_past_the_maximum_are_told_to_try_again_later() -> None:
    async with gated(max_calls=2, socket_idle_secs=0.5) as server:
        first = await websockets.connect(server.url)
        second = await websockets.connect(server.url)
        third = await websockets.connect(server.url)
        code, reason = await closed(third)
        assert code == 1013 and reason is not None and "busy" in reason and "max 2" in reason
        await first.close()
        assert (await closed(second))[0] == 1008  # its slot is given back when it is closed for idling
        fourth = await websockets.connect(server.url)
        assert (await closed(fourth))[0] == 1008  # admitted (and closed for idling, not for being busy)


@pytest.mark.parametrize(
    ("size", "limit_by"), [(20_000, "binary message of 20000 bytes"), (2_000_000, "exceeds")]
)
async def test_an_oversized_binary_message_closes_with_1009_and_is_never_audio(
    size: int, limit_by: str
) -> None:
    async with gated() as server, websockets.connect(server.url, max_size=None) as ws:
        await ws.send(b"\0" * size)
        code, reason = await closed(ws)
        assert code == 1009 and reason is not None and limit_by in reason
        assert server.app is not None and not server.app.state.calls


@pytest.mark.models
async def test_an_oversized_message_mid_call_ends_the_call_with_1009() -> None:
    async with gated() as server, websockets.connect(server.url, max_size=None, max_queue=None) as ws:
        await ws.send(start_message())
        await ws.send(FRAME)
        await ws.send(b"\0" * 20_000)
        code, reason = await closed(ws)
        assert code == 1009 and reason is not None and "20000 bytes" in reason


@pytest.mark.parametrize(
    ("first", "code", "says"),
    [
        ('{"event": "start", "dialogue": ' + "[" * 30_000 + "]" * 30_000 + "}", 1007, "nests deeper"),
        ('{"event": "start", "dialogue": ' + "[" * 40 + "]" * 40 + "}", 1007, "nests deeper"),
        ('{"event": "start"', 1007, "not JSON"),
        ("[1, 2]", 1002, "'event'"),
    ],
)
async def test_a_malformed_start_is_a_protocol_error_not_a_hangup(first: str, code: int, says: str) -> None:
    async with gated() as server, websockets.connect(server.url, max_size=None) as ws:
        await ws.send(first)
        got, reason = await closed(ws)
        assert got == code and reason is not None and says in reason
        assert server.app is not None and not server.app.state.calls


async def test_a_silent_socket_is_closed_and_never_costs_a_pipeline() -> None:
    async with gated(socket_idle_secs=0.5) as server, websockets.connect(server.url) as ws:
        assert server.app is not None and not server.app.state.calls  # nothing built for a silent socket
        code, reason = await closed(ws)
        assert code == 1008 and reason == "idle: nothing received for 0.5 s"


@pytest.mark.models
async def test_a_call_that_goes_silent_is_closed_too() -> None:
    async with gated(socket_idle_secs=0.5) as server, websockets.connect(server.url, max_queue=None) as ws:
        await ws.send(start_message())
        await ws.send(FRAME)
        code, reason = await closed(ws)
        assert code == 1008 and reason is not None and reason.startswith("idle")


@pytest.mark.models
async def test_a_clients_close_frame_is_answered() -> None:
    async with gated() as server:
        idle = await websockets.connect(server.url, close_timeout=5)
        await idle.close()
        in_call = await websockets.connect(server.url, max_queue=None, close_timeout=5)
        await in_call.send(start_message())
        for _ in range(25):  # half a second of a call: the greeting is streaming back meanwhile
            await in_call.send(FRAME)
            await asyncio.sleep(0.02)
        await in_call.close()
        for ws in (idle, in_call):
            assert ws.protocol.close_rcvd is not None and ws.close_code == 1000  # not 1006: answered


# --- the checks themselves ---------------------------------------------------------------------------------


def test_depth_counts_nested_lists_and_objects() -> None:
    assert json_depth(1) == 0
    assert json_depth({"a": [1, {"b": []}]}) == 4
    assert json_depth(json.loads("[" * 500 + "]" * 500)) == 500


def test_a_well_formed_start_is_not_a_problem() -> None:
    assert control_problem(start_message()) is None
    problem = control_problem('{"event": "start", "n": ' + "9" * 5000 + "}")
    assert problem is not None and problem[0] == 1007
