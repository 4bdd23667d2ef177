"""The processor that turns the caller's finished turns into the assistant's spoken replies.

It sits between the ``UserTurnProcessor`` and the TTS.  It configures its policy from the ``start``
message (an ``InputTransportMessageFrame`` from the serializer) or, if none comes within
``start_timeout_secs``, from a default assistant view; then it greets.  During the call it gathers the
transcripts of the current user turn and, when the turn ends, asks the policy for a reply and pushes it as
a ``TTSSpeakFrame``.  When the policy ends the call it pushes an ``EndWorkerFrame`` behind the goodbye, so
the pipeline ends (and ``hangup`` goes out) only once the goodbye audio has been sent.

Frame ordering note: ``UserStartedSpeakingFrame`` / ``UserStoppedSpeakingFrame`` are system frames and may
overtake the ``TranscriptionFrame`` (a data frame) they belong to, so the end of a turn is answered by
whichever of the two arrives last.

Stage timestamps in the ``log`` events (for ``scripts/bench_stages``): ``*_at_ms`` fields are positions in
the caller's audio stream, i.e. milliseconds of caller audio that had passed through this processor when it
happened (:class:`StreamClock`).  CallSim sends one 20 ms frame per 20 ms, so these lie on the caller's own
timeline (up to the transport delay) and need no clock synchronisation; ``*_ms`` fields are durations on
this process's clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from loguru import logger
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    CancelFrame,
    EndFrame,
    EndWorkerFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    StartFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

DEFAULT_VIEW: dict[str, Any] = {
    "id": "default",
    "scenario": "",
    "preset": {"type": "none", "text": ""},
    "owner_goal": "",
}
"""The assistant view used when a call brings no ``start`` (or no ``dialogue``) in time."""


class PolicyReplyLike(Protocol):
    """What the processor reads from a policy reply."""

    @property
    def text(self) -> str: ...

    @property
    def end_call(self) -> bool: ...


class AssistantPolicy(Protocol):
    """The dialogue policy the processor drives (``server.policy.rules.RulePolicy``)."""

    def greeting(self) -> str: ...

    def respond(self, caller_text: str) -> PolicyReplyLike: ...


PolicyFactory = Callable[[Mapping[str, Any]], AssistantPolicy]


class StreamClock:
    """The caller's timeline as a processor sees it: milliseconds of caller audio that have passed by.

    CallSim sends one 20 ms frame every 20 ms, so the audio seen so far is the caller's clock (late by the
    transport only).  Between frames the position is interpolated with this process's clock, by at most
    one frame, so positions are not quantised to 20 ms.
    """

    def __init__(self) -> None:
        self._ms = 0.0
        self._last: float | None = None  # monotonic time of the last frame
        self._frame_s = 0.02

    def add(self, frame: InputAudioRawFrame) -> None:
        """Count one input audio frame."""
        samples = len(frame.audio) / (2 * max(1, frame.num_channels))
        self._frame_s = samples / frame.sample_rate
        self._ms += self._frame_s * 1000
        self._last = time.monotonic()

    def now_ms(self) -> float:
        """The current position on the caller's timeline (ms, rounded to 0.1)."""
        extra = 0.0 if self._last is None else min(time.monotonic() - self._last, self._frame_s)
        return round(self._ms + extra * 1000, 1)


class PolicyProcessor(FrameProcessor):
    """Greets, answers each finished caller turn, and ends the call when the policy says so."""

    def __init__(
        self,
        policy_factory: PolicyFactory,
        *,
        default_view: Mapping[str, Any] | None = None,
        start_timeout_secs: float = 2.0,
        send_logs: bool = True,
        **kwargs: Any,
    ) -> None:
        """Build the processor; the policy itself is built per call, from the dialogue's assistant view."""
        super().__init__(**kwargs)
        self._factory = policy_factory
        self._default_view = dict(default_view or DEFAULT_VIEW)
        self._start_timeout = start_timeout_secs
        self._send_logs = send_logs
        self._policy: AssistantPolicy | None = None
        self._start_timer: asyncio.Task[None] | None = None
        self._configure_lock = asyncio.Lock()
        self.call_id: str | None = None
        self.view: Mapping[str, Any] | None = None
        self._in_turn = False
        self._turn_stopped = False
        self._turn_started = 0.0  # monotonic time the current user turn started
        self._texts: list[str] = []
        self._timings: list[dict[str, Any]] = []
        self._ended = False
        self.replies: list[str] = []
        self.caller_turns: list[str] = []
        # Stage timestamps: stream positions (ms of caller audio seen) and the turn end's monotonic time.
        self.stream = StreamClock()
        self._vad_stop_at: float | None = None
        self._turn_end_at: float | None = None
        self._turn_end_mono: float | None = None
        self._transcript_at: float | None = None

    @property
    def ended(self) -> bool:
        """Whether the policy has ended the call."""
        return self._ended

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Route frames: start/config, turn boundaries, transcripts; everything else passes through."""
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            self.stream.add(frame)
            await self.push_frame(frame, direction)
        elif isinstance(frame, StartFrame):
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
            self._turn_started = time.monotonic()
        elif isinstance(frame, UserStoppedSpeakingFrame):
            await self.push_frame(frame, direction)
            self._turn_end_at, self._turn_end_mono = self.stream.now_ms(), time.monotonic()
            if self._in_turn:
                if self._texts:
                    await self._answer_turn()
                else:
                    self._turn_stopped = True  # its transcript is still on the way
        elif isinstance(frame, TranscriptionFrame):
            await self._on_transcript(frame)
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            await self.push_frame(frame, direction)
            self._vad_stop_at = self.stream.now_ms()
        elif isinstance(frame, BotStartedSpeakingFrame) and direction == FrameDirection.UPSTREAM:
            # The output transport has started sending audio: the reply's first audio is on the line.
            await self.push_frame(frame, direction)
            await self._log({"kind": "speaking", "at_ms": self.stream.now_ms()})
        else:
            await self.push_frame(frame, direction)

    # --- configuration and greeting ----------------------------------------------------------------

    async def _on_start(self, message: dict[str, Any]) -> None:
        call_id = message.get("call_id")
        self.call_id = str(call_id) if call_id is not None else None
        dialogue = message.get("dialogue")
        view = dialogue if isinstance(dialogue, dict) else self._default_view
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

    async def _configure(self, view: Mapping[str, Any], *, source: str) -> bool:
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

    # --- turns ----------------------------------------------------------------------------------------

    async def _on_transcript(self, frame: TranscriptionFrame) -> None:
        text = frame.text.strip()
        if not text or self._ended:
            return
        result = frame.result if isinstance(frame.result, dict) else {}
        segment_end = result.pop("segment_end", None)
        stale = isinstance(segment_end, float) and segment_end < self._turn_started
        if not self._in_turn or stale:
            # Speech that started no turn (a backchannel while the assistant talked) is transcribed too,
            # and its transcript can arrive after the next real turn has begun: it must not stand in for
            # that turn's words.
            logger.debug(f"call {self.call_id}: ignoring speech outside a turn (backchannel?): [{text}]")
            await self._log({"kind": "ignored", "text": text})
            return
        self._texts.append(text)
        self._transcript_at = self.stream.now_ms()
        if result:
            self._timings.append(result)
        if self._turn_stopped:
            await self._answer_turn()

    async def _answer_turn(self) -> None:
        caller_text = "".join(self._texts)
        timings = self._timings
        self._texts, self._timings = [], []
        self._in_turn = self._turn_stopped = False
        if self._ended or not caller_text:
            return
        if self._policy is None:
            await self._configure(self._default_view, source="default")
        assert self._policy is not None
        self.caller_turns.append(caller_text)
        stages = self._turn_stages()
        started = time.monotonic()
        try:
            reply = self._policy.respond(caller_text)
        except Exception as exc:
            logger.exception(f"call {self.call_id}: policy failed on [{caller_text}]")
            await self._log({"kind": "error", "message": f"policy failed: {exc}"})
            return
        policy_ms = round((time.monotonic() - started) * 1000, 1)
        await self._log(
            {"kind": "caller", "text": caller_text, "asr": timings, "policy_ms": policy_ms, **stages}
        )
        logger.info(f"call {self.call_id}: caller [{caller_text}] -> [{reply.text}] end={reply.end_call}")
        await self._say(reply.text, end_call=reply.end_call, kind="reply")

    def _turn_stages(self) -> dict[str, float | None]:
        """Where the finished turn's stages fell: stream positions (``*_at_ms``) and the ASR wait.

        ``asr_wait_ms`` is how long the answer waited for the transcript after the turn had ended (0 when
        the transcript came first): the part of the ASR time on the critical path.
        """
        now_mono = time.monotonic()
        ended = self._turn_end_mono if self._turn_end_mono is not None else now_mono
        stages: dict[str, float | None] = {
            "vad_stop_at_ms": self._vad_stop_at,
            "turn_end_at_ms": self._turn_end_at,
            "transcript_at_ms": self._transcript_at,
            "answer_at_ms": self.stream.now_ms(),
            "asr_wait_ms": round(max(0.0, now_mono - ended) * 1000, 1),
        }
        self._vad_stop_at = self._turn_end_at = self._turn_end_mono = self._transcript_at = None
        return stages

    async def _say(self, text: str, *, end_call: bool, kind: str) -> None:
        text = text.strip()
        at_ms = self.stream.now_ms()  # when the text went to the TTS, as a stream position
        await self._log({"kind": kind, "text": text, "end_call": end_call, "at_ms": at_ms})
        if text:
            self.replies.append(text)
            await self.push_frame(TTSSpeakFrame(text, append_to_context=False))
        if end_call:
            self._ended = True
            # Queued behind the goodbye in the TTS and the output transport: the pipeline ends (and the
            # serializer sends ``hangup``) once the goodbye's audio has gone out.
            await self.push_frame(EndWorkerFrame(reason="assistant hung up"))

    async def _log(self, payload: dict[str, Any]) -> None:
        if self._send_logs:
            await self.push_frame(OutputTransportMessageUrgentFrame(message={"event": "log", **payload}))
