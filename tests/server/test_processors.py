"""The assistant's pipecat processors, run in pipecat's own test harness with in-memory engine doubles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    EndWorkerFrame,
    ErrorFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    InterruptionFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSSpeakFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.worker import PipelineParams
from pipecat.processors.frame_processor import FrameDirection
from pipecat.tests.utils import SleepFrame, run_test
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from server.policy.processor import DEFAULT_VIEW, TURN_TRANSCRIPTS, PolicyProcessor
from server.processors import (
    ASR_CONFIDENCE,
    CallSimSTTService,
    CallSimTTSService,
    SegmentWithoutWordsFrame,
    WarmRepliesFrame,
    gap_after_ms,
    split_for_tts,
    trim_lead_in,
)
from server.turns import BargeInTurnStartStrategy, QuietSpeechTimeoutStopStrategy
from voice.core.audio import to_bytes
from voice.errors import EngineError
from voice.speech.asr import Confidence, MemoryASR, Transcription
from voice.speech.tts.memory import MemoryTTS

# --- doubles -------------------------------------------------------------------------------------------


@dataclass
class Reply:
    text: str
    end_call: bool = False


class ScriptedPolicy:
    """A policy double: fixed greeting, replies echo the caller, "再见" ends the call."""

    instances: ClassVar[list[ScriptedPolicy]] = []

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.view = dict(view)
        self.heard: list[str] = []
        ScriptedPolicy.instances.append(self)

    def greeting(self) -> str:
        return f"您好，这里是{self.view['id']}的助理。"

    def respond(self, caller_text: str) -> Reply:
        self.heard.append(caller_text)
        if "再见" in caller_text:
            return Reply("好的，再见。", end_call=True)
        return Reply(f"收到：{caller_text}")


class BrokenTTS:
    name = "broken"

    def params(self) -> dict[str, str]:
        return {}

    def synthesize(self, text: str) -> Any:
        raise EngineError("synthesizer on fire")


def of_type(frames: Sequence[Frame], kind: type) -> list[Any]:
    return [f for f in frames if isinstance(f, kind)]


def logs(frames: Sequence[Frame]) -> list[dict[str, Any]]:
    return [f.message for f in of_type(frames, OutputTransportMessageUrgentFrame)]


START = InputTransportMessageFrame(
    message={
        "event": "start",
        "call_id": "c1",
        "dialogue": {
            "id": "d7",
            "scenario": "快递",
            "preset": {"type": "none", "text": ""},
            "owner_goal": "",
        },
    }
)


# --- TTS ----------------------------------------------------------------------------------------------------


def test_split_for_tts_cuts_sentences_and_merges_tiny_ones() -> None:
    assert split_for_tts("您好，请稍等。机主现在不方便接电话！您是哪位？") == [
        "您好，请稍等。",
        "机主现在不方便接电话！",
        "您是哪位？",
    ]
    assert split_for_tts("好。我会转告机主的。") == ["好。我会转告机主的。"]
    assert split_for_tts("我会转告机主的。好。") == ["我会转告机主的。好。"]
    assert split_for_tts("没有标点也可以") == ["没有标点也可以"]
    assert split_for_tts("  ") == []


def test_split_for_tts_cuts_a_long_first_sentence_after_its_first_clause() -> None:
    assert split_for_tts("您好，我是机主的电话助理，请问有什么事？好的。") == [
        "您好，",
        "我是机主的电话助理，请问有什么事？好的。",
    ]
    assert split_for_tts("外卖放门口就行，机主在开会。") == ["外卖放门口就行，", "机主在开会。"]
    assert split_for_tts("好的，谢谢您。") == ["好的，谢谢您。"]  # short: kept whole
    assert split_for_tts("请问您是哪一位呀，有事吗") == ["请问您是哪一位呀，有事吗"]  # rest too short
    assert gap_after_ms("您好，") < gap_after_ms("机主在开会。")


async def test_tts_streams_each_sentence_in_chunks() -> None:
    engine = MemoryTTS()
    tts = CallSimTTSService(engine, chunk_ms=40)
    down, _ = await run_test(
        tts,
        frames_to_send=[TTSSpeakFrame("您好，请稍等。机主现在不方便接电话。")],
        pipeline_params=PipelineParams(audio_out_sample_rate=16000),
    )
    assert engine.requests == ["您好，请稍等。", "机主现在不方便接电话。"]
    audio = of_type(down, TTSAudioRawFrame)
    assert of_type(down, TTSStartedFrame) and of_type(down, TTSStoppedFrame)
    assert all(f.sample_rate == 16000 and f.num_channels == 1 for f in audio)
    sizes = [len(f.audio) for f in audio]
    assert max(sizes) == 1280 and sum(n < 1280 for n in sizes) <= 2  # 40 ms chunks, a tail per sentence
    expected = (
        to_bytes(
            trim_lead_in(MemoryTTS().synthesize("您好，请稍等。"), 16000)
        )  # the first piece starts at once
        + bytes(2 * 16 * gap_after_ms("您好，请稍等。"))
        + to_bytes(MemoryTTS().synthesize("机主现在不方便接电话。"))
    )
    assert b"".join(f.audio for f in audio) == expected
    started = down.index(of_type(down, TTSStartedFrame)[0])
    stopped = down.index(of_type(down, TTSStoppedFrame)[0])
    assert started < down.index(audio[0]) and down.index(audio[-1]) < stopped


def test_the_first_piece_loses_the_engines_lead_in_silence_but_a_soft_onset_stays() -> None:
    pcm = np.concatenate([np.zeros(480, np.int16), np.full(160, 200, np.int16), np.full(800, 9000, np.int16)])
    trimmed = trim_lead_in(pcm, 16000, keep_ms=10)
    assert len(trimmed) == len(pcm) - 480 + 160  # 10 ms before the soft onset (200 is above a quarter of 1 %)
    assert len(trim_lead_in(np.zeros(800, np.int16), 16000)) == 800  # all silence: nothing to cut to


async def test_tts_resamples_to_the_pipeline_output_rate() -> None:
    tts = CallSimTTSService(MemoryTTS())
    down, _ = await run_test(
        tts,
        frames_to_send=[TTSSpeakFrame("您好。")],
        pipeline_params=PipelineParams(audio_out_sample_rate=24000),
    )
    audio = of_type(down, TTSAudioRawFrame)
    assert audio and all(f.sample_rate == 24000 for f in audio)
    expected = len(trim_lead_in(MemoryTTS().synthesize("您好。"), 16000)) * 3 // 2
    assert abs(sum(len(f.audio) for f in audio) // 2 - expected) <= 2


async def test_tts_engine_failure_is_reported_not_raised() -> None:
    tts = CallSimTTSService(BrokenTTS())
    down, up = await run_test(tts, frames_to_send=[TTSSpeakFrame("您好。")])
    assert not of_type(down, TTSAudioRawFrame)
    errors = of_type(up, ErrorFrame)
    assert errors and "synthesizer on fire" in errors[0].error


# --- STT ----------------------------------------------------------------------------------------------------


def speech_frames(seconds: float) -> list[Frame]:
    tone = MemoryTTS().synthesize("你好你好你好你好")
    audio = np.resize(tone, int(16000 * seconds))
    return [InputAudioRawFrame(to_bytes(audio[i : i + 320]), 16000, 1) for i in range(0, len(audio), 320)]


async def test_stt_transcribes_each_vad_segment_with_timing() -> None:
    asr = MemoryASR(["你好，我是快递员。"])
    stt = CallSimSTTService(asr, trailing_silence_secs=0.25)
    frames: list[Frame] = [VADUserStartedSpeakingFrame(), *speech_frames(0.6), VADUserStoppedSpeakingFrame()]
    down, _ = await run_test(stt, frames_to_send=[*frames, SleepFrame(0.3)])
    transcripts = of_type(down, TranscriptionFrame)
    assert [t.text for t in transcripts] == ["你好，我是快递员。"]
    assert transcripts[0].finalized
    assert transcripts[0].result["audio_secs"] == pytest.approx(0.85, abs=0.01)
    assert len(asr.heard) == 1 and len(asr.heard[0]) == int(0.85 * 16000)
    assert of_type(down, InputAudioRawFrame)  # audio still flows on


class ScoredASR(MemoryASR):
    """Whisper's shape: ``transcribe_timed`` with a confidence in the words."""

    def transcribe_timed(self, pcm: Any) -> Transcription:
        return Transcription(self.transcribe(pcm), len(pcm) / 16000, 0.1, Confidence(-1.2345, 0.1, 1.0))


async def test_stt_passes_on_whisper_s_confidence_in_the_words() -> None:
    stt = CallSimSTTService(ScoredASR(["您车排尾号386别生得着"]), trailing_silence_secs=0.25)
    frames: list[Frame] = [VADUserStartedSpeakingFrame(), *speech_frames(0.6), VADUserStoppedSpeakingFrame()]
    down, _ = await run_test(stt, frames_to_send=[*frames, SleepFrame(0.3)])
    (transcript,) = of_type(down, TranscriptionFrame)
    assert transcript.result[ASR_CONFIDENCE] == {
        "avg_logprob": -1.234,
        "no_speech_prob": 0.1,
        "compression_ratio": 1.0,
    }
    assert "segment_end" in transcript.result and "audio_secs" in transcript.result


async def test_stt_drops_empty_transcripts_and_reports_failures() -> None:
    asr = MemoryASR([""])  # then raises EngineError
    stt = CallSimSTTService(asr)
    segment: list[Frame] = [VADUserStartedSpeakingFrame(), *speech_frames(0.3), VADUserStoppedSpeakingFrame()]
    down, up = await run_test(stt, frames_to_send=[*segment, SleepFrame(0.2), *segment, SleepFrame(0.2)])
    assert not of_type(down, TranscriptionFrame)
    errors = of_type(up, ErrorFrame)
    assert len(errors) == 1 and "ASR failed" in errors[0].error
    # each segment still tells the turn logic that no words are coming, on the pipeline's clock
    marks = of_type(down, SegmentWithoutWordsFrame)
    assert len(marks) == 2 and 0 < marks[0].segment_end < marks[1].segment_end


# --- policy -------------------------------------------------------------------------------------------------


async def test_policy_greets_from_start_and_answers_a_turn() -> None:
    policy = PolicyProcessor(ScriptedPolicy, start_timeout_secs=5)
    frames: list[Frame] = [
        START,
        SleepFrame(0.05),
        UserStartedSpeakingFrame(),
        # The turn's end (a system frame) may overtake its transcript (a data frame): both orders work.
        UserStoppedSpeakingFrame(),
        TranscriptionFrame("你好，", "", "t"),
        SleepFrame(0.05),
        UserStartedSpeakingFrame(),
        TranscriptionFrame("我是快递员。", "", "t"),
        SleepFrame(0.05),
        UserStoppedSpeakingFrame(),
    ]
    down, _ = await run_test(policy, frames_to_send=frames)
    spoken = [f.text for f in of_type(down, TTSSpeakFrame)]
    assert spoken == ["您好，这里是d7的助理。", "收到：你好，", "收到：我是快递员。"]
    assert policy.call_id == "c1" and policy.view is not None and policy.view["id"] == "d7"
    kinds = [m["kind"] for m in logs(down)]
    assert kinds == ["greeting", "caller", "reply", "caller", "reply"]
    assert not of_type(down, EndWorkerFrame)


async def test_policy_gathers_a_turn_split_into_segments() -> None:
    policy = PolicyProcessor(ScriptedPolicy, start_timeout_secs=5)
    frames: list[Frame] = [
        START,
        UserStartedSpeakingFrame(),
        TranscriptionFrame("我是", "", "t"),
        TranscriptionFrame("快递员。", "", "t"),
        SleepFrame(0.05),
        UserStoppedSpeakingFrame(),
    ]
    down, _ = await run_test(policy, frames_to_send=frames)
    assert [f.text for f in of_type(down, TTSSpeakFrame)][1:] == ["收到：我是快递员。"]


async def test_policy_ignores_speech_outside_a_turn() -> None:
    policy = PolicyProcessor(ScriptedPolicy, start_timeout_secs=5)
    frames: list[Frame] = [START, SleepFrame(0.05), TranscriptionFrame("嗯", "", "t"), SleepFrame(0.05)]
    down, _ = await run_test(policy, frames_to_send=frames)
    assert len(of_type(down, TTSSpeakFrame)) == 1  # just the greeting
    assert [m["kind"] for m in logs(down)] == ["greeting", "ignored"]


async def test_a_backchannel_transcript_arriving_late_does_not_stand_in_for_the_next_turn() -> None:
    policy = PolicyProcessor(ScriptedPolicy, start_timeout_secs=5)
    # When each segment's transcription began, on the pipeline's clock (which starts with the pipeline):
    # the backchannel's before the real turn started, the turn's own long after.
    said_before, said_after = 0, 10**15
    backchannel = TranscriptionFrame("好", "", "t", result={"audio_secs": 0.3, "segment_end": said_before})
    words = TranscriptionFrame(
        "我车牌尾号三八六。", "", "t", result={"audio_secs": 1.2, "segment_end": said_after}
    )
    frames: list[Frame] = [
        START,
        SleepFrame(0.05),
        UserStartedSpeakingFrame(),
        backchannel,
        SleepFrame(0.05),
        UserStoppedSpeakingFrame(),
        words,
        SleepFrame(0.05),
    ]
    down, _ = await run_test(policy, frames_to_send=frames)
    assert [f.text for f in of_type(down, TTSSpeakFrame)][1:] == ["收到：我车牌尾号三八六。"]
    (caller,) = [f for f in of_type(down, OutputTransportMessageUrgentFrame) if f.message["kind"] == "caller"]
    assert caller.message == {"event": "log", "kind": "caller", "text": "我车牌尾号三八六。"}
    assert caller.metadata[TURN_TRANSCRIPTS] == [words]  # what the stage observer times
    assert "ignored" in [m["kind"] for m in logs(down)]


async def test_policy_uses_the_default_view_without_start() -> None:
    ScriptedPolicy.instances.clear()
    policy = PolicyProcessor(ScriptedPolicy, start_timeout_secs=0.1)
    down, _ = await run_test(policy, frames_to_send=[SleepFrame(0.4)])
    assert [f.text for f in of_type(down, TTSSpeakFrame)] == ["您好，这里是default的助理。"]
    assert ScriptedPolicy.instances[-1].view == DEFAULT_VIEW
    # A late 'start' does not configure the call twice.
    down, _ = await run_test(
        PolicyProcessor(ScriptedPolicy, start_timeout_secs=0.1), frames_to_send=[SleepFrame(0.3), START]
    )
    assert len(of_type(down, TTSSpeakFrame)) == 1


async def test_policy_falls_back_to_the_default_view_on_a_bad_one() -> None:
    def picky(view: Mapping[str, Any]) -> ScriptedPolicy:
        if view["id"] != "default":
            raise ValueError("unknown preset")
        return ScriptedPolicy(view)

    down, _ = await run_test(PolicyProcessor(picky), frames_to_send=[START, SleepFrame(0.05)])
    assert [f.text for f in of_type(down, TTSSpeakFrame)] == ["您好，这里是default的助理。"]
    assert logs(down)[0]["kind"] == "error"


async def test_policy_ends_the_call_after_the_goodbye() -> None:
    policy = PolicyProcessor(ScriptedPolicy, start_timeout_secs=5)
    frames: list[Frame] = [
        START,
        UserStartedSpeakingFrame(),
        TranscriptionFrame("好的，再见。", "", "t"),
        UserStoppedSpeakingFrame(),
        SleepFrame(0.05),
        UserStartedSpeakingFrame(),
        TranscriptionFrame("等一下！", "", "t"),
        UserStoppedSpeakingFrame(),
        SleepFrame(0.05),
    ]
    down, _ = await run_test(policy, frames_to_send=frames)
    assert [f.text for f in of_type(down, TTSSpeakFrame)][1:] == ["好的，再见。"]
    goodbye = of_type(down, TTSSpeakFrame)[-1]
    end = of_type(down, EndWorkerFrame)
    assert len(end) == 1 and down.index(goodbye) < down.index(end[0])
    assert policy.ended


# --- turns and barge-in -------------------------------------------------------------------------------------


def turn_processor(**kwargs: Any) -> UserTurnProcessor:
    return UserTurnProcessor(
        user_turn_strategies=UserTurnStrategies(
            start=[BargeInTurnStartStrategy(**kwargs)],
            stop=[QuietSpeechTimeoutStopStrategy(user_speech_timeout=0.05)],
        ),
        user_turn_stop_timeout=2.0,
    )


async def test_speech_starts_a_turn_and_interrupts_at_once_when_the_assistant_is_quiet() -> None:
    frames: list[Frame] = [
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.05),
        VADUserStoppedSpeakingFrame(),
        TranscriptionFrame("你好", "", "t", finalized=True),
        SleepFrame(0.2),
    ]
    down, _ = await run_test(turn_processor(confirm_secs=0.3), frames_to_send=frames)
    kinds = [type(f) for f in down if isinstance(f, (UserStartedSpeakingFrame, InterruptionFrame))]
    assert kinds == [UserStartedSpeakingFrame, InterruptionFrame]
    assert of_type(down, UserStoppedSpeakingFrame)


async def test_a_short_backchannel_does_not_interrupt_the_assistant() -> None:
    frames: list[Frame] = [
        BotStartedSpeakingFrame(),
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.1),
        VADUserStoppedSpeakingFrame(),
        TranscriptionFrame("嗯", "", "t", finalized=True),
        SleepFrame(0.4),
    ]
    processor = turn_processor(confirm_secs=0.3)
    down, _ = await run_test(processor, frames_to_send=frames)
    assert not of_type(down, UserStartedSpeakingFrame)
    assert not of_type(down, InterruptionFrame)
    assert not of_type(down, UserStoppedSpeakingFrame)


async def test_sustained_speech_interrupts_the_assistant_after_confirmation() -> None:
    frames: list[Frame] = [
        BotStartedSpeakingFrame(),
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.5),
        VADUserStoppedSpeakingFrame(),
        TranscriptionFrame("等一下，我有话说", "", "t", finalized=True),
        SleepFrame(0.2),
    ]
    down, up = await run_test(turn_processor(confirm_secs=0.2), frames_to_send=frames)
    assert of_type(down, UserStartedSpeakingFrame) and of_type(down, InterruptionFrame)
    assert of_type(up, InterruptionFrame)  # upstream too: the STT and transport hear of it
    assert of_type(down, UserStoppedSpeakingFrame)


async def test_audibility_callback_counts_as_the_assistant_speaking() -> None:
    frames: list[Frame] = [VADUserStartedSpeakingFrame(), SleepFrame(0.1), VADUserStoppedSpeakingFrame()]
    down, _ = await run_test(
        turn_processor(confirm_secs=0.3, assistant_audible=lambda: True),
        frames_to_send=[*frames, SleepFrame(0.1)],
    )
    assert not of_type(down, InterruptionFrame)


def test_frame_direction_is_importable() -> None:  # keeps the harness import honest across versions
    assert FrameDirection.DOWNSTREAM != FrameDirection.UPSTREAM


async def test_expected_replies_are_warmed_in_the_cache_first_pieces_once(tmp_path) -> None:
    from voice.speech.tts.cache import CachedTTS

    engine = MemoryTTS()
    cached = CachedTTS(engine, cache_dir=tmp_path)
    cached.synthesize("好的，")  # already there: not synthesized again
    tts = CallSimTTSService(cached)
    texts = ("好的，我记下了，会转告机主。", "抱歉，机主现在不方便接电话。", "好的，再见。")
    texts += ("抱歉，这个现在不方便透露。",)
    await run_test(tts, frames_to_send=[WarmRepliesFrame(texts), SleepFrame(0.2)])
    assert engine.requests == ["好的，", "抱歉，", "好的，再见。"] and tts.warmed == 2
    assert cached.path_for("抱歉，").is_file()
    bare = CallSimTTSService(MemoryTTS())  # no disk cache: nothing to keep, nothing synthesized
    await run_test(bare, frames_to_send=[WarmRepliesFrame(texts), SleepFrame(0.1)])
    assert bare.warmed == 0
