"""The caller's memory of the call: its own lines, the assistant's as transcribed, timing as tags."""

import numpy as np

from tests.fakes import tone
from voice.core import events as ev
from voice.react.heard_so_far import (
    TAG_STILL_TALKING,
    TAG_TALKED_OVER,
    TAG_YOU_CUT_IN,
    HeardLine,
    heard_so_far,
)


def test_lines_come_in_order_with_transcripts_of_the_heard_spans_and_tags():
    heard = np.zeros(16000 * 10, np.int16)
    heard[3200:8000] = np.resize(tone(300), 4800)
    events = [
        ev.ReplyStarted(3520, -1, 3200),
        ev.ReplyEnded(19000, -1, 8000),
        ev.TurnPlanned(20000, 0, "外卖到了"),
        ev.CallerSpoke(20000, 0, "after_reply", 20000, 20000, 40000),
        ev.ReplyStarted(45000, 0, 44800),
        ev.TurnPlanned(60000, 1, "放门口吧"),
        ev.BargedIn(60000, 1, 60000, 44800, 15200),
        ev.CallerSpoke(60000, 1, "barge_in", 60000, 60000, 70000),
        ev.ReplyMissed(100_000, 1, 128_000, 1),
    ]
    asked = []

    def transcribe(start, end):
        asked.append((start, end))
        return f"{start}-{end}"

    lines = heard_so_far(events, heard, 100_000, transcribe)
    assert [(line.speaker, line.text) for line in lines] == [
        ("assistant", "3200-8000"),
        ("caller", "外卖到了"),
        ("assistant", "44800-60000"),  # cut at the caller's barge-in
        ("caller", "放门口吧"),
        ("assistant", ""),
    ]
    assert lines[3].tags == (TAG_YOU_CUT_IN,)
    assert "没有回应" in lines[4].tags[0]
    assert lines[0].render() == "助理：3200-8000" and lines[3].render() == f"你：放门口吧[{TAG_YOU_CUT_IN}]"


def test_a_reply_still_going_and_an_assistant_talking_over_the_caller():
    heard = np.zeros(16000 * 6, np.int16)
    heard[16000:40000] = np.resize(tone(1000), 24000)  # the assistant talks during the caller's turn
    events = [
        ev.TurnPlanned(0, 0, "喂"),
        ev.CallerSpoke(0, 0, "first", 0, 0, 32000),
        ev.ReplyStarted(33000, 0, 16000),
    ]
    lines = heard_so_far(events, heard, 48000, lambda s, e: "在说")
    assert lines[0].tags == (TAG_TALKED_OVER,)
    assert lines[1].tags[0].startswith(TAG_STILL_TALKING) and "2.0 秒" in lines[1].tags[0]
    assert HeardLine("assistant", "").render() == "助理：（听不清）"


def test_the_callers_ears_fit_whispers_window_to_each_piece_and_leave_other_transcribers_alone():
    from voice.contract.tuning import ASR_CONTEXT_S
    from voice.react.heard_so_far import FittedEars, caller_ears
    from voice.speech.asr import MemoryASR, WhisperASR

    class Whisper(WhisperASR):  # records the window it is asked for instead of running the model
        def __init__(self) -> None:
            super().__init__()
            self.windows: list[float | None] = []

        def transcribe_timed(self, pcm, *, audio_context_s=None):  # type: ignore[no-untyped-def]
            from voice.speech.asr import Transcription

            self.windows.append(audio_context_s)
            return Transcription("到了", len(pcm) / 16000, 0.0)

        def load(self) -> None:
            self.windows.append(-1.0)  # marks the load

    whisper = Whisper()
    ears = caller_ears(whisper)
    assert isinstance(ears, FittedEars) and ears.transcribe(tone(300)) == "到了"
    assert whisper.windows == [ASR_CONTEXT_S] and "caller's ears" in ears.describe()
    ears.load()  # the session loads the model before dialling
    assert whisper.windows[-1] == -1.0
    memory = MemoryASR([], default="")
    assert caller_ears(memory) is memory
