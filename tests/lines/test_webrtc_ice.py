"""Loopback-only ICE gathering, switched per task, and what counts as a loopback host."""

from __future__ import annotations

import asyncio

import aioice.ice
import pytest

from voice.lines.webrtc_ice import LOOPBACK, is_loopback_host, loopback_candidates


async def test_inside_the_block_only_loopback_is_gathered_and_outside_aioices_own_list() -> None:
    with loopback_candidates():
        assert aioice.ice.get_host_addresses(True, True) == [LOOPBACK]
        assert aioice.ice.get_host_addresses(False, True) == []
        inner = await asyncio.create_task(asyncio.sleep(0, aioice.ice.get_host_addresses(True, False)))
        assert inner == [LOOPBACK]  # a task started inside inherits the switch
    assert LOOPBACK not in aioice.ice.get_host_addresses(True, True)  # aioice never lists loopback itself


async def test_a_real_peer_offers_loopback_candidates_only_inside_the_block() -> None:
    from aiortc import RTCPeerConnection

    with loopback_candidates():
        pc = RTCPeerConnection()
        pc.addTransceiver("audio")
        await pc.setLocalDescription(await pc.createOffer())
    lines = [x for x in pc.localDescription.sdp.splitlines() if x.startswith("a=candidate")]
    await pc.close()
    assert lines and all(" 127.0.0.1 " in x for x in lines), lines


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.3.4.5", True), ("localhost", True), ("::1", True), ("[::1]", True),
     ("192.168.1.2", False), ("bot.example.com", False), ("", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback
