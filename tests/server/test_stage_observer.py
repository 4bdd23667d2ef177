"""The stage observer: the built-in assistant's stage figures (what scripts/bench_stages reads).

The observer is fed timestamped frames, so most of it is tested on made-up pipeline-clock times, exactly;
the last tests run it on real processors in pipecat's harness to check what they tell it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSSpeakFrame,
    TTSStartedFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import FrameProcessed, FramePushed
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

from server.policy.processor import TURN_TRANSCRIPTS, PolicyProcessor
from server.processors import TTS_PIECE, CallSimSTTService, CallSimTTSService, split_for_tts
from server.stage_observer import StageObserver, StreamPosition
from voice.core.audio import to_bytes
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

MS = 1_000_000  # ns
FRAME_SLACK_MS = 20.0  # interpolation between frames adds at most one frame
DOWN, UP = FrameDirection.DOWNSTREAM, FrameDirection.UPSTREAM


def audio() -> InputAudioRawFrame:
    """20 ms of silence, as the transport delivers the caller's stream."""
    return InputAudioRawFrame(bytes(640), 16000, 1)


class Feed:
    """An observer fed by hand: frames processed or pushed by named processors at given times (ms)."""

    def __init__(self) -> None:
        self.stt, self.policy, self.tts = (FrameProcessor(name=n) for n in ("stt", "policy", "tts"))
        self.sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            self.sent.append(message)

        self.observer = StageObserver(policy=self.policy, tts=self.tts, send=send)

    async def taken(self, by: FrameProcessor, frame: Frame, at_ms: float, direction: Any = DOWN) -> None:
        await self.observer.on_process_frame(FrameProcessed(by, frame, direction, int(at_ms * MS)))

    async def pushed(self, by: FrameProcessor, frame: Frame, at_ms: float) -> None:
        await self.observer.on_push_frame(FramePushed(by, by, frame, DOWN, int(at_ms * MS)))

    async def caller_audio(self, frames: int, from_ms: float) -> float:
        """``frames`` caller frames taken by the policy, each as it ends, one per 20 ms after ``from_ms``.

        Returns the time of the last one.
        """
        for k in range(1, frames + 1):
            await self.taken(self.policy, audio(), from_ms + 20 * k)
        return from_ms + 20 * frames

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["kind"] == kind]


def caller_log(*transcripts: TranscriptionFrame) -> OutputTransportMessageUrgentFrame:
    frame = OutputTransportMessageUrgentFrame(message={"event": "log", "kind": "caller", "text": "喂"})
    frame.metadata[TURN_TRANSCRIPTS] = list(transcripts)
    return frame


def transcript(text: str, audio_secs: float, began_ms: float) -> TranscriptionFrame:
    return TranscriptionFrame(
        text, "", "t", result={"audio_secs": audio_secs, "segment_end": int(began_ms * MS)}
    )


def test_the_stream_position_counts_audio_and_interpolates_by_at_most_a_frame() -> None:
    stream = StreamPosition()
    assert stream.at(5 * MS) == 0.0
    for k in range(3):
        stream.add(audio(), k * 20 * MS)
    assert stream.at(40 * MS) == 60.0
    assert stream.at(47 * MS) == 67.0  # 7 ms after the last frame
    assert stream.at(500 * MS) == 80.0  # never more than a frame ahead of the audio


async def test_a_turn_is_placed_on_the_callers_timeline_with_its_asr_and_policy_times() -> None:
    f = Feed()
    t = await f.caller_audio(40, 0)  # 800 ms of caller audio by t = 800
    await f.taken(f.policy, VADUserStoppedSpeakingFrame(), t)
    t = await f.caller_audio(5, t)
    await f.taken(f.policy, UserStoppedSpeakingFrame(), t)  # the turn ends at 900 ms
    first, last = transcript("我是", 0.4, 500), transcript("快递员。", 0.6, 1000)
    await f.pushed(f.stt, first, 640)
    await f.taken(f.policy, first, 640.5)
    t = await f.caller_audio(10, t)
    await f.pushed(f.stt, last, t + 3)  # 103 ms of ASR
    await f.taken(f.policy, last, t + 5)  # the transcript completes the turn at 1105 ms ...
    await f.pushed(f.policy, caller_log(first, last), t + 5.4)  # ... answered 0.4 ms later
    (turn,) = f.events("turn")
    assert turn == {
        "kind": "turn",
        "vad_stop_at_ms": 800.0,
        "turn_end_at_ms": 900.0,
        "transcript_at_ms": 1105.0,
        "answer_at_ms": 1105.0,
        "asr_wait_ms": 205.0,
        "policy_ms": 0.4,
        "asr": [{"audio_secs": 0.4, "asr_secs": 0.14}, {"audio_secs": 0.6, "asr_secs": 0.103}],
    }


async def test_a_transcript_arriving_before_the_turns_end_means_no_asr_wait() -> None:
    f = Feed()
    t = await f.caller_audio(7, 0)
    said = transcript("你好。", 0.3, 50)
    await f.pushed(f.stt, said, 150)
    await f.taken(f.policy, said, 151)
    t = await f.caller_audio(3, t)
    await f.taken(f.policy, UserStoppedSpeakingFrame(), t + 100)
    await f.pushed(f.policy, caller_log(said), t + 100.2)
    (turn,) = f.events("turn")
    assert turn["asr_wait_ms"] == 0.0 and turn["policy_ms"] == 0.2
    assert turn["answer_at_ms"] == turn["turn_end_at_ms"] == 220.0  # a frame at most past the audio
    assert turn["transcript_at_ms"] == 151.0 and turn["vad_stop_at_ms"] is None
    assert turn["asr"] == [{"audio_secs": 0.3, "asr_secs": 0.1}]


async def test_each_turn_reports_only_its_own_stages_and_transcripts() -> None:
    f = Feed()
    t = await f.caller_audio(10, 0)
    await f.taken(f.policy, VADUserStoppedSpeakingFrame(), t)
    await f.taken(f.policy, UserStoppedSpeakingFrame(), t)
    one = transcript("一", 0.2, t)
    await f.pushed(f.stt, one, t + 10)
    await f.taken(f.policy, one, t + 10)
    await f.pushed(f.policy, caller_log(one), t + 10)
    ignored = transcript("嗯", 0.1, t + 20)  # a backchannel the policy left out of the next turn
    await f.pushed(f.stt, ignored, t + 40)
    await f.taken(f.policy, ignored, t + 40)
    t = await f.caller_audio(10, t + 40)
    two = TranscriptionFrame("二", "", "t")  # no result: no asr entry
    await f.taken(f.policy, two, t)
    await f.pushed(f.policy, caller_log(two), t)
    first, second = f.events("turn")
    assert first["vad_stop_at_ms"] == 200.0 and len(first["asr"]) == 1
    assert second["vad_stop_at_ms"] is None and second["turn_end_at_ms"] is None
    assert second["asr_wait_ms"] == 0.0 and second["asr"] == [] and second["transcript_at_ms"] == 400.0


async def test_a_replys_text_first_audio_and_sending_are_reported_as_they_happen() -> None:
    f = Feed()
    t = await f.caller_audio(50, 0)
    speak = TTSSpeakFrame("您好，请问您是哪位？")
    await f.pushed(f.policy, speak, t)  # the text goes to the TTS at 1000 ms ...
    await f.taken(f.tts, speak, t + 1)  # ... which takes it, starts synthesizing it ...
    await f.pushed(f.tts, TTSStartedFrame(context_id="c1"), t + 2)
    first = TTSAudioRawFrame(bytes(1280), 16000, 1, context_id="c1")
    first.metadata[TTS_PIECE] = "您好，"
    await f.pushed(f.tts, first, t + 182)  # ... and has its first piece 180 ms later
    await f.pushed(f.tts, TTSAudioRawFrame(bytes(1280), 16000, 1, context_id="c1"), t + 183)
    await f.taken(f.policy, BotStartedSpeakingFrame(), t + 190, UP)
    await f.taken(f.policy, BotStartedSpeakingFrame(), t + 191, DOWN)  # the downstream copy: not counted
    assert f.sent == [
        {
            "kind": "tts",
            "text": "您好，",
            "at_ms": 1000.0,
            "first_audio_ms": 180.0,
            "first_audio_at_ms": 1020.0,
        },
        {"kind": "speaking", "at_ms": 1020.0},
    ]


# --- on the real processors --------------------------------------------------------------------------------


@dataclass
class _Reply:
    text: str
    end_call: bool = False


class _Policy:
    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = view

    def greeting(self) -> str:
        return "您好，请问您是哪位？"

    def respond(self, caller_text: str) -> _Reply:
        return _Reply(f"收到：{caller_text}")


START = InputTransportMessageFrame(message={"event": "start", "call_id": "c", "dialogue": {"id": "d"}})


def logs(frames: Any, kind: str) -> list[dict[str, Any]]:
    return [
        f.message
        for f in frames
        if isinstance(f, OutputTransportMessageUrgentFrame) and f.message.get("kind") == kind
    ]


def stage_feed(policy: FrameProcessor, tts: FrameProcessor) -> tuple[StageObserver, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    return StageObserver(policy=policy, tts=tts, send=send), sent


def speech(frames: int) -> list[Frame]:
    """``frames`` 20 ms frames of sound."""
    pcm = np.resize(MemoryTTS().synthesize("你好你好"), 320 * frames)
    return [InputAudioRawFrame(to_bytes(pcm[i : i + 320]), 16000, 1) for i in range(0, len(pcm), 320)]


async def test_the_stt_policy_and_tts_tell_the_observer_what_it_reports() -> None:
    stt = CallSimSTTService(MemoryASR(["你好。"]), trailing_silence_secs=0.0)
    policy = PolicyProcessor(_Policy, start_timeout_secs=5)
    tts = CallSimTTSService(MemoryTTS())
    observer, sent = stage_feed(policy, tts)
    frames: list[Frame] = [
        START,
        *(audio() for _ in range(25)),
        UserStartedSpeakingFrame(),
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.05),  # the turn has begun before the segment is transcribed
        *speech(15),  # caller speech up to 800 ms
        VADUserStoppedSpeakingFrame(),  # the segment is transcribed at once
        SleepFrame(0.05),
        *(audio() for _ in range(5)),
        UserStoppedSpeakingFrame(),  # the turn ends at 900 ms, its transcript already there
        *(audio() for _ in range(10)),
        SleepFrame(0.3),
    ]
    down, _ = await run_test(Pipeline([stt, policy, tts]), frames_to_send=frames, observers=[observer])
    (caller,) = logs(down, "caller")
    assert caller == {"event": "log", "kind": "caller", "text": "你好。"}  # content only, on the wire
    (turn,) = [m for m in sent if m["kind"] == "turn"]
    assert turn["vad_stop_at_ms"] == pytest.approx(800, abs=FRAME_SLACK_MS)
    assert turn["turn_end_at_ms"] == pytest.approx(900, abs=FRAME_SLACK_MS)
    assert turn["transcript_at_ms"] == pytest.approx(800, abs=FRAME_SLACK_MS)
    assert turn["answer_at_ms"] == turn["turn_end_at_ms"] and turn["asr_wait_ms"] == 0.0
    assert 0 <= turn["policy_ms"] < 50
    (asr,) = turn["asr"]
    assert asr["audio_secs"] == 0.8 and 0 <= asr["asr_secs"] < 0.2  # the segment has 0.5 s of lead-in
    greeting, reply = [m for m in sent if m["kind"] == "tts"]
    assert greeting["text"] == split_for_tts(_Policy({}).greeting())[0] and greeting["first_audio_ms"] >= 0
    assert reply["text"] == "收到：你好。" and reply["at_ms"] >= turn["answer_at_ms"]
    assert reply["first_audio_at_ms"] >= reply["at_ms"]
    assert [m["kind"] for m in sent] == ["tts", "turn", "tts"]


async def test_the_reply_audio_going_out_is_reported_as_a_stream_position() -> None:
    policy = PolicyProcessor(_Policy, start_timeout_secs=5)
    observer, sent = stage_feed(policy, FrameProcessor())
    await run_test(
        policy,
        frames_to_send=[BotStartedSpeakingFrame()],
        frames_to_send_direction=UP,
        observers=[observer],
    )
    assert sent == [{"kind": "speaking", "at_ms": 0.0}]
