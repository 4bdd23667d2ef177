"""One call of the built-in assistant: the pipecat pipeline built on an accepted websocket, and its handle.

Kept apart from :mod:`server.app` (which listens, accepts connections and owns the shared engines) because
this is what a call *is*, whatever route it came in on: the same pipeline serves the raw PCM protocol
(``docs/protocol.md``, :class:`~server.pcm_serializer.PcmSerializer`) and Twilio Media Streams (pipecat's
own ``TwilioFrameSerializer``: :mod:`server.twilio_route`), where only the serializer and the audio rate
differ (:func:`build_pipeline`), and WebRTC (pipecat's ``SmallWebRTCTransport``: :mod:`server.webrtc_route`),
which brings its own transport to :func:`assemble_call`::

    transport.input() → Silero VAD → ASR (segmented) → user turns → policy → TTS
        → transport.output() (real time, held while the caller may be cutting in: server/hold.py)

With ``send_logs`` a :class:`~server.stage_observer.StageObserver` watches the pipeline and sends the stage
timings as ``log`` events; the processors themselves measure nothing.

The speech engines are not built here: they are shared by all calls, each run in its own single-thread
executor (:class:`server.config.SpeechEngines`), and handed to :func:`build_pipeline`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from fastapi import WebSocket
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    InputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.transports.base_transport import BaseTransport
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from server.config import AssistantSettings, default_policy_factory, stopwatch
from server.hold import PacedWebsocketTransport, ReplyHold, reply_hold
from server.pcm_serializer import PcmSerializer, PlayoutTracker, StartMessage
from server.piecewise_stt import PieceSTTService
from server.policy.llm_policy import LLMPolicyFactory
from server.policy.processor import DEFAULT_VIEW, PolicyProcessor
from server.processors import CallSimSTTService, CallSimTTSService
from server.stage_observer import StageLog, StageObserver
from server.turns import BargeInTurnStartStrategy, turn_stop_strategy
from server.twilio_route import TwilioCallSerializer
from server.vad_verdicts import VoicingSileroVAD
from voice.contract.policy import PolicyFactory
from voice.core.audio import SAMPLE_RATE

if TYPE_CHECKING:
    from voice.speech.asr import ASREngine
    from voice.speech.tts.engine import TTSEngine

__all__ = ["AssistantCall", "CallLine", "assemble_call", "build_pipeline"]

logger = logging.getLogger(__name__)


# --- one call ----------------------------------------------------------------------------------------------


class CallLine(Protocol):
    """What the pipeline reads of the line a call came in on: the serializers of the websocket routes, and
    :class:`server.webrtc_route.WebrtcLineState` over WebRTC."""

    call_id: str | None
    playout: PlayoutTracker  # what the caller still hears of the reply (the barge-in strategy, the hold)
    stopped: bool  # the caller hung up
    hung_up: bool  # the assistant did
    bytes_in: int  # as 16 kHz PCM16, for the call log
    bytes_out: int


@dataclass(eq=False)
class AssistantCall:
    """One call's pipeline and the handles tests and the server need."""

    worker: PipelineWorker
    transport: BaseTransport
    serializer: CallLine
    policy: PolicyProcessor
    max_secs: float
    elapsed: Callable[[], float] = field(default_factory=stopwatch)  # seconds since the call was built
    websocket: WebSocket | None = None  # the call's socket, for a hangup that must not be lost

    async def run(self) -> None:
        """Run the call until it ends (either side hangs up, the socket closes, or a limit is hit)."""
        runner = WorkerRunner(handle_sigint=False, check_dangling_tasks=False)
        await runner.add_workers(self.worker)
        try:
            await asyncio.wait_for(runner.run(), timeout=self.max_secs + 30.0)
        except TimeoutError:
            logger.error(f"call {self.serializer.call_id}: pipeline did not end in time, cancelling")
            await self.worker.cancel(reason="call exceeded its time limit")

    async def cancel(self, reason: str) -> None:
        """End the call now, dropping anything still queued; the caller hears ``hangup`` with ``reason``.

        The hangup is sent before the pipeline is cancelled: on a cancel, pipecat's input transport closes
        the socket, which can beat the output transport's own hangup (seen under load at shutdown).
        """
        if self.websocket is not None and isinstance(self.serializer, FrameSerializer):
            with contextlib.suppress(Exception):  # a socket already gone: nothing to tell
                message = await self.serializer.serialize(CancelFrame(reason=reason))
                if isinstance(message, str):
                    await self.websocket.send_text(message)
                elif isinstance(message, bytes):
                    await self.websocket.send_bytes(message)
        await self.worker.cancel(reason=reason)


def build_pipeline(
    websocket: WebSocket,
    *,
    tts: TTSEngine,
    asr: ASREngine,
    settings: AssistantSettings | None = None,
    policy_factory: PolicyFactory | None = None,
    tts_executor: ThreadPoolExecutor | None = None,
    asr_executor: ThreadPoolExecutor | None = None,
    serializer: PcmSerializer | TwilioCallSerializer | None = None,
    start_message: StartMessage | None = None,
    sample_rate: int = SAMPLE_RATE,
) -> AssistantCall:
    """Build the per-call pipeline on an accepted websocket; ``AssistantCall.run()`` runs it.

    ``serializer`` is the line protocol (raw PCM by default).  ``start_message`` is a ``start`` already
    read off the socket (Twilio's handshake), handed to the policy as if it had come through the serializer.
    ``sample_rate`` is the pipeline's audio rate: the line's own (8 kHz for Twilio, as in pipecat's
    telephony examples), so the serializer never resamples; the speech engines resample per utterance.
    """
    settings = settings or AssistantSettings()
    serializer = serializer or PcmSerializer()
    playout = serializer.playout
    hold = reply_hold(settings.turns, playout, sample_rate)
    transport = PacedWebsocketTransport(
        websocket,
        params=FastAPIWebsocketParams(
            audio_in_enabled=True,
            audio_in_sample_rate=sample_rate,
            audio_out_enabled=True,
            audio_out_sample_rate=sample_rate,
            audio_out_10ms_chunks=2,  # 20 ms messages, like CallSim's own
            audio_out_end_silence_secs=0,  # no 2 s of silence before the hangup
            add_wav_header=False,
            serializer=serializer,
            session_timeout=settings.serving.max_call_secs,
            allowed_origins=[],
        ),
        playout=playout,
        hold=hold,
        lead_secs=settings.turns.output_lead_secs,
    )
    call = assemble_call(
        transport,
        serializer,
        hold,
        tts=tts,
        asr=asr,
        settings=settings,
        policy_factory=policy_factory,
        tts_executor=tts_executor,
        asr_executor=asr_executor,
        start_message=start_message,
        sample_rate=sample_rate,
    )
    call.websocket = websocket
    worker = call.worker

    @transport.event_handler("on_session_timeout")
    async def _on_session_timeout(_transport: Any, _websocket: Any) -> None:
        logger.warning(f"call {serializer.call_id}: reached {settings.serving.max_call_secs}s, hanging up")
        await worker.queue_frame(EndFrame(reason="maximum call duration reached"))

    return call


def assemble_call(
    transport: BaseTransport,
    line: CallLine,
    hold: ReplyHold | None,
    *,
    tts: TTSEngine,
    asr: ASREngine,
    settings: AssistantSettings,
    policy_factory: PolicyFactory | None = None,
    tts_executor: ThreadPoolExecutor | None = None,
    asr_executor: ThreadPoolExecutor | None = None,
    start_message: StartMessage | None = None,
    sample_rate: int = SAMPLE_RATE,
) -> AssistantCall:
    """The pipeline between a transport's input and output, whatever the transport; its call.

    ``hold`` must be the one the transport's output waits on (:func:`server.hold.reply_hold` over
    ``line.playout``).  ``start_message`` is handed to the policy once the transport says the caller is
    connected, queued behind the pipeline's start (so never lost, however early the client connects).  The
    caller's disconnect cancels the call; limits of the transport's own (a session timeout) are the
    builder's to wire.
    """
    stt: CallSimSTTService
    if settings.turns.turn_model == "running":  # the caller heard in pieces (server/piecewise_stt.py)
        stt = PieceSTTService(asr, executor=asr_executor, piece_pause_secs=settings.turns.piece_pause_secs)
    else:
        stt = CallSimSTTService(asr, executor=asr_executor)
    listeners = [f for f in (hold.observe if hold else None, getattr(stt, "observe_window", None)) if f]
    analyzer = VoicingSileroVAD(
        on_window=listeners,
        params=VADParams(
            confidence=settings.turns.vad_confidence,
            start_secs=settings.turns.vad_start_secs,
            stop_secs=settings.turns.vad_stop_secs,
            min_volume=settings.turns.vad_min_volume,
        ),
    )
    vad = VADProcessor(vad_analyzer=analyzer)
    turns = UserTurnProcessor(
        user_turn_strategies=UserTurnStrategies(
            start=[
                BargeInTurnStartStrategy(
                    confirm_secs=settings.turns.barge_in_confirm_secs,
                    assistant_audible=line.playout.playing,
                    caller_silent_secs=analyzer.silent_secs,
                    silence_secs=settings.turns.barge_in_silence_secs,
                )
            ],
            stop=[
                turn_stop_strategy(
                    settings.turns,
                    caller_silent_secs=analyzer.silent_secs,
                    caller_quiet_secs=analyzer.quiet_secs,
                    caller_onset=analyzer.onset_pending,
                )
            ],
        ),
        user_turn_stop_timeout=settings.turns.turn_stop_timeout_secs,
    )
    tts_service = CallSimTTSService(tts, executor=tts_executor)
    policy: PolicyProcessor
    if isinstance(policy_factory, LLMPolicyFactory) or (
        policy_factory is None and settings.policy.policy.startswith("openai:")
    ):  # the chat model streams its reply into the voice (server/policy/llm.py)
        from server.policy.llm_service import llm_policy_parts

        policy, *model = llm_policy_parts(settings.policy, policy_factory)
    else:
        policy = PolicyProcessor(
            policy_factory or default_policy_factory,
            default_view=DEFAULT_VIEW,
            start_timeout_secs=settings.policy.start_timeout_secs,
            send_logs=settings.policy.send_logs,
        )
        model = []
    pipeline = Pipeline([transport.input(), vad, stt, turns, policy, *model, tts_service, transport.output()])
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=sample_rate, audio_out_sample_rate=sample_rate),
        enable_rtvi=False,
        enable_turn_tracking=False,
        idle_timeout_secs=settings.serving.idle_timeout_secs,
        check_dangling_tasks=False,
    )
    if settings.policy.send_logs:

        async def send_log(message: StageLog) -> None:
            await worker.queue_frame(OutputTransportMessageUrgentFrame(message={"event": "log", **message}))

        worker.add_observer(StageObserver(policy=policy, tts=tts_service, send=send_log))
    call = AssistantCall(worker, transport, line, policy, max_secs=float(settings.serving.max_call_secs))

    if start_message is not None:

        @transport.event_handler("on_client_connected")
        async def _on_connected(_transport: Any, _client: Any) -> None:
            await worker.queue_frame(InputTransportMessageFrame(message=dict(start_message)))

    @transport.event_handler("on_client_disconnected")
    async def _on_disconnected(_transport: Any, _client: Any) -> None:
        if not line.stopped and not line.hung_up:
            logger.info(f"call {line.call_id}: the caller's line closed")
        await worker.cancel(reason="client disconnected")

    @worker.event_handler("on_pipeline_error")
    async def _on_error(_worker: Any, frame: Any) -> None:
        processor = getattr(frame, "processor", None)
        message = str(getattr(frame, "error", frame))
        if processor is not None and not processor.is_usable:
            logger.error(f"call {line.call_id}: {message}; ending the call")
            await worker.queue_frame(
                OutputTransportMessageUrgentFrame(message={"event": "error", "message": message})
            )
            await worker.queue_frame(EndFrame(reason=f"assistant failure: {message}"))
        else:
            logger.warning(f"call {line.call_id}: {message}")
            if settings.policy.send_logs:
                await worker.queue_frame(
                    OutputTransportMessageUrgentFrame(
                        message={"event": "log", "kind": "error", "message": message}
                    )
                )

    return call
