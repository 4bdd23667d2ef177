"""The SIP line on loopback against a scripted far end: every answer of the phone network, and the media.

The far end here is a few lines of script over real UDP sockets (the real peers, baresip and kamailio, are in
tests/peers/test_sip_baresip.py); it plays each way a call can go wrong, so that each is shown to end as a
named outcome or a recorded reason, never a hang.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from voice.core.audio import FRAME_SAMPLES
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.errors import CallRefused, LineError
from voice.lines.codec import mulaw_encode
from voice.lines.line import CallStart
from voice.lines.rtp_packet import RtpSender, parse_rtp
from voice.lines.sip import DIALOGUE_HEADER, SipLine, dialogue_from_header
from voice.lines.sip_message import SipRequest, parse_message, response_to
from voice.lines.sip_sdp import make_offer

Script = Callable[["FarEnd", SipRequest], None]


class FarEnd(asyncio.DatagramProtocol):
    """A SIP user agent that answers by script, with an RTP socket of its own."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.transport: asyncio.DatagramTransport | None = None
        self.peer: tuple[str, int] = ("", 0)
        self.requests: list[SipRequest] = []
        self.rtp: asyncio.DatagramTransport | None = None
        self.rtp_port = 0
        self.heard: list[bytes] = []

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        message = parse_message(data)
        if isinstance(message, SipRequest):
            self.peer = (addr[0], addr[1])
            self.requests.append(message)
            self.script(self, message)

    def answer(self, request: SipRequest, status: int, body: str = "", **headers: str) -> None:
        response = response_to(request, status, to_tag="far", body=body)
        for name, value in headers.items():
            response.set_header(name.replace("_", "-"), value)
        assert self.transport is not None
        self.transport.sendto(bytes(response), self.peer)

    @property
    def port(self) -> int:
        assert self.transport is not None
        return int(self.transport.get_extra_info("sockname")[1])

    def sdp(self) -> str:
        return make_offer("127.0.0.1", self.rtp_port, session_id=7)


class _Rtp(asyncio.DatagramProtocol):
    def __init__(self, far: FarEnd) -> None:
        self.far = far

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.far.heard.append(data)


async def far_end(script: Script) -> tuple[FarEnd, str]:
    loop = asyncio.get_running_loop()
    far = FarEnd(script)
    await loop.create_datagram_endpoint(lambda: far, local_addr=("127.0.0.1", 0))
    far.rtp, _ = await loop.create_datagram_endpoint(lambda: _Rtp(far), local_addr=("127.0.0.1", 0))
    far.rtp_port = far.rtp.get_extra_info("sockname")[1]
    assert far.transport is not None
    port = far.transport.get_extra_info("sockname")[1]
    return far, f"sip:bot@127.0.0.1:{port}"


def rtp_target(far: FarEnd) -> tuple[str, int]:
    """Where the line's SDP offer says its RTP goes."""
    invite = far.requests[0]
    port = int(next(line for line in invite.text.splitlines() if line.startswith("m=audio")).split()[1])
    return "127.0.0.1", port


def tone_packets(sender: RtpSender, n: int) -> list[bytes]:
    t = np.arange(160) / 8000
    payload = mulaw_encode((8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16))
    return [sender.packet(payload, 160, marker=i == 0) for i in range(n)]


def answering(far: FarEnd, request: SipRequest) -> None:
    if request.method == "INVITE":
        far.answer(request, 200, body=far.sdp(), Contact=f"<sip:bot@127.0.0.1:{far.port}>")
    elif request.method == "BYE":
        far.answer(request, 200)


async def drain(line: SipLine, timeout: float = 5.0) -> list[LineInput]:
    got: list[LineInput] = []
    async with asyncio.timeout(timeout):
        while True:
            item = await line.recv()
            got.append(item)
            if isinstance(item, LineClosed):
                return got


START = CallStart("call-1", {"id": "d1", "preset": {"type": "regular", "text": "放门口"}})


REFUSALS = [(486, "busy"), (603, "declined"), (404, "not_found"), (480, "no_answer"), (503, "call_rejected")]


@pytest.mark.parametrize("status, outcome", REFUSALS)
async def test_refusals_raise_their_outcome(status: int, outcome: str) -> None:
    far, url = await far_end(lambda far, r: far.answer(r, status) if r.method == "INVITE" else None)
    line = SipLine(url)
    with pytest.raises(CallRefused) as refused:
        await line.open(START)
    assert refused.value.outcome == outcome and str(status) in str(refused.value)
    assert [r.method for r in far.requests] == ["INVITE", "ACK"]


async def test_the_invite_offers_g711_and_carries_the_dialogue() -> None:
    far, url = await far_end(answering)
    line = SipLine(url)
    await line.open(START)
    invite = far.requests[0]
    assert "m=audio" in invite.text and "PCMU/8000" in invite.text and "PCMA/8000" in invite.text
    assert dialogue_from_header(invite.get_header(DIALOGUE_HEADER) or "")["preset"]["text"] == "放门口"
    assert invite.get_header("X-CallSim-Call-Id") == "call-1"
    await line.close()
    assert far.requests[-1].method == "BYE"


async def test_digest_auth_then_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from aiosipua.auth import SipDigestAuth

    def script(far: FarEnd, r: SipRequest) -> None:
        if r.method == "INVITE" and not r.get_header("Authorization"):
            far.answer(r, 401, WWW_Authenticate='Digest realm="test", nonce="n1", qop="auth"')
        else:
            answering(far, r)

    far, url = await far_end(script)
    line = SipLine(url, credentials=SipDigestAuth("callsim", "pw"))
    await line.open(START)
    assert 'username="callsim"' in (far.requests[-1].get_header("Authorization") or "")
    await line.close()


async def test_wrong_credentials_are_auth_refused() -> None:
    from aiosipua.auth import SipDigestAuth

    def script(far: FarEnd, r: SipRequest) -> None:
        if r.method == "INVITE":
            far.answer(r, 407, Proxy_Authenticate='Digest realm="test", nonce="n1"')

    _, url = await far_end(script)
    with pytest.raises(CallRefused) as refused:
        await SipLine(url, credentials=SipDigestAuth("callsim", "wrong")).open(START)
    assert refused.value.outcome == "auth_refused"


async def test_a_silent_peer_is_no_answer_within_the_timeout() -> None:
    _, url = await far_end(lambda far, r: None)
    with pytest.raises(CallRefused) as refused:
        await SipLine(url, answer_timeout_s=1.5).open(START)
    assert refused.value.outcome == "no_answer"


async def test_nobody_listening_is_no_answer() -> None:
    with pytest.raises(CallRefused) as refused:  # UDP: nothing tells a caller that no one listens
        await SipLine("sip:bot@127.0.0.1:9", answer_timeout_s=1.0).open(START)
    assert refused.value.outcome == "no_answer" and "no response to the INVITE" in str(refused.value)


async def test_a_name_that_does_not_resolve_is_a_line_error() -> None:
    with pytest.raises(LineError, match="cannot resolve") as failed:
        await SipLine("sip:bot@no-such-host.invalid", answer_timeout_s=1.0).open(START)
    assert not isinstance(failed.value, CallRefused)


async def test_early_media_is_heard_then_the_answer() -> None:
    def script(far: FarEnd, r: SipRequest) -> None:
        if r.method == "INVITE":
            far.answer(r, 183, body=far.sdp())
        elif r.method == "BYE":
            far.answer(r, 200)

    far, url = await far_end(script)
    line = SipLine(url, jitter_delay_ms=40)
    await line.open(START)  # returns at the 183: media flows before the answer
    assert far.rtp is not None
    for packet in tone_packets(RtpSender(0, ssrc=1, first_sequence=1, first_timestamp=0), 5):
        far.rtp.sendto(packet, rtp_target(far))
    item = await asyncio.wait_for(line.recv(), 2)
    assert isinstance(item, AssistantAudio) and len(item.pcm) == FRAME_SAMPLES
    await line.send(np.zeros(FRAME_SAMPLES, np.int16))
    await asyncio.sleep(0.05)
    assert far.heard and parse_rtp(far.heard[0]).payload_type == 0
    await line.close()
    assert far.requests[-1].method == "CANCEL"  # still ringing: hanging up is a CANCEL


async def test_the_far_end_hangs_up_mid_call() -> None:
    far, url = await far_end(answering)
    line = SipLine(url)
    await line.open(START)
    bye = SipRequest(method="BYE", uri="sip:callsim@127.0.0.1")
    invite = far.requests[0]
    bye.set_header("Via", "SIP/2.0/UDP 127.0.0.1:1;branch=z9hG4bKbye")
    bye.set_header("From", (invite.get_header("To") or "") + ";tag=far")
    bye.set_header("To", invite.get_header("From") or "")
    bye.set_header("Call-ID", invite.get_header("Call-ID") or "")
    bye.set_header("CSeq", "2 BYE")
    assert far.transport is not None
    far.transport.sendto(bytes(bye), far.peer)
    got = await drain(line)
    assert isinstance(got[0], AssistantControl) and got[0].event == "hangup"
    assert isinstance(got[-1], LineClosed) and "BYE" in got[-1].reason
    await line.close()


async def test_rtp_from_a_stranger_is_dropped_and_counted() -> None:
    far, url = await far_end(answering)
    line = SipLine(url)
    await line.open(START)
    loop = asyncio.get_running_loop()
    stranger, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol, local_addr=("127.0.0.1", 0))
    for packet in tone_packets(RtpSender(0, ssrc=9, first_sequence=1, first_timestamp=0), 10):
        stranger.sendto(packet, rtp_target(far))
    await asyncio.sleep(0.2)
    assert line.describe()["rtp_wrong_source"] == 10 and line._inbox.empty()
    stranger.close()
    await line.close()


async def test_no_rtp_at_all_ends_the_call_as_no_media() -> None:
    _, url = await far_end(answering)
    line = SipLine(url, media_timeout_s=0.5)
    await line.open(START)
    got = await drain(line, 3)
    assert isinstance(got[-1], LineClosed) and got[-1].reason.startswith("no_media")
    await line.close()


async def test_a_flood_of_rtp_is_bounded_and_ends_the_call() -> None:
    far, url = await far_end(answering)
    line = SipLine(url, jitter_delay_ms=1000)
    await line.open(START)
    assert far.rtp is not None
    sender = RtpSender(0, ssrc=3, first_sequence=1, first_timestamp=0)
    for i, packet in enumerate(tone_packets(sender, 800)):  # in bursts the socket's buffer can hold
        far.rtp.sendto(packet, rtp_target(far))
        if i % 50 == 49:
            await asyncio.sleep(0.005)
    got = await drain(line, 5)
    assert isinstance(got[-1], LineClosed) and "flood" in got[-1].reason
    assert len(line.media.buffer) <= 50  # type: ignore[union-attr]
    await line.close()


async def test_hostile_sip_mid_call_does_not_end_it() -> None:
    far, url = await far_end(answering)
    line = SipLine(url)
    await line.open(START)
    assert far.transport is not None
    for junk in (
        b"\x00" * 100,
        b"INVITE x SIP/2.0\r\n\r\n",
        b"SIP/2.0 200 OK\r\n" + b"X: y\r\n" * 400 + b"\r\n",
    ):
        far.transport.sendto(junk, far.peer)
    await asyncio.sleep(0.1)
    assert line.describe()["sip_malformed"] == 3 and line.is_open
    await line.close()
