"""Early decisions (issue 26): a guess at a reply's pause is kept when the reply had ended there, thrown
away (and counted) when more came, and changes nothing else: no think time, no extra request when kept.

The caller hears a hand-made greeting frame by frame (no line, no clock); its model is the rule-played
stand-in behind a real HTTP server in the test process, its ears a scripted transcriber.
"""

import asyncio

import numpy as np

from tests.fakes import tone
from tests.llm_fake import FakeLLM
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.core.call import AssistantAudio
from voice.core.caller import CallerTiming
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.react import standin
from voice.react.caller import parse_caller
from voice.react.early import EarlyCount
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

TAKEOUT = next(d for d in load_dialogues(bundled_dialogues_path()) if d.id == "takeout-regular-01")


async def greeted(url, early_ms, asr, *, in_place=True):
    """The caller hears a greeting with a 400 ms pause inside (frame by frame, no line), until it speaks
    (``in_place`` False: as on a real clock, its work runs between frames)."""
    caller = parse_caller(
        "openai:rules", base_url=url, wait_in_place=in_place, cache="off", early_ms=early_ms
    )
    session = caller.session(TAKEOUT, CallerTiming(seed=3), MemoryTTS(), asr)
    core = await session.start(max_turns=3)
    S = ms_to_samples
    core.receive(AssistantAudio(np.concatenate([tone(400), np.zeros(S(400), np.int16), tone(400)])), 0)
    heard = []
    for _ in range(200):
        heard.append(core.tick().heard)
        if any(isinstance(e, ev.CallerSpoke) for e in core.events):
            break
        await session.after_tick(lambda: np.concatenate(heard))
        if not in_place:  # a frame's time for the session's tasks (the stand-in answers at once)
            await asyncio.sleep(0.05)
    session.stop()
    caller.close()
    return core.events, session


async def test_an_early_guess_at_a_pause_is_thrown_away_when_more_comes_and_kept_at_the_end(no_openai_env):
    with FakeLLM().respond(standin.answer) as fake:
        events, session = await greeted(fake.url, 240, MemoryASR(["您好", "请讲"]))
        asked = len(fake.requests)
    early = [(e.reply_end, e.kept) for e in events if isinstance(e, ev.CallerEarly)]
    assert early == [(ms_to_samples(400), False), (ms_to_samples(1200), True)]
    assert session.early == EarlyCount(asked=2, kept=1, wasted=1)
    assert asked == 2  # the kept guess was the decision: no request when the reply had ended
    [decided] = [e for e in events if isinstance(e, ev.CallerDecided)]
    assert decided.heard == "助理：您好请讲"  # both pieces, each transcribed once, as it closed
    assert not any(isinstance(e, ev.CallerLate) for e in events)


async def test_a_thrown_away_guess_changes_no_think_time(no_openai_env):
    with FakeLLM().respond(standin.answer) as fake:
        early, _ = await greeted(fake.url, 240, MemoryASR([], default="您好"))
        late, _ = await greeted(fake.url, None, MemoryASR([], default="您好"))
    plans = [[(e.text, e.think) for e in log if isinstance(e, ev.TurnPlanned)] for log in (early, late)]
    assert plans[0] == plans[1] and plans[0]
    assert not any(isinstance(e, ev.CallerEarly) for e in late)  # off: decided after the reply's end


async def test_a_kept_guess_made_before_the_request_is_supplied_in_the_same_frame(no_openai_env):
    with FakeLLM().respond(standin.answer) as fake:
        events, session = await greeted(fake.url, 240, MemoryASR([], default="您好"), in_place=False)
    assert session.early.kept == 1
    [request] = [e for e in events if isinstance(e, ev.TurnRequested)]
    [planned] = [e for e in events if isinstance(e, ev.TurnPlanned)]
    assert planned.t == request.t  # supplied with the request, not a frame later
