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
from voice.react import scripted_caller
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
    with FakeLLM().respond(scripted_caller.answer) as fake:
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
    with FakeLLM().respond(scripted_caller.answer) as fake:
        early, _ = await greeted(fake.url, 240, MemoryASR([], default="您好"))
        late, _ = await greeted(fake.url, None, MemoryASR([], default="您好"))
    plans = [[(e.text, e.think) for e in log if isinstance(e, ev.TurnPlanned)] for log in (early, late)]
    assert plans[0] == plans[1] and plans[0]
    assert not any(isinstance(e, ev.CallerEarly) for e in late)  # off: decided after the reply's end


async def test_a_kept_guess_made_before_the_request_is_supplied_in_the_same_frame(no_openai_env):
    with FakeLLM().respond(scripted_caller.answer) as fake:
        events, session = await greeted(fake.url, 240, MemoryASR([], default="您好"), in_place=False)
    assert session.early.kept == 1
    [request] = [e for e in events if isinstance(e, ev.TurnRequested)]
    [planned] = [e for e in events if isinstance(e, ev.TurnPlanned)]
    assert planned.t == request.t  # supplied with the request, not a frame later


async def test_pieces_heard_during_the_callers_own_turn_are_not_transcribed(no_openai_env):
    """An echo (the assistant playing the caller's turn back) closes pieces while the caller speaks: none is
    transcribed, and the piece under way when the reply begins is heard from the reply's onset."""
    frame, heard_at = [0], []

    class Ears(MemoryASR):
        def transcribe(self, pcm):
            heard_at.append(frame[0])
            return super().transcribe(pcm)

    S = ms_to_samples
    with FakeLLM().respond(scripted_caller.answer) as fake:
        caller = parse_caller(
            "openai:rules", base_url=fake.url, wait_in_place=True, cache="off", early_ms=240
        )
        session = caller.session(TAKEOUT, CallerTiming(seed=3), MemoryTTS(), Ears([], default="您好"))
        core = await session.start(max_turns=3)
        core.receive(AssistantAudio(tone(400)), 0)
        heard: list[np.ndarray] = []
        echoed = False
        while len([e for e in core.events if isinstance(e, ev.TurnRequested)]) < 2:
            heard.append(core.tick().heard)
            frame[0] = core.now
            spoke = [e for e in core.events if isinstance(e, ev.CallerSpoke)]
            if spoke and not echoed:  # the echo: 300 ms on, 300 ms off, over the turn and 1 s past it
                echoed = True
                length = spoke[0].speech_end - core.now + S(1000)
                pattern = np.concatenate([tone(300), np.zeros(S(300), np.int16)])
                core.receive(AssistantAudio(np.resize(pattern, length)), core.now)
            await session.after_tick(lambda: np.concatenate(heard))
        session.stop()
        caller.close()
    caller_turn = next(e for e in core.events if isinstance(e, ev.CallerSpoke))
    reply = [e for e in core.events if isinstance(e, ev.ReplyStarted)][1]
    assert caller_turn.speech_end - caller_turn.speech_start > S(1200)  # long enough to close pieces
    during = [at for at in heard_at if caller_turn.speech_start <= at < reply.t]
    assert during == [] and any(at >= reply.t for at in heard_at)
    assert session._pieces is not None and any(p[0] == reply.at for p in session._pieces.closed)
