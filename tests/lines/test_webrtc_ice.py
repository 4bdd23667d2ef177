"""Loopback-only ICE gathering, switched per task, and what counts as a loopback host."""

from __future__ import annotations

import asyncio

import aioice.ice
import pytest

from voice.lines.webrtc_ice import LOOPBACK, gather_on, is_loopback_host, loopback_candidates, media_addresses


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


def test_a_server_gathers_where_it_listens_and_blocks_nest() -> None:
    assert media_addresses("127.0.0.1") == ("127.0.0.1",)
    assert set(media_addresses("localhost") or ()) <= {"127.0.0.1", "::1"}
    assert media_addresses("0.0.0.0") is None and media_addresses("::") is None
    outside = aioice.ice.get_host_addresses(True, False)
    with gather_on((LOOPBACK,)):
        assert aioice.ice.get_host_addresses(True, True) == [LOOPBACK]
        with gather_on(("::1", LOOPBACK)):
            assert aioice.ice.get_host_addresses(False, True) == ["::1"]
        assert aioice.ice.get_host_addresses(True, False) == [LOOPBACK]  # the inner block is over
    assert aioice.ice.get_host_addresses(True, False) == outside  # outside: as it was
