"""The scripted far end does what each behaviour says, as CallSim's SIP line sees it (loopback, real UDP)."""

from __future__ import annotations

import asyncio

import pytest

from voice.app.benchmarks.sip_phone import BEHAVIOURS, ScriptedPhone
from voice.core.call import AssistantAudio, AssistantControl, LineClosed, LineInput
from voice.errors import CallRefused
from voice.lines.line import CallStart
from voice.lines.sip import SipLine

START = CallStart("c1", {})


async def take(line: SipLine, seconds: float) -> list[LineInput]:
    got: list[LineInput] = []
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(seconds):
            while not (got and isinstance(got[-1], LineClosed)):
                got.append(await line.recv())
    return got


@pytest.mark.parametrize("behaviour", ["busy", "declined", "not_found", "auth_refused"])
async def test_refusals(behaviour: str) -> None:
    async with ScriptedPhone(behaviour) as phone:
        with pytest.raises(CallRefused) as refused:
            await SipLine(phone.uri).open(START)
    assert refused.value.outcome == behaviour


async def test_it_talks_then_holds_and_takes_the_call_back() -> None:
    async with ScriptedPhone("reinvite_hold") as phone:
        line = SipLine(phone.uri)
        await line.open(START)
        got = await take(line, 4.5)
        assert any(isinstance(item, AssistantAudio) for item in got)
        assert line.describe()["sip_reoffers"] == 2 and line.is_open  # answered, not fatal
        await line.close()


async def test_it_hangs_up_mid_reply() -> None:
    async with ScriptedPhone("bye_mid_reply") as phone:
        line = SipLine(phone.uri)
        await line.open(START)
        got: list[LineInput] = []
        async with asyncio.timeout(6):
            while not (got and isinstance(got[-1], LineClosed)):
                got.append(await line.recv())
        assert isinstance(got[-2], AssistantControl) and got[-2].event == "hangup"
        assert sum(isinstance(item, AssistantAudio) for item in got) > 50  # it was talking
        await line.close()


def test_an_unknown_behaviour_is_refused() -> None:
    assert "talks" in BEHAVIOURS
    with pytest.raises(ValueError, match="unknown behaviour"):
        ScriptedPhone("rude")
