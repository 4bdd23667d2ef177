"""What the reactive caller has heard so far: both sides' turns in order, the assistant's as transcribed.

The caller never reads the assistant's own text: each reply is cut from the heard channel (what was
played out to the caller) between its onset and its end as the core detected them, and transcribed by the
run's transcriber.  Timing facts become tags the model reads next to the words: the caller cut in, the
assistant started before the caller had finished, a reply is still going, no reply came.

The caller's ears (:func:`caller_ears`) are the run's transcriber with Whisper's encoder window fitted to
each piece, as the built-in assistant hears the caller: a short last piece then costs ~0.1-0.3 s instead of
the full 30 s window's ~0.9 s, on the caller's critical path (issue 26).  The post-call transcripts, which
the metrics read, keep the run's own setting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from voice.contract.tuning import ASR_CONTEXT_S
from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm
from voice.core.call import EnergyDetector
from voice.speech.asr import ASREngine, WhisperASR

TAG_YOU_CUT_IN = "你打断了它"
TAG_TALKED_OVER = "你还没说完它就开口了"
TAG_STILL_TALKING = "它还在说"


@dataclass(frozen=True)
class HeardLine:
    """One turn of the conversation as the caller knows it."""

    speaker: str  # caller, assistant
    text: str
    tags: tuple[str, ...] = ()
    start: int = 0  # sample where it began (orders the lines)

    def render(self) -> str:
        who = "你" if self.speaker == "caller" else "助理"
        tags = "".join(f"[{t}]" for t in self.tags)
        return f"{who}：{self.text or '（听不清）'}{tags}"


Transcribe = Callable[[int, int], str]  # the heard audio [start, end) as text


class FittedEars:
    """The run's Whisper (one model, shared) transcribing with the encoder window fitted to each piece."""

    def __init__(self, whisper: WhisperASR, audio_context_s: float = ASR_CONTEXT_S) -> None:
        self.whisper, self.audio_context_s = whisper, audio_context_s

    def load(self) -> None:
        """Load the model now (the session does, before dialling)."""
        self.whisper.load()

    def transcribe(self, pcm: Pcm) -> str:
        return self.whisper.transcribe_timed(pcm, audio_context_s=self.audio_context_s).text

    def describe(self) -> str:
        return f"{self.whisper.describe()} (caller's ears: audio_ctx=+{self.audio_context_s:g}s)"


def caller_ears(asr: ASREngine) -> ASREngine:
    """What the reactive caller hears with: offline Whisper with a fitted window; any other transcriber (a
    server, the test double) as it is."""
    return FittedEars(asr) if isinstance(asr, WhisperASR) else asr


def _overlapped(heard: Pcm, start: int, end: int) -> bool:
    """Whether the assistant was heard speaking inside ``[start, end)`` (20 ms frames, energy)."""
    detector = EnergyDetector()
    for s in range(start, min(end, len(heard)) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        if detector.active(heard[s : s + FRAME_SAMPLES]) is not None:
            return True
    return False


def heard_so_far(
    events: Sequence[ev.CallEvent], heard: Pcm, now: int, transcribe: Transcribe
) -> list[HeardLine]:
    """The conversation up to sample ``now``, oldest first, from the call's events and heard channel."""
    texts = {e.turn: e.text for e in events if isinstance(e, ev.TurnPlanned)}
    spoken = [e for e in events if isinstance(e, ev.CallerSpoke) and e.speech_start < now]
    barged = {e.turn for e in events if isinstance(e, ev.BargedIn)}
    lines: list[HeardLine] = []
    for s in spoken:
        tags: list[str] = []
        if s.turn in barged:
            tags.append(TAG_YOU_CUT_IN)
        elif _overlapped(heard, s.speech_start + FRAME_SAMPLES * 5, s.speech_end):
            tags.append(TAG_TALKED_OVER)
        lines.append(HeardLine("caller", texts.get(s.turn, ""), tuple(tags), s.speech_start))
    starts = sorted(s.speech_start for s in spoken)
    ends = {e.at for e in events if isinstance(e, ev.ReplyEnded)}
    for e in events:
        if isinstance(e, ev.ReplyStarted):
            onset = e.at
            cut = next((s for s in starts if s > onset), None)  # the caller's next turn began here
            end = next((x for x in sorted(ends) if x > onset and (cut is None or x <= cut)), None)
            tags = []
            if end is None and cut is not None:
                end = cut
            elif end is None:
                end, tags = now, [f"{TAG_STILL_TALKING}，已经说了 {(now - onset) / SAMPLE_RATE:.1f} 秒"]
            lines.append(HeardLine("assistant", transcribe(onset, end), tuple(tags), onset))
        elif isinstance(e, ev.ReplyMissed):
            waited = f"{e.waited / SAMPLE_RATE:.0f}"
            lines.append(HeardLine("assistant", "", (f"没有回应，你等了 {waited} 秒",), e.t))
    return sorted(lines, key=lambda line: line.start)
