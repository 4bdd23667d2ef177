"""A scripted SIP far end that misbehaves on purpose: each way the phone network can answer a call.

``scripts/bench_sip_answers`` dials one of these per behaviour with ``callsim bench`` and prints what CallSim
recorded; the tests of the SIP line use the same far end.  It is a real SIP user agent on UDP (messages by
:mod:`voice.lines.sip_message`, SDP by :mod:`voice.lines.sip_sdp`) with an RTP socket of its own, and it talks
(a 440 Hz tone in PCMU) when a behaviour says so.

Behaviours (:data:`BEHAVIOURS`): ``busy``, ``declined``, ``not_found`` (486, 603, 404), ``silent`` (never
answers), ``ring_forever`` (180, then nothing: CallSim cancels), ``auth_refused`` (a 401 for every INVITE),
``bye_mid_reply`` (answers, talks, and sends BYE while talking), ``no_rtp`` (answers and sends no RTP),
``wrong_address`` (its RTP comes from another port than its SDP names), ``hostile_sip`` (garbage, oversized
and stray SIP messages mid-call), ``rtp_flood`` (RTP at 20 times real time), ``reinvite_hold`` (puts the call
on hold by re-INVITE, then takes it back), ``talks`` (answers and talks: the control).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any

import numpy as np

from voice.lines.codec import mulaw_encode
from voice.lines.rtp_packet import RtpSender
from voice.lines.sip_message import SipRequest, header, new_branch, parse_message, response_to
from voice.lines.sip_sdp import make_offer, parse_remote

REFUSALS = {"busy": 486, "declined": 603, "not_found": 404}
BEHAVIOURS = (*REFUSALS, "silent", "ring_forever", "auth_refused", "bye_mid_reply", "no_rtp",
              "wrong_address", "hostile_sip", "rtp_flood", "reinvite_hold", "talks")  # fmt: skip
TONE = mulaw_encode((6000 * np.sin(2 * np.pi * 440 * np.arange(160) / 8000)).astype(np.int16))
SILENCE = b"\xff" * 160


class _Udp(asyncio.DatagramProtocol):
    def __init__(self, on: Any) -> None:
        self.on = on

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.on(data, (str(addr[0]), int(addr[1])))


class ScriptedPhone:
    """One far end playing ``behaviour`` for every call it gets (one at a time)."""

    def __init__(self, behaviour: str, host: str = "127.0.0.1") -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r} (one of {', '.join(BEHAVIOURS)})")
        self.behaviour = behaviour
        self.host = host
        self.sip: asyncio.DatagramTransport | None = None
        self.rtp: asyncio.DatagramTransport | None = None
        self.other: asyncio.DatagramTransport | None = None  # the wrong address's socket
        self.peer: tuple[str, int] = ("", 0)
        self.media: tuple[str, int] | None = None
        self.invite: SipRequest | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.cseq = 100

    @property
    def uri(self) -> str:
        assert self.sip is not None
        return f"sip:bot@{self.host}:{self.sip.get_extra_info('sockname')[1]}"

    async def __aenter__(self) -> ScriptedPhone:
        loop = asyncio.get_running_loop()
        self.sip, _ = await loop.create_datagram_endpoint(lambda: _Udp(self._sip), local_addr=(self.host, 0))
        self.rtp, _ = await loop.create_datagram_endpoint(
            lambda: _Udp(lambda *_: None), local_addr=(self.host, 0)
        )
        self.other, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, local_addr=(self.host, 0)
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self.tasks:
            task.cancel()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2.0):
                await asyncio.gather(*self.tasks, return_exceptions=True)
        for transport in (self.sip, self.rtp, self.other):
            if transport is not None:
                transport.close()

    # --- SIP ----------------------------------------------------------------------------------------------

    def _sip(self, data: bytes, source: tuple[str, int]) -> None:
        try:
            message = parse_message(data)
        except ValueError:
            return
        if not isinstance(message, SipRequest):
            return
        self.peer = source
        if message.method == "INVITE" and self.invite is not None and self._same_call(message):
            return  # a retransmission, or CallSim answering our re-INVITE's 200 (its ACK comes next)
        if message.method == "OPTIONS":
            self._answer(message, 200)
        elif message.method == "INVITE":
            self._invited(message)
        elif message.method in ("BYE", "CANCEL"):
            self._answer(message, 200)
            if message.method == "CANCEL" and self.invite is not None:
                self._answer(self.invite, 487)
            for task in self.tasks:
                task.cancel()

    def _same_call(self, message: SipRequest) -> bool:
        assert self.invite is not None
        return header(message, "Call-ID") == header(self.invite, "Call-ID")

    def _answer(self, request: SipRequest, status: int, body: str = "", **headers: str) -> None:
        response = response_to(request, status, to_tag="far", body=body)
        for name, value in headers.items():
            response.set_header(name.replace("_", "-"), value)
        assert self.sip is not None
        self.sip.sendto(bytes(response), self.peer)

    def _invited(self, invite: SipRequest) -> None:
        b = self.behaviour
        if b in REFUSALS:
            self._answer(invite, REFUSALS[b])
            return
        if b == "auth_refused":
            self._answer(
                invite, 401, WWW_Authenticate=f'Digest realm="bench", nonce="{secrets.token_hex(8)}"'
            )
            return
        if b == "silent":
            return
        self.invite = invite
        self._answer(invite, 180)
        if b == "ring_forever":
            return
        self.media = (lambda r: (r.address, r.port))(parse_remote(invite.text))
        assert self.sip is not None and self.rtp is not None
        contact = f"<sip:bot@{self.host}:{self.sip.get_extra_info('sockname')[1]}>"
        self._answer(invite, 200, body=self._sdp(), Contact=contact)
        self._start(self._script())

    def _sdp(self, direction: str = "sendrecv") -> str:
        assert self.rtp is not None
        port = self.rtp.get_extra_info("sockname")[1]
        return make_offer(self.host, port, session_id=1, version=self.cseq, direction=direction)

    def _start(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _request(self, method: str, body: str = "") -> None:
        """An in-dialog request from us (BYE, a re-INVITE), to CallSim's Contact address."""
        assert self.invite is not None and self.sip is not None
        self.cseq += 1
        request = SipRequest(method=method, uri=header(self.invite, "Contact").strip("<>") or self.invite.uri)
        port = self.sip.get_extra_info("sockname")[1]
        request.set_header("Via", f"SIP/2.0/UDP {self.host}:{port};branch={new_branch()}")
        request.set_header("From", f"{header(self.invite, 'To')};tag=far")
        request.set_header("To", header(self.invite, "From"))
        request.set_header("Call-ID", header(self.invite, "Call-ID"))
        request.set_header("CSeq", f"{self.cseq} {method}")
        if body:
            request.set_header("Content-Type", "application/sdp")
            request.text = body
        self.sip.sendto(bytes(request), self.peer)

    # --- the call's script ----------------------------------------------------------------------------------

    async def _script(self) -> None:
        b = self.behaviour
        if b == "no_rtp":
            return
        sender = RtpSender(0, ssrc=secrets.randbits(32), first_sequence=1, first_timestamp=0)
        source = self.other if b == "wrong_address" else self.rtp
        assert source is not None and self.sip is not None and self.media is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        for k in range(3000):  # a minute at most
            if b == "rtp_flood" and k >= 100:
                for _ in range(20):
                    source.sendto(sender.packet(TONE, 160), self.media)
            else:
                talking = (k // 100) % 2 == 0  # two seconds of tone, two of silence
                source.sendto(
                    sender.packet(TONE if talking else SILENCE, 160, marker=k % 100 == 0), self.media
                )
            if b == "bye_mid_reply" and k == 150:  # in the middle of its second second of talk
                self._request("BYE")
                return
            if b == "hostile_sip" and k % 50 == 25:
                for junk in (b"\x00" * 64, b"INVITE sip:x SIP/2.0\r\n\r\n", b"X" * 70_000):
                    self.sip.sendto(junk[:65_000], self.peer)
            if b == "reinvite_hold" and k == 100:
                self._request("INVITE", self._sdp("sendonly"))
            if b == "reinvite_hold" and k == 200:
                self._request("INVITE", self._sdp("sendrecv"))
            await asyncio.sleep(max(0.0, start + (k + 1) * 0.02 - loop.time()))
