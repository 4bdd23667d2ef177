"""The caller heard in pieces: each piece of a VAD segment goes to the ASR as soon as a pause closes it,
numbered, and at the VAD's stop nothing is transcribed twice."""

from __future__ import annotations

import numpy as np
from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

from server.piecewise_stt import PieceQueuedFrame, PieceSTTService
from server.processors import SegmentWithoutWordsFrame
from tests.fakes import tone
from tests.server.test_processors import of_type
from voice.core.audio import from_bytes
from voice.speech.asr import MemoryASR

FRAME = 320  # 20 ms at 16 kHz, as the transport delivers


class EnergyWindows(FrameProcessor):
    """A VAD double in front of the STT: each 20 ms frame is one window, voiced when it is loud."""

    def __init__(self, stt: PieceSTTService) -> None:
        super().__init__()
        self.stt = stt

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            pcm = from_bytes(frame.audio)
            self.stt.observe_window(bool(np.abs(pcm).max(initial=0) > 300), len(pcm))
        await self.push_frame(frame, direction)


def frames_of(*parts: tuple[str, float]) -> list[Frame]:
    """Speech ('s') and silence ('-') in 20 ms frames; the VAD's start after the first 0.2 s of speech."""
    audio = np.concatenate(
        [tone(ms) if kind == "s" else np.zeros(16 * int(ms), np.int16) for kind, ms in parts]
    )
    out: list[Frame] = []
    for i in range(0, len(audio) - FRAME + 1, FRAME):
        out.append(InputAudioRawFrame(audio[i : i + FRAME].tobytes(), 16000, 1))
    return out


async def run(stt: PieceSTTService, frames: list[Frame]) -> list[Frame]:
    from pipecat.pipeline.pipeline import Pipeline

    down, _ = await run_test(Pipeline([EnergyWindows(stt), stt]), frames_to_send=[*frames, SleepFrame(0.3)])
    return down


async def test_each_piece_is_queued_when_its_pause_closes_it_and_its_transcript_carries_its_number() -> None:
    asr = MemoryASR(["喂，你好，", "美团外卖。"])
    stt = PieceSTTService(asr, piece_pause_secs=0.12, trailing_silence_secs=0.0)
    speech = frames_of(("s", 600), ("-", 200), ("s", 500), ("-", 300))
    # the VAD's start 0.2 s in, its stop 0.2 s after the last speech
    frames = [
        *speech[:10],
        VADUserStartedSpeakingFrame(),
        *speech[10:-5],
        VADUserStoppedSpeakingFrame(),
        *speech[-5:],
    ]
    down = await run(stt, frames)
    queued = [f.piece for f in of_type(down, PieceQueuedFrame)]
    transcripts = of_type(down, TranscriptionFrame)
    assert queued == [0, 1]  # two pieces; the stop found nothing left to hear
    assert [(t.text, t.result["piece"]) for t in transcripts] == [("喂，你好，", 0), ("美团外卖。", 1)]
    first, second = (len(pcm) / 16000 for pcm in asr.heard)
    assert 0.6 <= first <= 0.8  # from the start to the first piece's end and a short tail
    assert 0.5 <= second <= 0.75  # the rest of the pause, the second piece, its tail
    assert not of_type(down, SegmentWithoutWordsFrame)


async def test_speech_still_open_at_the_vad_stop_is_the_last_piece() -> None:
    asr = MemoryASR(["好的。"])
    stt = PieceSTTService(asr, piece_pause_secs=0.3, trailing_silence_secs=0.0)
    speech = frames_of(("s", 500), ("-", 100))
    down = await run(
        stt, [*speech[:10], VADUserStartedSpeakingFrame(), *speech[10:], VADUserStoppedSpeakingFrame()]
    )
    assert [f.piece for f in of_type(down, PieceQueuedFrame)] == [0]
    assert [t.result["piece"] for t in of_type(down, TranscriptionFrame)] == [0]


async def test_a_piece_without_words_says_so_under_its_number_and_speech_outside_a_segment_is_not_cut() -> (
    None
):
    stt = PieceSTTService(MemoryASR([""]), piece_pause_secs=0.12, trailing_silence_secs=0.0)
    click = frames_of(("s", 100), ("-", 300))  # never called speech by the VAD: no piece
    speech = frames_of(("s", 400), ("-", 300))
    frames = [*click, *speech[:10], SleepFrame(0.05), VADUserStartedSpeakingFrame(), *speech[10:]]
    down = await run(stt, frames)
    assert [f.piece for f in of_type(down, PieceQueuedFrame)] == [0]
    assert [f.piece for f in of_type(down, SegmentWithoutWordsFrame)] == [0]
