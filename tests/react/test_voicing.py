"""The reactive caller's voice: a turn voiced first clause first, the rest handed over once voiced."""

import random

import numpy as np

from voice.core.caller import CallerTiming
from voice.dialogues import CallerTurn
from voice.errors import EngineError
from voice.react.decision import CallerDecision
from voice.react.voicing import Voicing
from voice.speech.engine_lock import EngineLock
from voice.speech.tts.memory import MemoryTTS

SAY = CallerDecision("say", turn=CallerTurn("外卖到了，放门口吧。"))


class Core:
    """Stands in for the core: records what it is handed."""

    now = 1600

    def __init__(self) -> None:
        self.extended: list[tuple[int, int, int]] = []  # turn, samples, at
        self.said: list[str | None] = []

    def extend(self, index: int, rest: np.ndarray, at: int, *, said: str | None = None) -> None:
        self.extended.append((index, len(rest), at))
        self.said.append(said)


def voicing(tts=None, **kw) -> Voicing:
    return Voicing(tts or MemoryTTS(), CallerTiming(), 1.0, EngineLock(), **kw)


async def test_a_turn_of_two_clauses_starts_on_the_first_and_its_rest_is_handed_over_once_voiced():
    tts = MemoryTTS()
    voice = voicing(tts)
    say, rest = await voice.say(SAY, 2, random.Random(0), None)
    assert say.more and rest == ("放门口吧。", 200) and tts.requests == ["外卖到了，"]
    assert say.turn.text == "外卖到了，放门口吧。" and say.turn.index == 2
    core = Core()
    voice.start(2, "外卖到了，", rest)
    await voice.supply(core, wait=True)
    assert tts.requests[-1] == "放门口吧。"
    [(index, samples, at)] = core.extended
    assert (index, at) == (2, core.now) and samples > 0
    await voice.supply(core)  # handed over once only
    assert len(core.extended) == 1


async def test_a_turn_planned_before_the_call_is_voiced_whole():
    tts = MemoryTTS()
    say, rest = await voicing(tts).say(SAY, 0, random.Random(0), None, whole=True)
    assert not say.more and rest is None and tts.requests == ["外卖到了，放门口吧。"]


class FailsOnRest(MemoryTTS):
    def synthesize(self, text: str) -> np.ndarray:
        if text == "放门口吧。":
            raise EngineError("the voice broke")
        return super().synthesize(text)


class SlowRest(MemoryTTS):
    def synthesize(self, text: str) -> np.ndarray:
        if text == "放门口吧。":
            import time

            time.sleep(0.5)
        return super().synthesize(text)


async def test_a_rest_the_engine_fails_on_or_takes_too_long_for_ends_the_turn_with_its_first_clause():
    for voice in (voicing(FailsOnRest()), voicing(SlowRest(), timeout_s=0.05)):
        _, rest = await voice.say(SAY, 1, random.Random(0), None)
        assert rest is not None
        core = Core()
        voice.start(1, "外卖到了，", rest)
        await voice.supply(core, wait=True)
        assert core.extended == [(1, 0, core.now)]  # nothing more: the core ends the turn there
        assert core.said == ["外卖到了，"]  # and records only what was said


async def test_stop_drops_a_rest_still_being_voiced():
    voice = voicing(SlowRest())
    _, rest = await voice.say(SAY, 1, random.Random(0), None)
    assert rest is not None
    voice.start(1, "外卖到了，", rest)
    voice.stop()
    core = Core()
    await voice.supply(core, wait=True)
    assert core.extended == []
