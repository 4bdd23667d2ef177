"""The processor that turns the caller's finished turns into the assistant's spoken replies.

It sits between the ``UserTurnProcessor`` and the TTS.  It configures its policy from the ``start``
message (an ``InputTransportMessageFrame`` from the serializer) or, if none comes within
``start_timeout_secs``, from a default assistant view; then it greets.  During the call it gathers the
transcripts of the current user turn and, when the turn ends, asks the policy for a reply and pushes it as
a ``TTSSpeakFrame``.  A reply with no text is no reply: nothing is spoken and the caller keeps the floor (the
rules policy's answer to a lone backchannel).  When the policy ends the call it pushes an ``EndWorkerFrame``
behind the goodbye, so the pipeline ends (and ``hangup`` goes out) only once the goodbye audio has been sent.

A policy whose ``respond`` takes a ``heard`` keyword also gets the ASR's confidence in the turn: the worst of
Whisper's figures over the turn's transcripts (:func:`server.policy.transcript_trust.worst`; None when the
transcriber
gives none), so that it need not read back words that were likely misheard.

Frame ordering note: ``UserStartedSpeakingFrame`` / ``UserStoppedSpeakingFrame`` are system frames and may
overtake the ``TranscriptionFrame`` (a data frame) they belong to, so the end of a turn is answered by
whichever of the two arrives last.

The processor measures nothing: the stage figures of ``scripts/bench_stages`` come from
:class:`server.stage_observer.StageObserver`, watching the frames on the pipeline's clock.  It tells the
observer what only it knows, as content: the caller log of an answered turn carries the transcripts that made
up the turn in its metadata (:data:`TURN_TRANSCRIPTS`; not sent on the wire).  To drop a stale transcript
(speech that ended before the current turn began) it compares the time the segment's transcription began, on
the pipeline's clock (``segment_end`` in the transcript's ``result``), with the time the turn began.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Required, TypedDict, cast

from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    EndWorkerFrame,
    Frame,
    InputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    StartFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from server.pcm_serializer import StartMessage
from server.piecewise_stt import CallerTurnFrame
from server.policy.transcript_trust import pooled, worst
from server.processors import ASR_CONFIDENCE, WarmRepliesFrame
from voice.contract.policy import AssistantView, Heard, Policy, PolicyFactory, answer

logger = logging.getLogger(__name__)

DEFAULT_VIEW: AssistantView = {
    "id": "default",
    "scenario": "",
    "preset": {"type": "none", "text": ""},
    "owner_goal": "",
}
"""The assistant view used when a call brings no ``start`` (or no ``dialogue``) in time."""

TURN_TRANSCRIPTS = "callsim.turn_transcripts"
"""Metadata key of an answered turn's ``caller`` log frame: the transcripts (frames) that made up the turn."""


class PolicyLog(TypedDict, total=False):
    """A ``log`` message of the policy (without ``"event": "log"``): ``kind`` greeting, reply, caller,
    ignored (speech outside a turn) or error; the other keys as the kind has them."""

    kind: Required[str]
    text: str  # what was said or heard
    confidence: Heard  # caller: the ASR's figures, when it gave them
    end_call: bool  # greeting, reply: the policy hangs up after it
    message: str  # error: what went wrong


def heard_in(transcripts: list[TranscriptionFrame]) -> Heard | None:
    """Whisper's figures for a turn: pooled over its pieces by length when it was heard in pieces
    (:func:`server.policy.transcript_trust.pooled`), else the worst of its segments'."""
    results = [t.result for t in transcripts if isinstance(t.result, dict)]
    if any("piece" in r for r in results):
        return pooled((r.get(ASR_CONFIDENCE), float(r.get("audio_secs", 0.0))) for r in results)
    return worst(r.get(ASR_CONFIDENCE) for r in results)


class PolicyProcessor(FrameProcessor):
    """Greets, answers each finished caller turn, and ends the call when the policy says so."""

    def __init__(
        self,
        policy_factory: PolicyFactory,
        *,
        default_view: AssistantView | None = None,
        start_timeout_secs: float = 2.0,
        send_logs: bool = True,
        **kwargs: Any,
    ) -> None:
        """Build the processor; the policy itself is built per call, from the dialogue's assistant view."""
        super().__init__(**kwargs)
        self._factory = policy_factory
        self._default_view = (default_view or DEFAULT_VIEW).copy()
        self._start_timeout = start_timeout_secs
        self._send_logs = send_logs
        self._policy: Policy | None = None
        self._start_timer: asyncio.Task[None] | None = None
        self._configure_lock = asyncio.Lock()
        self.call_id: str | None = None
        self.view: AssistantView | None = None
        self._in_turn = False
        self._turn_stopped = False
        self._turn_started_ns = 0  # when the current user turn started, on the pipeline's clock
        self._transcripts: list[TranscriptionFrame] = []
        self._by_piece: dict[int, TranscriptionFrame] = {}  # transcripts of pieces (server/piecewise_stt.py)
        self._turn_pieces: tuple[int, ...] | None = None  # the pieces the turn that ended is made of
        self._ended = False
        self.replies: list[str] = []
        self.caller_turns: list[str] = []

    @property
    def ended(self) -> bool:
        """Whether the policy has ended the call."""
        return self._ended

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Route frames: start/config, turn boundaries, transcripts; everything else passes through."""
        await super().process_frame(frame, direction)
        if isinstance(frame, StartFrame):
            await self.push_frame(frame, direction)
            self._start_timer = self.create_task(self._default_start_after_timeout(), "default_start")
        elif isinstance(frame, (EndFrame, CancelFrame)):
            await self._stop_timer()
            await self.push_frame(frame, direction)
        elif isinstance(frame, InputTransportMessageFrame):
            await self.push_frame(frame, direction)
            message = frame.message
            is_start = isinstance(message, dict) and message.get("event") == "start"
            if direction == FrameDirection.DOWNSTREAM and is_start:
                await self._on_start(message)
        elif isinstance(frame, UserStartedSpeakingFrame):
            await self.push_frame(frame, direction)
            self._in_turn = True
            self._turn_stopped = False
            self._turn_started_ns = self.get_clock().get_time()
        elif isinstance(frame, CallerTurnFrame):
            self._turn_pieces = frame.pieces
        elif isinstance(frame, UserStoppedSpeakingFrame):
            await self.push_frame(frame, direction)
            if self._in_turn:
                if self._turn_complete():
                    await self._answer_turn()
                else:
                    self._turn_stopped = True  # its transcript is still on the way
        elif isinstance(frame, TranscriptionFrame):
            await self._on_transcript(frame)
        else:
            await self.push_frame(frame, direction)

    # --- configuration and greeting ----------------------------------------------------------------

    async def _on_start(self, message: StartMessage) -> None:
        call_id = message.get("call_id")
        self.call_id = str(call_id) if call_id is not None else None
        dialogue = message.get("dialogue")
        # the view as it came over the wire, unchecked: the policies tolerate a malformed one, and one the
        # factory cannot build from falls back to the default (``_configure``)
        view = cast(AssistantView, dialogue) if isinstance(dialogue, dict) else self._default_view
        if await self._configure(view, source="start"):
            await self._greet()

    async def _default_start_after_timeout(self) -> None:
        await asyncio.sleep(self._start_timeout)
        self._start_timer = None
        if self._policy is None:
            logger.warning(f"no 'start' within {self._start_timeout:g}s: using the default assistant view")
            if await self._configure(self._default_view, source="default"):
                await self._greet()

    async def _stop_timer(self) -> None:
        task, self._start_timer = self._start_timer, None
        if task is not None and task is not asyncio.current_task():
            await self.cancel_task(task)

    async def _configure(self, view: AssistantView, *, source: str) -> bool:
        """Build the policy from ``view`` once; False if it was already built or cannot be built."""
        async with self._configure_lock:
            if self._policy is not None or self._ended:
                return False
            await self._stop_timer()
            try:
                self._policy = self._factory(view)
            except Exception as exc:  # a bad view must not kill the call: fall back to the default
                logger.warning(f"call {self.call_id}: cannot build a policy from the {source} view ({exc})")
                await self._log({"kind": "error", "message": f"bad assistant view: {exc}"})
                self._policy = self._factory(self._default_view)
                view = self._default_view
            self.view = view
            preset = view.get("preset")
            preset_type = preset.get("type") if isinstance(preset, Mapping) else None
            logger.info(f"call {self.call_id}: dialogue {view.get('id')!r} preset {preset_type!r} ({source})")
            return True

    async def _greet(self) -> None:
        assert self._policy is not None
        try:
            text = self._policy.greeting()
        except Exception as exc:
            logger.exception(f"call {self.call_id}: policy greeting failed")
            await self._log({"kind": "error", "message": f"policy greeting failed: {exc}"})
            return
        await self._say(text, end_call=False, kind="greeting")
        expected = getattr(self._policy, "expected_replies", None)
        if callable(expected):  # warmed in the TTS cache behind the greeting (server/processors.py)
            await self.push_frame(WarmRepliesFrame(tuple(expected())))

    # --- turns ----------------------------------------------------------------------------------------

    def _turn_complete(self) -> bool:
        """Whether the turn that ended has all its words here (a data frame may come after the end)."""
        if self._turn_pieces is None:
            return bool(self._transcripts)
        return all(p in self._by_piece for p in self._turn_pieces)

    async def _on_transcript(self, frame: TranscriptionFrame) -> None:
        text = frame.text.strip()
        if not text or self._ended:
            return
        result = frame.result if isinstance(frame.result, dict) else {}
        piece = result.get("piece")
        if isinstance(piece, int):  # a piece of the caller's speech: the turn's end lists its pieces
            self._by_piece[piece] = frame
            if self._turn_stopped and self._turn_complete():
                await self._answer_turn()
            return
        segment_end = result.get("segment_end")
        stale = isinstance(segment_end, int) and segment_end < self._turn_started_ns
        if not self._in_turn or stale:
            # Speech that started no turn (a backchannel while the assistant talked) is transcribed too,
            # and its transcript can arrive after the next real turn has begun: it must not stand in for
            # that turn's words.
            logger.debug(f"call {self.call_id}: ignoring speech outside a turn (backchannel?): [{text}]")
            await self._log({"kind": "ignored", "text": text})
            return
        self._transcripts.append(frame)
        if self._turn_stopped:
            await self._answer_turn()

    def _take_turn(self) -> list[TranscriptionFrame]:
        """The transcripts that make the turn that ended (its pieces, or its segments), and a fresh start."""
        transcripts, pieces = self._transcripts, self._turn_pieces
        if pieces is not None:
            transcripts = [self._by_piece[p] for p in pieces if p in self._by_piece]
            last = max(pieces, default=-1)
            self._by_piece = {p: t for p, t in self._by_piece.items() if p > last}
        self._transcripts, self._turn_pieces = [], None
        self._in_turn = self._turn_stopped = False
        return transcripts

    async def _answer_turn(self) -> None:
        transcripts = self._take_turn()
        caller_text = "".join(t.text.strip() for t in transcripts)
        if self._ended or not caller_text:
            return
        if self._policy is None:
            await self._configure(self._default_view, source="default")
        assert self._policy is not None
        self.caller_turns.append(caller_text)
        heard = heard_in(transcripts)
        try:
            reply = answer(self._policy, caller_text, heard)
        except Exception as exc:
            logger.exception(f"call {self.call_id}: policy failed on [{caller_text}]")
            await self._log({"kind": "error", "message": f"policy failed: {exc}"})
            return
        caller_log: PolicyLog = {"kind": "caller", "text": caller_text}
        if heard:
            caller_log["confidence"] = heard
        await self._log(caller_log, transcripts)
        said = f"[{reply.text}]" if reply.text.strip() else "nothing (keeps listening)"
        logger.info(f"call {self.call_id}: caller [{caller_text}] ({heard}) -> {said} end={reply.end_call}")
        await self._say(reply.text, end_call=reply.end_call, kind="reply")

    async def _say(self, text: str, *, end_call: bool, kind: str) -> None:
        text = text.strip()
        await self._log({"kind": kind, "text": text, "end_call": end_call})
        if text:
            self.replies.append(text)
            await self.push_frame(TTSSpeakFrame(text, append_to_context=False))
        if end_call:
            self._ended = True
            # Queued behind the goodbye in the TTS and the output transport: the pipeline ends (and the
            # serializer sends ``hangup``) once the goodbye's audio has gone out.
            await self.push_frame(EndWorkerFrame(reason="assistant hung up"))

    async def _log(self, payload: PolicyLog, transcripts: list[TranscriptionFrame] | None = None) -> None:
        """Send ``payload``; a caller log carries the turn's ``transcripts`` as metadata (never sent)."""
        if self._send_logs:
            frame = OutputTransportMessageUrgentFrame(message={"event": "log", **payload})
            if transcripts is not None:
                frame.metadata[TURN_TRANSCRIPTS] = transcripts
            await self.push_frame(frame)
