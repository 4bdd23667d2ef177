"""The running turn model: a turn ends once its pieces are transcribed and the caller has been silent as
long as their words call for (finished, only an opener, unfinished), learning the caller's own pauses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pipecat.frames.frames import (
    Frame,
    TranscriptionFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.tests.utils import SleepFrame, run_test
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from server.piecewise_stt import CallerTurnFrame, PieceQueuedFrame
from server.processors import SegmentWithoutWordsFrame
from server.turn_end import RunningTurnStopStrategy
from server.turns import BargeInTurnStartStrategy, turn_stop_strategy
from tests.server.test_processors import of_type
from voice.contract.tuning import TurnSettings


class Voicing:
    """``caller_silent_secs`` double: silent since the last :meth:`speak`, on the event loop's clock."""

    def __init__(self) -> None:
        self.last: float | None = None

    def speak(self) -> None:
        self.last = asyncio.get_running_loop().time()

    def __call__(self) -> float:
        if self.last is None:
            return 0.0
        return asyncio.get_running_loop().time() - self.last


class Speak(SleepFrame):
    """A test step: the caller is voiced now (the frame itself only sleeps a moment)."""


def processor(
    voicing: Voicing, onset: Callable[[], bool] | None = None, **kwargs: float
) -> tuple[UserTurnProcessor, RunningTurnStopStrategy]:
    strategy = RunningTurnStopStrategy(caller_silent_secs=voicing, caller_onset=onset, **kwargs)
    turns = UserTurnProcessor(
        user_turn_strategies=UserTurnStrategies(start=[BargeInTurnStartStrategy()], stop=[strategy]),
        user_turn_stop_timeout=5.0,
    )
    return turns, strategy


def piece(n: int, text: str | None) -> list[Frame]:
    """Piece ``n`` queued, then its transcript (or no words)."""
    if text is None:
        return [PieceQueuedFrame(piece=n), SegmentWithoutWordsFrame(piece=n)]
    return [PieceQueuedFrame(piece=n), TranscriptionFrame(text, "", "t", result={"piece": n})]


async def run(
    voicing: Voicing, frames: list[Frame], onset: Callable[[], bool] | None = None, **kwargs: float
) -> tuple[list[Frame], RunningTurnStopStrategy]:
    turns, strategy = processor(voicing, onset, **kwargs)
    voicing.speak()  # the harness's frames come once the pipeline runs: speech until the first step
    down, _ = await run_test(turns, frames_to_send=frames)
    return down, strategy


async def test_a_finished_sounding_turn_ends_after_the_short_silence_with_its_pieces_named() -> None:
    frames = [
        VADUserStartedSpeakingFrame(),
        *piece(0, "喂你好美团外卖，"),
        *piece(1, None),
        *piece(2, "餐到了。"),
        VADUserStoppedSpeakingFrame(),
    ]
    down, _ = await run(Voicing(), [*frames, SleepFrame(0.5)], end_secs=0.2, end_max_secs=0.4)
    (turn,) = of_type(down, CallerTurnFrame)
    assert turn.pieces == (0, 2) and of_type(down, UserStoppedSpeakingFrame)


async def test_not_before_the_silence_and_never_while_a_piece_is_with_the_asr() -> None:
    voicing = Voicing()
    short = [
        VADUserStartedSpeakingFrame(),
        *piece(0, "餐到了。"),
        VADUserStoppedSpeakingFrame(),
        SleepFrame(0.1),
    ]
    down, _ = await run(voicing, short, end_secs=0.3)
    assert not of_type(down, UserStoppedSpeakingFrame)  # 0.1 s of silence is not 0.3
    pending = [VADUserStartedSpeakingFrame(), *piece(0, "喂"), PieceQueuedFrame(piece=1)]
    pending += [VADUserStoppedSpeakingFrame(), SleepFrame(0.6)]
    down, _ = await run(Voicing(), pending, end_secs=0.3)
    assert not of_type(down, UserStoppedSpeakingFrame)  # piece 1 never came back
    speaking = [VADUserStartedSpeakingFrame(), *piece(0, "餐到了。"), SleepFrame(0.6)]
    down, _ = await run(Voicing(), speaking, end_secs=0.3)
    assert not of_type(down, UserStoppedSpeakingFrame)  # the VAD has not said "stopped": pipecat would not


async def test_no_turn_ends_while_a_sound_silero_has_not_voiced_yet_may_be_the_caller_going_on() -> None:
    onset = [True]  # the latest windows: audible, not (yet) voice
    frames = [VADUserStartedSpeakingFrame(), *piece(0, "餐到了。"), VADUserStoppedSpeakingFrame()]
    down, _ = await run(
        Voicing(), [*frames, SleepFrame(0.4)], lambda: onset[0], end_secs=0.1, end_max_secs=0.1
    )
    assert not of_type(down, UserStoppedSpeakingFrame)  # 0.4 s of quiet, but maybe a word's onset
    onset[0] = False  # Silero's verdict: it was not voice (or the hold's windows ran out)
    down, _ = await run(
        Voicing(), [*frames, SleepFrame(0.4)], lambda: onset[0], end_secs=0.1, end_max_secs=0.1
    )
    assert of_type(down, UserStoppedSpeakingFrame)


async def test_unfinished_words_keep_the_floor_and_an_opener_waits_the_longer_silence() -> None:
    unfinished = [VADUserStartedSpeakingFrame(), *piece(0, "如果要改时间，"), VADUserStoppedSpeakingFrame()]
    unfinished.append(SleepFrame(0.6))
    down, _ = await run(Voicing(), unfinished, end_secs=0.2, end_max_secs=0.3, max_silence_secs=1.5)
    assert not of_type(down, UserStoppedSpeakingFrame)
    opener = [VADUserStartedSpeakingFrame(), *piece(0, "喂 你好"), VADUserStoppedSpeakingFrame()]
    down, _ = await run(Voicing(), [*opener, SleepFrame(0.3)], end_secs=0.1, end_max_secs=0.5)
    assert not of_type(down, UserStoppedSpeakingFrame)  # 0.3 s: past the short silence, not the long
    down, _ = await run(Voicing(), [*opener, SleepFrame(0.8)], end_secs=0.1, end_max_secs=0.5)
    assert of_type(down, UserStoppedSpeakingFrame)


async def caller_pauses(voicing: Voicing, *pauses: float, strategy: RunningTurnStopStrategy) -> list[bool]:
    """Once the turn is under way, the caller speaks on after each pause in turn; whether the turn was
    still open each time they did."""
    while not strategy._in_turn:
        voicing.speak()
        await asyncio.sleep(0.01)
    still_open = []
    for pause in pauses:
        voicing.speak()
        await asyncio.sleep(pause)
        still_open.append(strategy._in_turn)
    voicing.speak()
    return still_open


async def test_a_caller_who_pauses_after_finished_words_and_goes_on_is_waited_for_longer() -> None:
    turns, strategy = processor(voicing := Voicing(), end_secs=0.5, end_max_secs=0.9)
    assert strategy.end_silence_secs == 0.9  # the caller's rhythm unknown: the longest wait
    # the VAD has not said "stopped", so the 0.6 s pause does not end the turn: it is gone on after
    task = asyncio.ensure_future(caller_pauses(voicing, 0.1, 0.6, strategy=strategy))
    frames = [VADUserStartedSpeakingFrame(), *piece(0, "那我放门口了"), SleepFrame(1.0)]
    await run_test(turns, frames_to_send=frames)
    await task
    assert 0.8 <= strategy.end_silence_secs <= 0.9  # 0.6 s and 50 % more, under the ceiling (polled)


async def test_a_pause_after_unfinished_words_teaches_nothing_one_after_an_opener_does() -> None:
    for words, learns in (
        ("那个", False),
        ("如果要改时间", False),
        ("喂 你好", True),
        ("我是送外卖的，", True),
    ):
        turns, strategy = processor(voicing := Voicing(), end_secs=0.2, end_max_secs=0.8)
        task = asyncio.ensure_future(caller_pauses(voicing, 0.3, 0.3, strategy=strategy))
        frames = [VADUserStartedSpeakingFrame(), *piece(0, words), SleepFrame(0.9)]
        await run_test(turns, frames_to_send=frames)
        await task
        assert (strategy.end_silence_secs < 0.8) is learns, words


async def test_a_caller_who_paused_and_went_on_is_answered_sooner_but_not_inside_such_a_pause() -> None:
    turns, strategy = processor(voicing := Voicing(), end_secs=0.2, end_max_secs=0.6)
    task = asyncio.ensure_future(caller_pauses(voicing, 0.25, strategy=strategy))
    frames = [VADUserStartedSpeakingFrame(), *piece(0, "到付的得先给钱啊"), VADUserStoppedSpeakingFrame()]
    down, _ = await run_test(turns, frames_to_send=[*frames, SleepFrame(0.8)])
    assert await task == [True]  # not ended in the 0.25 s pause (the rhythm unknown: 0.6 s) ...
    assert len(of_type(down, CallerTurnFrame)) == 1  # ... but once silent after it
    assert 0.33 <= strategy.end_silence_secs <= 0.4  # 0.25 s and 50 % more (polled)


async def test_speech_that_began_no_turn_is_not_the_next_turns() -> None:
    voicing = Voicing()
    frames = [
        VADUserStartedSpeakingFrame(),
        *piece(0, "嗯"),
        SleepFrame(0.05),
        VADUserStoppedSpeakingFrame(),
    ]
    turns, strategy = processor(voicing, end_secs=0.2)
    # a backchannel over the assistant: no turn starts (confirmation never due), its piece is forgotten
    turns = UserTurnProcessor(
        user_turn_strategies=UserTurnStrategies(
            start=[BargeInTurnStartStrategy(confirm_secs=1.0, assistant_audible=lambda: True)],
            stop=[strategy],
        ),
        user_turn_stop_timeout=5.0,
    )
    voicing.speak()
    down, _ = await run_test(turns, frames_to_send=[*frames, SleepFrame(0.3)])
    assert not of_type(down, CallerTurnFrame) and strategy.text == ""


def test_the_running_model_is_the_default_and_reads_the_vads_voicing() -> None:
    assert TurnSettings().turn_model == "running"
    settings = TurnSettings(turn_end_secs=0.25, turn_end_max_secs=0.4)
    strategy = turn_stop_strategy(settings, caller_silent_secs=lambda: 0.0)
    assert isinstance(strategy, RunningTurnStopStrategy) and strategy.end_silence_secs == 0.4
    try:
        turn_stop_strategy(TurnSettings())
    except ValueError as exc:
        assert "caller_silent_secs" in str(exc)
    else:
        raise AssertionError("the running model without the VAD's voicing was accepted")
