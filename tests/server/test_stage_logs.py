"""Stage timestamps in the built-in assistant's ``log`` events (what scripts/bench_stages reads).

Positions (``*_at_ms``) count the caller audio that has passed through a processor, so they lie on the
caller's timeline; they are interpolated between frames by at most one frame (20 ms).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.tests.utils import SleepFrame, run_test

from server.policy.processor import PolicyProcessor, StreamClock
from server.processors import CallSimTTSService, split_for_tts
from voice.speech.tts.memory import MemoryTTS

FRAME_SLACK_MS = 20.0  # interpolation between frames adds at most one frame


@dataclass
class _Reply:
    text: str
    end_call: bool = False


class _Policy:
    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = view

    def greeting(self) -> str:
        return "您好。"

    def respond(self, caller_text: str) -> _Reply:
        return _Reply(f"收到：{caller_text}")


def audio(n: int) -> list[Frame]:
    """``n`` 20 ms frames of silence, as the transport delivers the caller's stream."""
    return [InputAudioRawFrame(bytes(640), 16000, 1) for _ in range(n)]


def logs(frames: list[Frame] | Any, kind: str) -> list[dict[str, Any]]:
    return [
        f.message
        for f in frames
        if isinstance(f, OutputTransportMessageUrgentFrame) and f.message.get("kind") == kind
    ]


START = InputTransportMessageFrame(message={"event": "start", "call_id": "c", "dialogue": {"id": "d"}})


def test_stream_clock_counts_audio_and_interpolates_by_at_most_a_frame() -> None:
    clock = StreamClock()
    assert clock.now_ms() == 0.0
    for frame in audio(3):
        assert isinstance(frame, InputAudioRawFrame)
        clock.add(frame)
    assert 60.0 <= clock.now_ms() <= 60.0 + FRAME_SLACK_MS


async def test_the_caller_log_places_vad_stop_turn_end_and_transcript_on_the_callers_timeline() -> None:
    policy = PolicyProcessor(_Policy, start_timeout_secs=5)
    frames: list[Frame] = [
        START,
        *audio(25),
        UserStartedSpeakingFrame(),
        *audio(15),  # caller speech up to 800 ms
        VADUserStoppedSpeakingFrame(),
        *audio(5),
        UserStoppedSpeakingFrame(),  # the turn ends at 900 ms; its transcript comes 200 ms later
        *audio(10),
        TranscriptionFrame("你好。", "", "t", result={"audio_secs": 0.6, "asr_secs": 0.1}),
        SleepFrame(0.05),
    ]
    down, _ = await run_test(policy, frames_to_send=frames)
    (caller,) = logs(down, "caller")
    assert caller["vad_stop_at_ms"] == pytest.approx(800, abs=FRAME_SLACK_MS)
    assert caller["turn_end_at_ms"] == pytest.approx(900, abs=FRAME_SLACK_MS)
    assert caller["transcript_at_ms"] == pytest.approx(1100, abs=FRAME_SLACK_MS)
    assert caller["answer_at_ms"] >= caller["transcript_at_ms"]
    assert caller["asr_wait_ms"] >= 0 and caller["policy_ms"] >= 0
    assert caller["asr"] == [{"audio_secs": 0.6, "asr_secs": 0.1}]
    reply = logs(down, "reply")[0]
    assert reply["at_ms"] >= caller["answer_at_ms"]
    assert [f.text for f in down if isinstance(f, TTSSpeakFrame)][-1] == "收到：你好。"


async def test_the_transcript_arriving_first_means_no_asr_wait() -> None:
    policy = PolicyProcessor(_Policy, start_timeout_secs=5)
    frames: list[Frame] = [
        START,
        UserStartedSpeakingFrame(),
        *audio(10),
        TranscriptionFrame("你好。", "", "t"),
        SleepFrame(0.1),
        UserStoppedSpeakingFrame(),
        SleepFrame(0.05),
    ]
    down, _ = await run_test(policy, frames_to_send=frames)
    (caller,) = logs(down, "caller")
    assert caller["asr_wait_ms"] < 50  # answered on the turn's end: the transcript was already there
    assert caller["turn_end_at_ms"] >= caller["transcript_at_ms"]


async def test_the_reply_audio_going_out_is_logged_as_a_stream_position() -> None:
    policy = PolicyProcessor(_Policy, start_timeout_secs=5)
    await run_test(policy, frames_to_send=[START, *audio(5), SleepFrame(0.05)])
    down, up = await run_test(
        policy,
        frames_to_send=[BotStartedSpeakingFrame()],
        frames_to_send_direction=FrameDirection.UPSTREAM,
    )
    assert any(isinstance(f, BotStartedSpeakingFrame) for f in up)  # still passed on
    (speaking,) = logs(down, "speaking")
    assert speaking["at_ms"] >= 0


async def test_tts_logs_the_first_pieces_synthesis_time_and_position() -> None:
    tts = CallSimTTSService(MemoryTTS())
    frames: list[Frame] = [*audio(10), TTSSpeakFrame("您好，请问您是哪位？"), SleepFrame(0.3)]
    down, _ = await run_test(tts, frames_to_send=frames)
    (log,) = logs(down, "tts")
    assert log["text"] == split_for_tts("您好，请问您是哪位？")[0] and log["first_audio_ms"] >= 0
    assert log["first_audio_at_ms"] == pytest.approx(200, abs=FRAME_SLACK_MS + 300)
    silent = CallSimTTSService(MemoryTTS(), send_logs=False)
    down, _ = await run_test(silent, frames_to_send=frames)
    assert not logs(down, "tts")
