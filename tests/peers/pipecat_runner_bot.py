"""A pipecat bot as pipecat's examples write one, started by pipecat's own development runner.

``python tests/peers/pipecat_runner_bot.py --host 127.0.0.1 --port P`` runs
``pipecat.runner.run.main``, unmodified: it serves SmallWebRTC (``POST``/``PATCH /api/offer``) by default
and calls :func:`bot` with each connection.  The bot is what a pipecat user writes: ``create_transport``
with WebRTC transport params, Silero VAD, pipecat's user-turn processor (which interrupts the bot when the
user starts talking) and a tiny processor answering each user turn with a few seconds of recorded speech
(a recording, not a TTS: the bot needs no model).  Two test switches come with the call, in
``request_data["bot"]`` (what a CallSim config's ``request-data`` adds): ``{"silent": true}`` never
answers (a bot that never replies), ``{"hangup_after": N}`` ends the call (the peer connection closes)
after its N-th answer has played.

Each call prints one line ``bot: body <json>`` with the ``request_data`` the caller sent, so a test can
check that the dialogue reached the bot.
"""

from __future__ import annotations

import asyncio
import json

from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import (
    EndFrame,
    Frame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.runner.types import RunnerArguments
from pipecat.runner.utils import create_transport
from pipecat.transports.base_transport import TransportParams
from pipecat.turns.user_start.vad_user_turn_start_strategy import VADUserTurnStartStrategy
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from voice.core.audio import to_bytes
from voice.speech.tts.memory import MemoryTTS

RATE = 16000
ANSWER_TEXT = "您好这里是机主的电话助理请问您有什么事情需要转告"
ANSWER = to_bytes(MemoryTTS(f0_hz=210).synthesize(ANSWER_TEXT))  # ~4.5 s of speech-like syllables
CHUNK = RATE // 50 * 2 * 2  # 40 ms of PCM16


class Answerer(FrameProcessor):
    """Answers every finished user turn with ``ANSWER``; ends the call after ``hangup_after`` answers."""

    def __init__(self, *, silent: bool, hangup_after: int) -> None:
        super().__init__()
        self._silent, self._hangup_after, self._answers = silent, hangup_after, 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, UserStoppedSpeakingFrame) and not self._silent:
            self._answers += 1
            await self.push_frame(TTSStartedFrame())
            for i in range(0, len(ANSWER), CHUNK):
                await self.push_frame(TTSAudioRawFrame(ANSWER[i : i + CHUNK], RATE, 1))
            await self.push_frame(TTSStoppedFrame())
            if self._hangup_after and self._answers >= self._hangup_after:
                await self.push_frame(EndFrame())  # the output transport plays what is queued, then closes


async def bot(runner_args: RunnerArguments) -> None:
    """The runner's entry point: one call."""
    print("bot: body " + json.dumps(runner_args.body, ensure_ascii=False), flush=True)
    transport = await create_transport(
        runner_args,
        {"webrtc": lambda: TransportParams(audio_in_enabled=True, audio_out_enabled=True)},
    )
    turns = UserTurnProcessor(
        user_turn_strategies=UserTurnStrategies(
            start=[VADUserTurnStartStrategy()],
            stop=[SpeechTimeoutUserTurnStopStrategy(wait_for_transcript=False)],
        )
    )
    switches = (runner_args.body or {}).get("bot") or {}
    answerer = Answerer(
        silent=bool(switches.get("silent")), hangup_after=int(switches.get("hangup_after", 0))
    )
    pipeline = Pipeline(
        [
            transport.input(),
            VADProcessor(vad_analyzer=SileroVADAnalyzer()),
            turns,
            answerer,
            transport.output(),
        ]
    )
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
        enable_rtvi=False,
    )

    @transport.event_handler("on_client_disconnected")
    async def _gone(_transport: object, _client: object) -> None:
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
    await runner.add_workers(worker)
    await asyncio.wait_for(runner.run(), 600)


if __name__ == "__main__":
    from pipecat.runner.run import main

    main()
