"""A SIP call's RTP: packets out as the driver sends, in through the jitter buffer when due, and bounded."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from voice.core.audio import FRAME_SAMPLES
from voice.core.call import AssistantAudio, LineClosed, LineInput
from voice.core.clock import MonotonicClock
from voice.lines.codec import alaw_encode
from voice.lines.effects import LineEffects
from voice.lines.rtp_packet import RtpSender, parse_rtp
from voice.lines.sip_media import RtpMedia, ns_to_rtp, rtp_to_ns
from voice.lines.sip_sdp import PCMA, RemoteMedia


class Peer(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.got: list[bytes] = []

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.got.append(data)


async def setup(
    **options: Any,
) -> tuple[RtpMedia, list[tuple[LineInput, float]], asyncio.DatagramTransport, Peer]:
    clock = MonotonicClock(spin_ns=0)
    got: list[tuple[LineInput, float]] = []
    media = RtpMedia(clock, lambda item, _: got.append((item, clock.now_ns() / 1e9)), **options)
    await media.bind("127.0.0.1")
    peer = Peer()
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
        lambda: peer, local_addr=("127.0.0.1", 0)
    )
    port = transport.get_extra_info("sockname")[1]
    media.start(RemoteMedia("127.0.0.1", port, PCMA, "PCMA", 101, 20, "sendrecv"))
    return media, got, transport, peer


def test_time_converts_once_at_the_edge() -> None:
    assert ns_to_rtp(20_000_000) == 160 and rtp_to_ns(160) == 20_000_000


async def test_frames_go_out_in_the_chosen_law_and_come_back_after_the_jitter_delay() -> None:
    media, got, far, peer = await setup(jitter_delay_ms=60)
    tone = (8000 * np.sin(2 * np.pi * 300 * np.arange(FRAME_SAMPLES) / 16000)).astype(np.int16)
    media.send(tone)
    await asyncio.sleep(0.05)
    packet = parse_rtp(peer.got[0])
    assert packet.payload_type == PCMA and len(packet.payload) == 160 and packet.marker
    sender = RtpSender(PCMA, ssrc=5, first_sequence=10, first_timestamp=0)
    loud = alaw_encode((8000 * np.sin(2 * np.pi * 300 * np.arange(160) / 8000)).astype(np.int16))
    sent_at = media.clock.now_ns() / 1e9
    far.sendto(sender.packet(loud, 160, marker=True), media.local)
    await asyncio.sleep(0.15)
    audio = [(item, at) for item, at in got if isinstance(item, AssistantAudio)]
    assert len(audio) == 1 and len(audio[0][0].pcm) == FRAME_SAMPLES
    assert 0.055 <= audio[0][1] - sent_at <= 0.09  # handed on when due: arrival + 60 ms
    await media.close()
    far.close()


async def test_hold_stops_our_packets_and_silence_is_not_handed_on() -> None:
    media, got, far, peer = await setup()
    assert media.remote is not None
    media.start(RemoteMedia(media.remote.address, media.remote.port, PCMA, "PCMA", None, 20, "sendonly"))
    media.send(np.zeros(FRAME_SAMPLES, np.int16))
    sender = RtpSender(PCMA, ssrc=5, first_sequence=10, first_timestamp=0)
    far.sendto(sender.packet(alaw_encode(np.zeros(160, np.int16)), 160), media.local)
    await asyncio.sleep(0.15)
    assert peer.got == [] and got == [] and media.counts["rtp_silent_frames"] == 1
    await media.close()
    far.close()


async def test_loss_on_the_line_drops_packets_reproducibly() -> None:
    media, _, far, peer = await setup(effects=LineEffects(loss_rate=0.5), rng=np.random.default_rng(1))
    for _ in range(40):
        media.send(np.zeros(FRAME_SAMPLES, np.int16))
    await asyncio.sleep(0.05)
    assert media.counts["rtp_lost_on_purpose"] + len(peer.got) == 40 and 8 <= len(peer.got) <= 32
    await media.close()
    far.close()


async def test_nothing_arriving_is_no_media() -> None:
    media, got, far, _ = await setup(media_timeout_ns=300_000_000)
    await asyncio.sleep(0.5)
    assert isinstance(got[-1][0], LineClosed) and got[-1][0].reason.startswith("no_media")
    await media.close()
    far.close()


async def test_a_codec_change_by_reinvite_switches_the_law_of_both_directions() -> None:
    media, _, far, peer = await setup()
    assert media.remote is not None
    media.start(RemoteMedia(media.remote.address, media.remote.port, 0, "PCMU", None, 20, "sendrecv"))
    tone = (8000 * np.sin(2 * np.pi * 300 * np.arange(FRAME_SAMPLES) / 16000)).astype(np.int16)
    media.send(tone)
    await asyncio.sleep(0.05)
    packet = parse_rtp(peer.got[-1])
    assert packet.payload_type == 0 and packet.marker  # a new stream: new SSRC, marker on its first packet
    assert media.describe()["codec"] == "PCMU"
    await media.close()
    far.close()
