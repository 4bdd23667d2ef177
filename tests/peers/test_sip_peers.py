"""The SIP test peers themselves, before CallSim speaks SIP: Kamailio and two baresip agents on loopback.

Kamailio (proxy, registrar, digest authentication) on 127.0.0.1; baresip ``bot`` registers, answers
automatically and plays a 440 Hz tone; baresip ``callsim`` registers and calls ``sip:bot@127.0.0.1:PORT``
through the proxy (401 for REGISTER, 407 for the INVITE, relayed to bot's registered contact), talks for 2 s
in an 880 Hz tone and hangs up (the BYE through the proxy, which record-routed the call).  Each side's
recording of what it received has the other's tone.

Without baresip or kamailio (``scripts/setup`` installs both) these tests skip, except when ``CI`` or
``CALLSIM_REQUIRE_SIP`` is set, where they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import wave
from pathlib import Path

import numpy as np
import pytest

from tests.peers.baresip import Baresip, BaresipError
from tests.peers.kamailio import Kamailio, kamailio, options_answered

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

REQUIRE_SIP = ("CI", "CALLSIM_REQUIRE_SIP")
RATE = 8000


@pytest.fixture(autouse=True)
def sip_binaries() -> None:
    missing = [name for name in ("baresip", "kamailio") if shutil.which(name) is None]
    if missing:
        why = f"{' and '.join(missing)} not installed (scripts/setup installs baresip-core and kamailio)"
        required = [name for name in REQUIRE_SIP if os.environ.get(name)]
        if required:
            pytest.fail(f"{required[0]} is set but {why}")
        pytest.skip(why)


def tone(path: Path, hz: float, seconds: float, rate: int = RATE) -> Path:
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.3 * 32767 * np.sin(2 * np.pi * hz * t)).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    return path


def logs(*peers: Baresip | Kamailio) -> str:
    """Every peer's output, for a failure's message."""
    return "\n".join(f"--- {getattr(p, 'user', 'kamailio')}\n{p.log_text(8000)}" for p in peers)


def dominant_hz(path: Path) -> tuple[float, float]:
    """The strongest frequency of a WAV's loud part, and how long that part lasts (s)."""
    with wave.open(str(path), "rb") as w:
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64)
    loud = np.flatnonzero(np.abs(x) > 1000)
    if len(loud) < rate // 10:
        return 0.0, len(loud) / rate
    span = x[loud[0] : loud[-1] + 1]  # from the first loud sample to the last: the tone, unbroken
    spectrum = np.abs(np.fft.rfft(span * np.hanning(len(span))))
    return float(np.fft.rfftfreq(len(span), 1 / rate)[spectrum.argmax()]), len(span) / rate


async def test_a_call_through_kamailio_between_two_baresip_agents_carries_both_tones(tmp_path: Path) -> None:
    bot_tone = tone(tmp_path / "bot-440.wav", 440.0, 2.0)
    caller_tone = tone(tmp_path / "callsim-880.wav", 880.0, 2.0)
    async with kamailio() as proxy:
        bot = Baresip(
            "bot",
            registrar=proxy.registrar,
            auth_pass=proxy.users["bot"],
            mic=bot_tone,
            workdir=tmp_path / "bot",
        )
        caller = Baresip(
            "callsim",
            registrar=proxy.registrar,
            auth_pass=proxy.users["callsim"],
            mic=caller_tone,
            workdir=tmp_path / "callsim",
        )
        async with bot, caller:
            assert "401 Unauthorized" in bot.log_text(), logs(bot, caller, proxy)  # REGISTER was challenged
            await caller.dial(proxy.aor("bot"))
            await caller.wait_event("CALL_ESTABLISHED", 10)
            answered = await bot.wait_event("CALL_ESTABLISHED", 10)
            assert answered["direction"] == "incoming" and "callsim" in answered["peeruri"]
            await asyncio.sleep(2.0)
            await caller.hangup()
            closed = await bot.wait_event("CALL_CLOSED", 10)  # the BYE reached it through the proxy
            await caller.wait_event("CALL_CLOSED", 10)
            assert closed["param"] != "end of file", logs(bot, caller, proxy)
        callsim_log, failure = caller.log_text(), logs(bot, caller, proxy)
        assert "407 Proxy Authentication Required" in callsim_log, failure
        assert "Record-Route: <sip:127.0.0.1:" in callsim_log, failure
        assert f"-> 127.0.0.1:{proxy.port}\nBYE sip:" in callsim_log, failure  # record-routed: via the proxy

    bot_heard, bot_loud = dominant_hz(bot.heard())
    caller_heard, caller_loud = dominant_hz(caller.heard())
    assert abs(bot_heard - 880.0) < 10 and bot_loud > 1.5, (bot_heard, bot_loud, failure)
    assert abs(caller_heard - 440.0) < 10 and caller_loud > 1.5, (caller_heard, caller_loud, failure)


async def test_kamailio_answers_options_and_refuses_a_wrong_password(tmp_path: Path) -> None:
    async with kamailio({"bot": "right"}) as proxy:
        assert await asyncio.to_thread(options_answered, proxy.port)
        stranger = Baresip("bot", registrar=proxy.registrar, auth_pass="wrong", workdir=tmp_path / "ua")
        with pytest.raises(BaresipError, match="not registered"):
            async with stranger:
                pass
        assert "403 Forbidden: wrong password" in stranger.log_text(), stranger.log_text()
