"""Barge-ins are confirmed by how long the caller spoke (VAD confidence), not by the late "stopped"."""

from __future__ import annotations

import numpy as np
import pytest
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InterruptionFrame,
    TranscriptionFrame,
    UserStartedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.tests.utils import SleepFrame, run_test

from server.turns import VoicingSileroVAD
from tests.server.test_processors import of_type, turn_processor


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


@pytest.mark.models
def test_the_analyzer_remembers_when_it_last_heard_voice(monkeypatch) -> None:
    scripted = iter([0.9, 0.9, 0.1, 0.1, 0.1])
    monkeypatch.setattr(SileroVADAnalyzer, "voice_confidence", lambda self, buffer: next(scripted))
    vad = VoicingSileroVAD(sample_rate=16000, params=VADParams(confidence=0.7))
    window = np.zeros(512, np.int16).tobytes()
    for _ in range(5):
        vad.voice_confidence(window)
    assert vad.analysed == 5 * 512 and vad.last_voiced == 2 * 512
    assert vad.silent_secs() == 3 * 512 / 16000
