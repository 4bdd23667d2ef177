"""OPTIONS as "are you there" for a UDP SIP target: answered by a real SIP far end, not by a closed port."""

from __future__ import annotations

from voice.app.benchmarks.sip_phone import ScriptedPhone
from voice.lines.sip_probe import options_answered
from voice.lines.sip_target import parse_sip_uri


async def test_a_listening_user_agent_answers_and_a_closed_port_does_not() -> None:
    async with ScriptedPhone("talks") as phone:
        assert await options_answered(parse_sip_uri(phone.uri), 2.0)
    assert not await options_answered(parse_sip_uri("sip:bot@127.0.0.1:9"), 0.6)
