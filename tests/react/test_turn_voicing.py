"""The reactive caller's voice: a turn voiced first clause first, the rest handed over once voiced."""

import asyncio
import random
import threading

import numpy as np

from voice.core.caller import CallerTiming
from voice.dialogues import CallerTurn
from voice.errors import EngineError
from voice.react.decision import CallerDecision
from voice.react.turn_voicing import Voicing
from voice.speech.caller_plan import speak_rest
from voice.speech.engine_lock import EngineLock
from voice.speech.tts.memory import MemoryTTS

SAY = CallerDecision("say", turn=CallerTurn("外卖到了，放门口吧。"))


class Core:
    """Stands in for the core: records what it is handed."""

    now = 1600

    def __init__(self) -> None:
        self.extended: list[tuple[int, int, int]] = []  # turn, samples, at
        self.said: list[str | None] = []
        self.more: list[bool] = []
        self.pieces: list[np.ndarray] = []

    def extend(
        self, index: int, rest: np.ndarray, at: int, *, said: str | None = None, more: bool = False
    ) -> None:
        self.extended.append((index, len(rest), at))
        self.said.append(said)
        self.more.append(more)
        self.pieces.append(rest)


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


# --- the rest streamed clause by clause ---------------------------------------------------------------------

LONG = CallerDecision("say", turn=CallerTurn("外卖到了，放门口吧，我放好了，谢谢您啊。"))
CLAUSES = ["放门口吧，", "我放好了，", "谢谢您啊。"]


async def test_a_rest_of_three_clauses_is_voiced_one_by_one_and_handed_over_in_order() -> None:
    tts = MemoryTTS()
    voice = voicing(tts)
    _, rest = await voice.say(LONG, 1, random.Random(0), None)
    assert rest is not None
    core = Core()
    voice.start(1, "外卖到了，", rest)
    await voice.supply(core, wait=True)
    assert tts.requests[1:] == CLAUSES  # each clause its own synthesis pass
    assert core.more == [True, True, False]  # the last one ends the turn
    assert core.said == [
        "外卖到了，放门口吧，",
        "外卖到了，放门口吧，我放好了，",
        "外卖到了，" + "".join(CLAUSES),
    ]
    for clause, piece in zip(CLAUSES, core.pieces, strict=True):  # the same samples as the clause alone
        assert np.array_equal(piece, speak_rest(MemoryTTS(), clause, 200))


class Gated(MemoryTTS):
    """Holds the second clause of the rest until ``gate`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def synthesize(self, text: str) -> np.ndarray:
        if text == CLAUSES[1]:
            assert self.gate.wait(10)
        return super().synthesize(text)


async def test_each_clause_is_handed_over_as_soon_as_it_is_voiced_and_the_lock_is_free_between_clauses() -> (
    None
):
    tts = Gated()
    voice = voicing(tts)
    _, rest = await voice.say(LONG, 1, random.Random(0), None)
    assert rest is not None
    core = Core()
    await voice.lock.acquire()  # another call holds the engine: the rest waits for it
    voice.start(1, "外卖到了，", rest)
    await asyncio.sleep(0.01)
    voice.lock.release()
    await voice.lock.acquire()  # queued behind the first clause: taken before the second
    assert tts.requests[1:] == CLAUSES[:1]
    voice.lock.release()
    for _ in range(200):  # as the session does after every frame
        await voice.supply(core)
        if core.extended:
            break
        await asyncio.sleep(0.01)
    assert core.more == [True]  # the first clause is in while the second is being voiced
    tts.gate.set()
    await voice.supply(core, wait=True)
    assert core.more == [True, True, False]


class FailsOnSecond(MemoryTTS):
    def synthesize(self, text: str) -> np.ndarray:
        if text == CLAUSES[1]:
            raise EngineError("the voice broke")
        return super().synthesize(text)


async def test_a_clause_that_fails_ends_the_turn_with_what_was_handed_over() -> None:
    voice = voicing(FailsOnSecond())
    _, rest = await voice.say(LONG, 1, random.Random(0), None)
    assert rest is not None
    core = Core()
    voice.start(1, "外卖到了，", rest)
    await voice.supply(core, wait=True)
    assert [samples > 0 for _, samples, _ in core.extended] == [True, False]  # the first clause, then the end
    assert core.more == [True, False] and core.said[-1] == "外卖到了，放门口吧，"
