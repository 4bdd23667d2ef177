"""User-turn strategies for the built-in assistant (pipecat 1.14 ``turns`` API).

A user turn starts on the VAD's speech start, which is also what interrupts the assistant (the
``UserTurnProcessor`` broadcasts an ``InterruptionFrame`` when a turn starts).  While the assistant is
audible, :class:`BargeInTurnStartStrategy` asks for a little more speech before it starts the turn, so a
short backchannel ("嗯", "好") does not cut the reply off.  Whether the caller is still speaking when the
confirmation is due is read from the VAD's own frame-by-frame confidence
(:class:`server.vad_verdicts.VoicingSileroVAD`), not from its "stopped" event, which comes ``stop_secs`` after
the speech ended: waiting for that confirmed every backchannel longer than ~0.1 s as a barge-in.

A turn ends (:func:`turn_stop_strategy`, ``turn_model``): ``running`` (default) on the running transcript
of the caller heard in pieces (:mod:`server.turn_end`); ``lexical`` on silence (the VAD's stop plus
``turn_grace_secs``) once the segment's transcript has arrived, unless it sounds unfinished
(:mod:`server.continuation`: "那个，", "如果要改时间，"), then up to ``turn_max_silence_secs``
(:class:`LexicalTurnStopStrategy`); ``silence`` on silence alone (:class:`QuietSpeechTimeoutStopStrategy`);
``smart-turn`` when pipecat's smart-turn v3 model (~60 ms per verdict) judges the speech finished, else
after ``turn_max_silence_secs`` (it misjudges the built-in Mandarin voices too often to be the default).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipecat.audio.turn.smart_turn.base_smart_turn import SmartTurnParams
from pipecat.clocks.base_clock import BaseClock
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    Frame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.turns.types import ProcessFrameResult
from pipecat.turns.user_start import BaseUserTurnStartStrategy
from pipecat.turns.user_stop import (
    BaseUserTurnStopStrategy,
    SpeechTimeoutUserTurnStopStrategy,
    TurnAnalyzerUserTurnStopStrategy,
)

from server.continuation import unfinished_cue
from server.processors import SegmentWithoutWordsFrame
from server.turn_end import RunningTurnStopStrategy

if TYPE_CHECKING:
    from voice.contract.tuning import TurnSettings

logger = logging.getLogger(__name__)


class BargeInTurnStartStrategy(BaseUserTurnStartStrategy):
    """Start the user turn on VAD speech start; while the assistant is audible, only after more speech.

    ``confirm_secs`` is the extra speech required (on top of the VAD's own ``start_secs``) before a turn
    starts while the assistant is audible: the turn starts when it is due if the caller is still speaking
    (``caller_silent_secs()`` under ``silence_secs``), or as soon as the caller speaks again before the VAD
    says "stopped"; speech that has ended by then is a backchannel and starts no turn.  A VAD "stopped"
    before the confirmation is due does not decide by itself: with ``vad_stop_secs`` 0.2 a comma in the
    first words ("喂，你好", "行，那我…") is such a stop, and the caller is speaking again when it is due.
    ``assistant_audible`` may report audibility better than pipecat's bot-speaking state (the output
    transport sends ahead of the caller's playout, so the caller keeps hearing the reply after pipecat has
    finished sending it); it is OR-ed with that state.  What the caller hears stop sooner than this
    confirmation is the hold (:mod:`server.hold`).
    """

    def __init__(
        self,
        *,
        confirm_secs: float = 0.3,
        assistant_audible: Callable[[], bool] | None = None,
        caller_silent_secs: Callable[[], float] | None = None,
        silence_secs: float = 0.1,
        poll_secs: float = 0.04,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._confirm_secs = max(0.0, confirm_secs)
        self._caller_silent_secs = caller_silent_secs
        self._silence_secs = silence_secs
        self._poll_secs = poll_secs
        self._assistant_audible = assistant_audible
        self._bot_speaking = False
        self._confirm_task: asyncio.Task[None] | None = None
        self._confirm_due = False  # the pending confirmation's point has passed
        self._stopped = False  # the VAD said "stopped" since the pending confirmation began
        self.backchannels = 0

    def _audible(self) -> bool:
        return self._bot_speaking or bool(self._assistant_audible and self._assistant_audible())

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        """Track the assistant's speech and start a turn on (confirmed) caller speech."""
        if isinstance(frame, BotStartedSpeakingFrame):
            self._bot_speaking = True
        elif isinstance(frame, BotStoppedSpeakingFrame):
            self._bot_speaking = False
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            self._stopped = False
            if self._confirm_secs <= 0 or not self._audible():
                await self.trigger_user_turn_started()
            elif self._confirm_task is None:
                self._confirm_due = False
                self._confirm_task = self.task_manager.create_task(
                    self._confirm_after_delay(), f"{self}::confirm_barge_in"
                )
            return ProcessFrameResult.STOP
        elif isinstance(frame, VADUserStoppedSpeakingFrame) and self._confirm_task is not None:
            # Before the confirmation point, a stop may be a pause inside the first words ("喂，你好"):
            # that point decides.  After it, the caller has been silent since: a backchannel.
            self._stopped = True
            if self._confirm_due:
                await self._backchannel()
        return ProcessFrameResult.CONTINUE

    async def _backchannel(self) -> None:
        self.backchannels += 1
        logger.debug(f"{self}: short speech while the assistant talks, not interrupting")
        await self._cancel_confirm()

    async def _confirm_after_delay(self) -> None:
        try:
            await asyncio.sleep(self._confirm_secs)
            self._confirm_due = True
            if self._caller_silent_secs is None:  # no voicing known: the VAD's stop says it
                silent = self._stopped
            else:
                silent = self._caller_silent_secs() >= self._silence_secs
            if silent and self._stopped:  # it ended, and the VAD has already said so: a backchannel
                self._confirm_task = None
                self.backchannels += 1
                return
            # still speaking, or speaking again before the VAD's "stopped" (which cancels this task)?
            while self._caller_silent_secs is not None and self._caller_silent_secs() >= self._silence_secs:
                await asyncio.sleep(self._poll_secs)
        except asyncio.CancelledError:
            return
        self._confirm_task = None
        await self.trigger_user_turn_started()

    async def _cancel_confirm(self) -> None:
        task, self._confirm_task = self._confirm_task, None
        if task is not None and task is not asyncio.current_task():
            await self.task_manager.cancel_task(task)

    async def handle_user_turn_started(self) -> None:
        """A turn started (by us or another strategy): nothing left to confirm."""
        await self._cancel_confirm()

    async def cleanup(self) -> None:
        """Stop a pending confirmation."""
        await super().cleanup()
        await self._cancel_confirm()


class QuietSpeechTimeoutStopStrategy(SpeechTimeoutUserTurnStopStrategy):
    """pipecat's speech-timeout stop strategy for a segmented STT: quiet, and waiting for the last segment.

    - No per-call warning about a non-default stop_secs: the strategy's built-in STT latency figures assume
      ``stop_secs=0.2``; ours come from the segmented STT, whose transcripts are finalized, so that
      assumption never comes into play.
    - A turn of several VAD segments ("好的，谢谢，" pause "再见。") gets one transcript per segment, each
      ready only after its segment ends.  On a busy machine the first segment's transcript can arrive after
      the caller has started the next one; pipecat takes any finalized transcript as "the STT has nothing
      more to send", so at the next VAD stop it ended the turn at once, without the last words (a goodbye
      lost, the call never hung up).  A transcript whose segment ended before the VAD's latest "started"
      (``segment_end`` from :class:`server.processors.CallSimSTTService`) adds its words but does not
      stand for the end of the turn: that waits for the last segment's transcript, or the STT safety net.
    - A segment without words (:class:`server.processors.SegmentWithoutWordsFrame`) tells the same as a
      finalized transcript, so the safety net is only for an STT that hangs.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._clock: BaseClock | None = None
        self._speech_started_ns = 0  # the VAD's latest "started", on the pipeline's clock

    async def setup(self, setup: FrameProcessorSetup) -> None:  # type: ignore[override]  # as pipecat
        """Keep the pipeline's clock, the one ``segment_end`` is read on."""
        await super().setup(setup)
        self._clock = setup.clock

    async def _handle_vad_user_started_speaking(self, frame: VADUserStartedSpeakingFrame) -> None:
        self._speech_started_ns = self._clock.get_time() if self._clock is not None else 0
        await super()._handle_vad_user_started_speaking(frame)

    async def _handle_vad_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        self._stop_secs_warned = True
        await super()._handle_vad_user_stopped_speaking(frame)

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        """pipecat's handling, plus the STT's word for a segment without words."""
        if isinstance(frame, SegmentWithoutWordsFrame):
            await self._handle_segment_without_words(frame)
        return await super().process_frame(frame)

    async def _handle_transcription(self, frame: TranscriptionFrame) -> None:
        result = frame.result if isinstance(frame.result, dict) else {}
        if self._of_an_earlier_segment(result.get("segment_end")):
            self._text += frame.text  # words of this turn, but not its end
            return
        await super()._handle_transcription(frame)

    async def _handle_segment_without_words(self, frame: SegmentWithoutWordsFrame) -> None:
        """The STT has nothing more to send for the latest segment: as a finalized transcript, no words."""
        if self._of_an_earlier_segment(frame.segment_end):
            return
        self._transcript_finalized = True
        if self._vad_stopped and not self._stt_wait_done:
            self._stt_wait_done = True
            if self._stt_timeout_task is not None:
                await self.task_manager.cancel_task(self._stt_timeout_task)
                self._stt_timeout_task = None
            if self._user_speech_wait_done:
                await self._maybe_trigger_user_turn_stopped()

    def _of_an_earlier_segment(self, segment_end: object) -> bool:
        return isinstance(segment_end, int) and segment_end < self._speech_started_ns


class QuietSmartTurnStopStrategy(TurnAnalyzerUserTurnStopStrategy):
    """pipecat's turn-analyzer stop strategy, without its per-call warning about a non-default stop_secs
    (the same assumption as above, which the segmented STT never relies on)."""

    async def _handle_vad_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        self._stop_secs_warned = True
        await super()._handle_vad_user_stopped_speaking(frame)


class LexicalTurnStopStrategy(QuietSpeechTimeoutStopStrategy):
    """End the turn on silence, unless what was said so far sounds unfinished (:mod:`server.continuation`).

    The silence model's conditions come first (the VAD stopped, ``turn_grace_secs`` passed, the segment's
    transcript arrived); then a transcript ending in "那个", "就是", a comma or an open "如果…" keeps the
    floor with the caller until ``max_silence_secs`` of silence in all, measured from the VAD's stop
    (which itself comes ``stop_secs`` after the speech).  Any new speech cancels the wait, as it cancels
    the grace timer.

    ``caller_silent_secs`` (the VAD's frame-by-frame voicing, :class:`server.vad_verdicts.VoicingSileroVAD`)
    catches speech that has resumed but that the VAD has not yet confirmed (it says "started" only
    ``start_secs`` in): a caller who goes on after a comma's ~0.2 s pause is then not cut into two turns.
    """

    def __init__(
        self,
        *,
        max_silence_secs: float,
        caller_silent_secs: Callable[[], float] | None = None,
        resumed_secs: float = 0.1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._max_silence_secs = max_silence_secs
        self._caller_silent_secs = caller_silent_secs
        self._resumed_secs = resumed_secs
        self._recheck_task: asyncio.Task[None] | None = None
        self._patience_task: asyncio.Task[None] | None = None
        self._patience_done = False
        self._vad_stopped_at = 0.0

    async def _handle_vad_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        self._vad_stopped_at = asyncio.get_running_loop().time()
        await super()._handle_vad_user_stopped_speaking(frame)

    async def _discard_pending_end_of_turn(self) -> None:
        await super()._discard_pending_end_of_turn()
        self._patience_done = False
        await self._cancel_waits()

    async def _cancel_waits(self) -> None:
        for task in (self._patience_task, self._recheck_task):
            if task is not None and task is not asyncio.current_task():
                await self.task_manager.cancel_task(task)
        self._patience_task = self._recheck_task = None

    async def _maybe_trigger_user_turn_stopped(self) -> None:
        ready = (
            not self._vad_user_speaking
            and bool(self._text)
            and self._user_speech_wait_done
            and self._stt_wait_done
        )
        resumed = self._caller_silent_secs is not None and self._caller_silent_secs() < self._resumed_secs
        if ready and resumed:  # speaking again: the VAD's "started" will come; look again shortly
            if self._recheck_task is None:
                self._recheck_task = self.task_manager.create_task(self._recheck(), f"{self}::recheck")
            return
        if ready and not self._patience_done:
            cue = unfinished_cue(self._text)
            if cue is not None:
                if self._patience_task is None:
                    logger.debug(f"{self}: {self._text!r} sounds unfinished ({cue}), waiting")
                    self._patience_task = self.task_manager.create_task(
                        self._wait_patiently(), f"{self}::wait_patiently"
                    )
                return
        await super()._maybe_trigger_user_turn_stopped()

    async def _recheck(self) -> None:
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            return
        finally:
            self._recheck_task = None
        await self._maybe_trigger_user_turn_stopped()

    async def _wait_patiently(self) -> None:
        elapsed = asyncio.get_running_loop().time() - self._vad_stopped_at + self._stop_secs
        try:
            await asyncio.sleep(max(0.0, self._max_silence_secs - elapsed))
        except asyncio.CancelledError:
            return
        finally:
            self._patience_task = None
        self._patience_done = True
        await self._maybe_trigger_user_turn_stopped()

    async def cleanup(self) -> None:
        """Stop a pending wait."""
        await super().cleanup()
        await self._cancel_waits()


def turn_stop_strategy(
    settings: TurnSettings,
    caller_silent_secs: Callable[[], float] | None = None,
    caller_quiet_secs: Callable[[], float] | None = None,
    caller_onset: Callable[[], bool] | None = None,
) -> BaseUserTurnStopStrategy:
    """What ends a caller's turn, by ``settings.turn_model``: the running transcript (silence counted by
    ``caller_quiet_secs``, held while ``caller_onset()``), silence with lexical cues, silence alone, or
    smart-turn v3."""
    if settings.turn_model == "running":
        if caller_silent_secs is None:
            raise ValueError("the running turn model reads the VAD's voicing: caller_silent_secs is needed")
        return RunningTurnStopStrategy(
            caller_silent_secs=caller_quiet_secs or caller_silent_secs,
            caller_onset=caller_onset,
            end_secs=settings.turn_end_secs,
            end_max_secs=settings.turn_end_max_secs,
            max_silence_secs=settings.turn_max_silence_secs,
        )
    if settings.turn_model == "silence":
        return QuietSpeechTimeoutStopStrategy(user_speech_timeout=settings.turn_grace_secs)
    if settings.turn_model == "lexical":
        return LexicalTurnStopStrategy(
            user_speech_timeout=settings.turn_grace_secs,
            max_silence_secs=settings.turn_max_silence_secs,
            caller_silent_secs=caller_silent_secs,
        )
    from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3

    analyzer = LocalSmartTurnAnalyzerV3(params=SmartTurnParams(stop_secs=settings.turn_max_silence_secs))
    return QuietSmartTurnStopStrategy(turn_analyzer=analyzer)
