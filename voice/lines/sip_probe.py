"""Is a SIP user agent there?  An OPTIONS over UDP, answered or not (``--wait-for-target`` on ``sip:``).

UDP has no connection to accept, so "the bot is up" means it answers a SIP request: OPTIONS is SIP's "are
you there", which every user agent and proxy answers (200, or a 4xx: either proves it listens).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from voice.lines.sip_message import SipResponse, new_branch, new_call_id, new_tag, parse_message
from voice.lines.sip_target import SipTarget


class _Answers(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.answered = asyncio.Event()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        with contextlib.suppress(ValueError):
            if isinstance(parse_message(data), SipResponse):
                self.answered.set()

    def error_received(self, exc: Exception) -> None:
        return None


def options_request(target: SipTarget, local: tuple[str, int]) -> bytes:
    host, port = local
    return (
        f"OPTIONS {target.request_uri} SIP/2.0\r\n"
        f"Via: SIP/2.0/UDP {host}:{port};branch={new_branch()};rport\r\n"
        f"From: <sip:callsim@{host}>;tag={new_tag()}\r\nTo: <{target.request_uri}>\r\n"
        f"Call-ID: {new_call_id(host)}\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
    ).encode()


async def options_answered(target: SipTarget, timeout_s: float, local_host: str = "127.0.0.1") -> bool:
    """Whether ``target`` answers an OPTIONS (sent every 0.5 s) within ``timeout_s``."""
    loop = asyncio.get_running_loop()
    transport, answers = await loop.create_datagram_endpoint(_Answers, local_addr=(local_host, 0))
    try:
        request = options_request(target, transport.get_extra_info("sockname")[:2])
        deadline = loop.time() + timeout_s
        while loop.time() < deadline:
            transport.sendto(request, (target.host, target.port))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(0.5, max(0.0, deadline - loop.time()))):
                    await answers.answered.wait()
                    return True
        return False
    finally:
        transport.close()
