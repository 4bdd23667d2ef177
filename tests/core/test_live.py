"""A person as the caller: their audio is fed in, their turns are found in it, and every metric applies."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fakes import ReferenceBot, reference, tone
from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, Pcm, ms_to_samples, silence
from voice.core.live import LiveCallCore, LiveTiming
from voice.metrics.measure import measure
from voice.recording import Recording


def speech(*parts: tuple[str, float]) -> Pcm:
    """A microphone signal: ``("talk", ms)`` is a tone, ``("quiet", ms)`` silence.  (A tone's first sample
    is 0: its speech starts one sample in, see :func:`at`.)"""
    return np.concatenate([tone(ms) if kind == "talk" else silence(ms_to_samples(ms)) for kind, ms in parts])


def at(ms: float) -> int:
    """The first audible sample of a tone that starts at ``ms``."""
    return ms_to_samples(ms) + 1


def drive(
    core: LiveCallCore, mic: Pcm, bot: ReferenceBot, *, then_hang_up: bool = True, max_frames: int = 5000
) -> Recording:
    """Feed ``mic`` one 20 ms frame per tick (a microphone), against the in-memory reference."""
    bot.start()
    said, heard = [], []
    for _ in range(max_frames):
        s = core.now
        for at, item in bot.due(s, s + FRAME_SAMPLES):
            core.receive(item, at)
        chunk = mic[s : s + FRAME_SAMPLES]
        if len(chunk):
            core.feed(chunk, s)
        elif then_hang_up:
            core.hang_up_after_reply(s)
        tick = core.tick()
        said.append(tick.caller)
        heard.append(tick.heard)
        bot.frame(tick.caller)
        if tick.done:
            return Recording("live", np.concatenate(said), np.concatenate(heard), core.events)
    raise AssertionError("the call never ended")


def test_the_persons_turns_are_found_and_the_reply_latency_is_exact():
    bot = reference(reply_ms=450, greeting_ms=300, reply_len_ms=1200)
    # the greeting plays 300..1800 ms; the person answers after it, twice
    mic = speech(("quiet", 2200), ("talk", 1500), ("quiet", 3000), ("talk", 900), ("quiet", 500))
    rec = drive(LiveCallCore(), mic, bot)
    spoken = [e for e in rec.events if isinstance(e, ev.CallerSpoke)]
    assert [(e.mode, e.speech_start, e.speech_end) for e in spoken] == [
        ("first", at(2200), ms_to_samples(3700)),
        ("after_reply", at(6700), ms_to_samples(7600)),
    ]
    m = measure(rec)
    assert not m.failed and m.outcome == "completed"
    assert [t.latency_ms for t in m.turns] == pytest.approx([450, 450], abs=1.0)
    assert m.first_word_ms == pytest.approx(300, abs=1.0)


def test_a_short_sound_over_the_reply_is_a_backchannel_and_a_long_one_a_barge_in():
    bot = reference(reply_ms=400, greeting_ms=300, reply_len_ms=3000, stop_ms=200)
    # greeting 300..3300: "嗯" (300 ms) at 1000 ms; then a turn; its reply starts at 5400 and is cut at 6000
    mic = speech(
        ("quiet", 1000), ("talk", 300), ("quiet", 2600), ("talk", 1000), ("quiet", 1100),
        ("talk", 1200), ("quiet", 4000),
    )  # fmt: skip
    rec = drive(LiveCallCore(), mic, bot)
    said = [e for e in rec.events if isinstance(e, ev.BackchannelSaid)]
    assert [(e.start, e.end) for e in said] == [(at(1000), ms_to_samples(1300))]
    spoken = [e for e in rec.events if isinstance(e, ev.CallerSpoke)]
    assert [e.mode for e in spoken] == ["first", "barge_in"]
    barge = measure(rec).turns[1].barge_in
    assert barge is not None and barge.success and not barge.scripted
    assert barge.stop_latency_ms == pytest.approx(200, abs=25)  # the bot stops 200 ms into the speech


def test_clicks_are_no_turn_and_a_call_without_a_reply_ends_after_the_wait():
    bot = reference(reply_ms=400, greeting_ms=300, reply_len_ms=800)
    mic = speech(("quiet", 1500), ("talk", 60), ("quiet", 500))
    timing = LiveTiming(last_reply_wait_ms=1000)
    rec = drive(LiveCallCore(timing=timing), mic, bot)
    assert not [e for e in rec.events if isinstance(e, ev.CallerSpoke)]
    end = next(e for e in rec.events if isinstance(e, ev.CallEnded))
    assert (end.reason, end.failed, end.detail) == ("completed", False, "the last reply never came")


def test_hanging_up_now_ends_the_call_with_what_was_being_said():
    core = LiveCallCore()
    for _ in range(10):
        core.feed(tone(20), core.now)
        core.tick()
    core.hang_up(core.now)
    tick = core.tick()
    assert tick.done and tick.hangup == "completed"
    spoken = [e for e in core.events if isinstance(e, ev.CallerSpoke)]
    assert [(e.speech_start, e.speech_end) for e in spoken] == [(1, 10 * FRAME_SAMPLES)]
    assert core.outcome is not None and core.outcome.detail == "the caller hung up"
