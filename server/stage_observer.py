"""Where the built-in assistant's time goes, per stage: a passive pipecat observer on the pipeline's clock.

Measurement is not code inside the processors.  They do their work and push frames; pipecat tells this
observer about every frame a processor starts on (``on_process_frame``) and every frame's first push
(``on_push_frame``), each stamped by the pipeline's clock, and the observer turns those stamps into the stage
figures ``scripts/bench_stages`` reads (:mod:`voice.app.benchmarks.stages`), sent to CallSim as ``log``
events.
What the stamps cannot tell, the processors say in the frames, as content: which transcripts made up the
turn the policy answered (:data:`~server.policy.processor.TURN_TRANSCRIPTS`, frame metadata), which text a
reply's first audio is (:data:`~server.processors.TTS_PIECE`, frame metadata), and when a segment's
transcription began (``segment_end`` in a transcript's ``result``: the STT's one stamp of the pipeline's
clock, which the policy needs anyway to drop stale transcripts).

The figures keep the names and meanings they had when the processors timed themselves (then in the policy's
``caller`` / ``reply`` logs and the TTS's ``tts`` log); only ``policy_ms`` now also holds the policy
processor's own bookkeeping around ``respond`` (microseconds).

Two kinds of figure:

- ``*_at_ms``: a position on the caller's timeline, the milliseconds of caller audio the policy had taken in
  when it happened (:class:`StreamPosition`).  CallSim sends one 20 ms frame per 20 ms, so these lie on the
  caller's own timeline (late by the transport only) and need no clock synchronisation.
- ``*_ms`` and ``asr_secs``: durations on the pipeline's clock.

The events, in the order things happen (each after the policy's own ``caller`` / ``reply`` log):

=========  ==========================================  ===================================================
kind       sent when                                   fields
=========  ==========================================  ===================================================
turn       the policy answers a caller turn            ``vad_stop_at_ms``, ``turn_end_at_ms``,
                                                       ``transcript_at_ms``, ``answer_at_ms``,
                                                       ``asr_wait_ms`` (the answer waited this long for the
                                                       transcript after the turn's end), ``policy_ms``
                                                       (turn complete → answer out), ``asr``: per
                                                       transcript ``{audio_secs, asr_secs}``
tts        a reply's first audio leaves the TTS        ``text`` (its first piece), ``at_ms`` (the text went
                                                       to the TTS), ``first_audio_ms`` (the TTS starts
                                                       synthesizing → first audio), ``first_audio_at_ms``
speaking   the output starts sending the reply         ``at_ms``
=========  ==========================================  ===================================================
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    InputAudioRawFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSSpeakFrame,
    TTSStartedFrame,
    UserStoppedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import BaseObserver, FrameProcessed, FramePushed
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from server.policy.processor import TURN_TRANSCRIPTS
from server.processors import TTS_PIECE


class AsrStage(TypedDict):
    audio_secs: float
    asr_secs: NotRequired[float]  # when the transcription's start is known


class TurnStage(TypedDict):
    kind: Literal["turn"]
    vad_stop_at_ms: float | None
    turn_end_at_ms: float | None
    transcript_at_ms: float | None
    answer_at_ms: float
    asr_wait_ms: float
    policy_ms: float
    asr: list[AsrStage]


class TtsStage(TypedDict):
    kind: Literal["tts"]
    text: str
    at_ms: float
    first_audio_ms: float
    first_audio_at_ms: float


class SpeakingStage(TypedDict):
    kind: Literal["speaking"]
    at_ms: float


StageLog = TurnStage | TtsStage | SpeakingStage
"""One of the observer's ``log`` events (the module docstring's table), without ``"event": "log"``."""

Send = Callable[[StageLog], Awaitable[None]]
"""How the observer's ``log`` events reach CallSim."""


class StreamPosition:
    """The caller's timeline as the policy sees it: milliseconds of caller audio taken in by a given time.

    Fed the pipeline-clock time of every caller frame the policy takes; between frames a position is
    interpolated on the same clock, by at most one frame, so positions are not quantised to 20 ms.
    """

    def __init__(self) -> None:
        self._ms = 0.0
        self._last_ns: int | None = None
        self._frame_s = 0.02

    def add(self, frame: InputAudioRawFrame, at_ns: int) -> None:
        """Count one caller frame, taken in at ``at_ns``."""
        samples = len(frame.audio) / (2 * max(1, frame.num_channels))
        self._frame_s = samples / frame.sample_rate
        self._ms += self._frame_s * 1000
        self._last_ns = at_ns

    def at(self, at_ns: int) -> float:
        """The position at ``at_ns`` (ms, rounded to 0.1)."""
        extra = 0.0 if self._last_ns is None else min(max(0, at_ns - self._last_ns) / 1e9, self._frame_s)
        return round(self._ms + extra * 1000, 1)


@dataclass
class _Speak:
    """One text on its way through the TTS."""

    at_ms: float  # position when the policy pushed it
    started_ns: int = 0  # when the TTS opened its audio (``TTSStartedFrame``): synthesis begins


class StageObserver(BaseObserver):
    """Watches one call's pipeline and sends its stage figures (``turn``, ``tts``, ``speaking`` logs).

    ``policy`` is the processor whose intake defines the caller's timeline and whose answers close a turn;
    ``tts`` the speech synthesis; ``send`` delivers each event (the pipeline's output in a call).
    """

    def __init__(self, *, policy: FrameProcessor, tts: FrameProcessor, send: Send) -> None:
        super().__init__(observe_every_push=False)
        self._policy, self._tts, self._send = policy, tts, send
        self.stream = StreamPosition()
        # The turn so far: latest VAD stop (position), turn end (position, time).
        self._vad_stop_at: float | None = None
        self._turn_end: tuple[float, int] | None = None
        # Transcripts: when the STT pushed each, and when the policy took it (by frame id).
        self._transcribed_ns: dict[int, int] = {}
        self._taken: dict[int, tuple[float, int]] = {}
        # Replies: texts the policy pushed (by frame id), the one the TTS works on, its audio contexts.
        self._speaks: dict[int, _Speak] = {}
        self._speaking: _Speak | None = None
        self._contexts: dict[str, _Speak] = {}

    async def on_process_frame(self, data: FrameProcessed) -> None:
        """A processor starts on a frame: the policy's intake and the TTS taking a text."""
        frame, at_ns = data.frame, data.timestamp
        if data.processor is self._tts:
            if isinstance(frame, TTSSpeakFrame):
                self._speaking = self._speaks.pop(frame.id, None)
            return
        if data.processor is not self._policy:
            return
        if isinstance(frame, InputAudioRawFrame):
            self.stream.add(frame, at_ns)
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self._vad_stop_at = self.stream.at(at_ns)
        elif isinstance(frame, UserStoppedSpeakingFrame):
            self._turn_end = (self.stream.at(at_ns), at_ns)
        elif isinstance(frame, TranscriptionFrame):
            self._taken[frame.id] = (self.stream.at(at_ns), at_ns)
        elif isinstance(frame, BotStartedSpeakingFrame) and data.direction == FrameDirection.UPSTREAM:
            await self._send({"kind": "speaking", "at_ms": self.stream.at(at_ns)})

    async def on_push_frame(self, data: FramePushed) -> None:
        """A frame's first push: transcripts, the policy's answers and texts, the TTS's first audio."""
        frame, at_ns = data.frame, data.timestamp
        if isinstance(frame, TranscriptionFrame):
            self._transcribed_ns[frame.id] = at_ns
        elif data.source is self._policy:
            if isinstance(frame, TTSSpeakFrame):
                self._speaks[frame.id] = _Speak(self.stream.at(at_ns))
            elif isinstance(frame, OutputTransportMessageUrgentFrame) and TURN_TRANSCRIPTS in frame.metadata:
                await self._send(self._turn(frame.metadata[TURN_TRANSCRIPTS], at_ns))
        elif data.source is self._tts:
            if isinstance(frame, TTSStartedFrame) and frame.context_id and self._speaking is not None:
                self._speaking.started_ns = at_ns  # the TTS opens a text's audio just before synthesizing it
                self._contexts[frame.context_id], self._speaking = self._speaking, None
            elif isinstance(frame, TTSAudioRawFrame) and frame.context_id in self._contexts:
                speak = self._contexts.pop(frame.context_id)
                await self._send(self._first_audio(speak, frame, at_ns))

    def _turn(self, transcripts: list[TranscriptionFrame], answered_ns: int) -> TurnStage:
        """The ``turn`` event of the turn the policy has just answered (at ``answered_ns``)."""
        taken = [self._taken[t.id] for t in transcripts if t.id in self._taken]
        turn_end_ns = self._turn_end[1] if self._turn_end is not None else None
        # The turn is complete once both its end and its (last) transcript have reached the policy.
        complete_ns = max(
            [ns for ns in (turn_end_ns, *(ns for _, ns in taken)) if ns is not None], default=None
        )
        if complete_ns is None:
            complete_ns = answered_ns
        event: TurnStage = {
            "kind": "turn",
            "vad_stop_at_ms": self._vad_stop_at,
            "turn_end_at_ms": self._turn_end[0] if self._turn_end is not None else None,
            "transcript_at_ms": taken[-1][0] if taken else None,
            "answer_at_ms": self.stream.at(complete_ns),
            "asr_wait_ms": _ms(complete_ns - turn_end_ns) if turn_end_ns is not None else 0.0,
            "policy_ms": _ms(answered_ns - complete_ns),
            "asr": [self._asr(t) for t in transcripts if t.result],
        }
        self._vad_stop_at = self._turn_end = None
        for stale in [i for i, (_, ns) in self._taken.items() if ns <= answered_ns]:
            del self._taken[stale]  # this turn's, and those the policy ignored
            self._transcribed_ns.pop(stale, None)
        return event

    def _asr(self, transcript: TranscriptionFrame) -> AsrStage:
        """A transcript's audio length and ASR time (transcription began → transcript pushed)."""
        result = transcript.result if isinstance(transcript.result, dict) else {}
        out: AsrStage = {"audio_secs": float(result.get("audio_secs", 0.0))}
        began, done = result.get("segment_end"), self._transcribed_ns.get(transcript.id)
        if isinstance(began, int) and done is not None:
            out["asr_secs"] = round((done - began) / 1e9, 3)
        return out

    def _first_audio(self, speak: _Speak, frame: TTSAudioRawFrame, at_ns: int) -> TtsStage:
        """The ``tts`` event of a reply whose first audio has just left the TTS."""
        return {
            "kind": "tts",
            "text": frame.metadata.get(TTS_PIECE, ""),
            "at_ms": speak.at_ms,
            "first_audio_ms": _ms(at_ns - speak.started_ns),
            "first_audio_at_ms": self.stream.at(at_ns),
        }


def _ms(ns: int) -> float:
    return round(max(0, ns) / 1e6, 1)
