"""User-turn strategies for the built-in assistant (pipecat 1.14 ``turns`` API).

A user turn starts on the VAD's speech start, which is also what interrupts the assistant (the
``UserTurnProcessor`` broadcasts an ``InterruptionFrame`` when a turn starts).  While the assistant is
audible, :class:`BargeInTurnStartStrategy` asks for a little more speech before it starts the turn, so a
short backchannel ("嗯", "好") does not cut the reply off.  Whether the caller is still speaking when the
confirmation is due is read from the VAD's own frame-by-frame confidence (:class:`VoicingSileroVAD`), not
from its "stopped" event, which comes ``stop_secs`` after the speech ended: waiting for that confirmed
every backchannel longer than ~0.1 s as a barge-in.  The turn ends once the VAD has stopped, a
short grace period has passed and the segment's transcript has arrived
(:class:`QuietSpeechTimeoutStopStrategy`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from loguru import logger
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    Frame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.turns.types import ProcessFrameResult
from pipecat.turns.user_start import BaseUserTurnStartStrategy
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy


class VoicingSileroVAD(SileroVADAnalyzer):
    """pipecat's Silero analyzer that also remembers when it last heard voice, in samples analysed."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.analysed = 0  # samples scored so far
        self.last_voiced = 0  # one past the last sample of the last window scored as voice

    def voice_confidence(self, buffer: bytes) -> float:
        confidence = float(super().voice_confidence(buffer))
        self.analysed += len(buffer) // 2
        if confidence >= self.params.confidence:
            self.last_voiced = self.analysed
        return confidence

    def silent_secs(self) -> float:
        """How long the caller has been silent, by the VAD's confidence (0 while speaking)."""
        return (self.analysed - self.last_voiced) / (self.sample_rate or 16000)


class BargeInTurnStartStrategy(BaseUserTurnStartStrategy):
    """Start the user turn on VAD speech start; while the assistant is audible, only after more speech.

    ``confirm_secs`` is the extra speech required (on top of the VAD's own ``start_secs``) before a turn
    starts while the assistant is audible: the turn starts when it is due if the caller is still speaking
    (``caller_silent_secs()`` under ``silence_secs``), or as soon as the caller speaks again before the VAD
    says "stopped"; speech that has ended by then is a backchannel and starts no turn.
    ``assistant_audible`` may report audibility better than pipecat's bot-speaking state (the output
    transport sends faster than real time, so the caller keeps hearing the reply after pipecat has finished
    sending it); it is OR-ed with that state.
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
            if self._confirm_secs <= 0 or not self._audible():
                await self.trigger_user_turn_started()
            elif self._confirm_task is None:
                self._confirm_task = self.task_manager.create_task(
                    self._confirm_after_delay(), f"{self}::confirm_barge_in"
                )
            return ProcessFrameResult.STOP
        elif isinstance(frame, VADUserStoppedSpeakingFrame) and self._confirm_task is not None:
            self.backchannels += 1
            logger.debug(f"{self}: short speech while the assistant talks, not interrupting")
            await self._cancel_confirm()
        return ProcessFrameResult.CONTINUE

    async def _confirm_after_delay(self) -> None:
        try:
            await asyncio.sleep(self._confirm_secs)
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
    """pipecat's speech-timeout stop strategy, without its per-call warning about a non-default stop_secs.

    The warning says the strategy's built-in STT latency figures assume ``stop_secs=0.2``; ours come from
    the segmented STT, whose transcripts are finalized, so that assumption never comes into play.
    """

    async def _handle_vad_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        self._stop_secs_warned = True
        await super()._handle_vad_user_stopped_speaking(frame)
