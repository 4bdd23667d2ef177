"""pipecat's own websocket protocol (``pipecat+ws://``): CallSim is the client a pipecat bot serves.

A pipecat bot behind ``FastAPIWebsocketTransport`` (or ``WebsocketServerTransport``) with
``ProtobufFrameSerializer`` speaks binary protobuf messages, each a ``pipecat.Frame`` of
``pipecat/frames/protobufs/frames_pb2`` (pipecat's JS and Python websocket clients speak the same) holding
one of ``audio`` (an ``AudioRawFrame``: PCM16 bytes, ``sample_rate``, ``num_channels``), ``text``,
``transcription``, ``message`` (JSON: the bot's app and RTVI messages) or ``interruption``.  The wire
format is pipecat's generated module itself, imported when the first line is made, so CallSim reads and
writes exactly what pipecat does.

There is no opening message and no stop: the call is the connection.  CallSim sends each 20 ms caller
frame as ``audio`` at 16 kHz, mono (the rate travels in every message; pipecat's default input rate), and
hangs up by closing the websocket; a bot hangs up by closing it too (a normal close is its hang-up).

Barge-in: there is no ``clear`` command as in the carriers, but pipecat 1.14's serializer sends an
``interruption`` frame when the bot is interrupted (its output transport writes every
``InterruptionFrame``): that is :class:`~voice.core.call.AssistantControl` ``clear``.  A bot that never
sends one (an older pipecat, or a serializer that drops it) simply stops sending audio, and CallSim hears
it fall silent once the audio already sent has played, as a phone would: the stop latency then includes
whatever the bot had sent ahead (pipecat paces its output at twice real time).  The bot's audio at any
rate and channel count is mixed down to mono and resampled to 16 kHz, streaming
(:class:`StreamResampler`).  ``text`` and ``transcription`` frames are recorded as controls of those
names, ``message`` frames as ``message`` (``log`` when the JSON is CallSim's ``{"event": "log"}``).
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Sequence
from math import gcd
from typing import Any

import numpy as np
from websockets.exceptions import ConnectionClosed

from voice.core.audio import SAMPLE_RATE, Pcm, resample, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineInput
from voice.lines.carrier import SHOWN, closed_by_bot, passed_on, violation
from voice.lines.line import CallStart
from voice.lines.ws_shell import Message, WebsocketLine

RATES = (8000, 96000)  # the sample rates a bot's audio may have, inclusive
MAX_CHANNELS = 8
# One message from the bot: 2 s of 48 kHz mono PCM16 (192,000 bytes) with room; larger is the bot's
# protocol error (close 1009).
MAX_MESSAGE_BYTES = 256 * 1024


@functools.cache
def frames_pb2() -> Any:
    """pipecat's generated protobuf module (imported once, on first use: importing pipecat takes ~0.1 s)."""
    return importlib.import_module("pipecat.frames.protobufs.frames_pb2")


class StreamResampler:
    """int16 PCM at ``src`` Hz → ``dst`` Hz in chunks of any size, as if resampled in one piece.

    Each chunk goes through :func:`voice.core.audio.resample` with ``pad`` samples of real context either
    side (at least the reach of its filter), so no chunk edge is heard; the last ``pad`` input samples wait
    for the next chunk (at 24 kHz, 15 samples: 0.6 ms).
    """

    def __init__(self, src: int, dst: int = SAMPLE_RATE) -> None:
        g = gcd(src, dst)
        self.src, self.dst, self.up, self.down = src, dst, dst // g, src // g
        reach = 10 * max(self.up, self.down) // self.up + 1  # resample_poly's half filter, in input samples
        self.pad = -(-reach // self.down) * self.down
        self._x: Pcm = np.zeros(self.pad, dtype=np.int16)  # context, then what is not yet resampled

    def __call__(self, pcm: Pcm) -> Pcm:
        x = np.concatenate([self._x, np.asarray(pcm, dtype=np.int16)])
        n = (len(x) - 2 * self.pad) // self.down * self.down  # input samples that can be finished now
        if n <= 0:
            self._x = x
            return np.zeros(0, dtype=np.int16)
        y = resample(x[: 2 * self.pad + n], self.src, self.dst)
        self._x = x[n:]
        return y[self.pad * self.up // self.down : (self.pad + n) * self.up // self.down]


class PipecatCodec:
    """A pipecat websocket client's side of the protocol, as messages.  Pure but for the resamplers."""

    max_message_bytes = MAX_MESSAGE_BYTES

    def __init__(self) -> None:
        self._pb = frames_pb2()
        self._resamplers: dict[int, StreamResampler] = {}

    def start(self, start: CallStart) -> Sequence[Message]:
        return ()  # the call is the connection: pipecat's protocol has no opening message

    def audio(self, pcm: Pcm) -> Message:
        frame = self._pb.Frame()
        frame.audio.audio = to_bytes(pcm)
        frame.audio.sample_rate = SAMPLE_RATE
        frame.audio.num_channels = 1
        return bytes(frame.SerializeToString())

    def played(self, marks: tuple[str, ...]) -> Sequence[Message]:
        return ()  # the protocol has no marks

    def hangup(self, reason: str) -> Sequence[Message]:
        return ()  # a pipecat client hangs up by closing the websocket

    def decode(self, message: Message) -> Sequence[LineInput]:
        if isinstance(message, str):
            return (violation(f"a text message (pipecat's protobuf frames are binary): {message[:SHOWN]!r}"),)
        try:
            frame = self._pb.Frame.FromString(message)
        except Exception as exc:  # google.protobuf.message.DecodeError, whichever implementation is loaded
            return (violation(f"not a pipecat protobuf frame ({type(exc).__name__}: {str(exc)[:SHOWN]})"),)
        kind = frame.WhichOneof("frame")
        if kind == "audio":
            return self._audio(frame.audio)
        if kind == "interruption":
            return (AssistantControl("clear", {"via": "interruption"}),)
        if kind == "text":
            return (AssistantControl("text", {"text": frame.text.text[: 4 * SHOWN]}),)
        if kind == "transcription":
            t = frame.transcription
            return (
                AssistantControl(
                    "transcription", {"text": t.text[: 4 * SHOWN], "user_id": t.user_id[:SHOWN]}
                ),
            )
        if kind == "message":
            return (self._message(frame.message.data),)
        return (AssistantControl("unknown", {"frame": str(kind)}),)  # an empty frame: pipecat ignores it too

    def _audio(self, audio: Any) -> Sequence[LineInput]:
        rate, channels, data = int(audio.sample_rate), int(audio.num_channels), bytes(audio.audio)
        if not RATES[0] <= rate <= RATES[1]:
            return (violation(f"audio at {rate} Hz (CallSim plays {RATES[0]}..{RATES[1]} Hz)"),)
        if not 1 <= channels <= MAX_CHANNELS:
            return (violation(f"audio with {channels} channels"),)
        if len(data) % (2 * channels):
            return (violation(f"audio of {len(data)} bytes: not whole {channels}-channel 16-bit samples"),)
        if not data:
            return ()
        pcm = np.frombuffer(data, dtype="<i2").astype(np.int16)
        if channels > 1:
            pcm = pcm.reshape(-1, channels).mean(axis=1).round().astype(np.int16)
        if rate != SAMPLE_RATE:
            pcm = self._resamplers.setdefault(rate, StreamResampler(rate))(pcm)
        return (AssistantAudio(pcm),) if len(pcm) else ()

    def _message(self, data: str) -> LineInput:
        try:
            obj: Any = json.loads(data)
        except (ValueError, RecursionError):
            return AssistantControl("message", {"data": data[: 4 * SHOWN]})
        if isinstance(obj, dict) and obj.get("event") == "log":
            return passed_on("log", obj)
        shown = json.dumps(obj, ensure_ascii=False)
        return AssistantControl("message", {"data": obj if len(shown) <= 4 * SHOWN else shown[: 4 * SHOWN]})

    def closed(self, exc: ConnectionClosed) -> Sequence[LineInput]:
        return closed_by_bot(exc)


class PipecatLine(WebsocketLine[PipecatCodec]):
    """CallSim's side of a pipecat protobuf websocket call: :class:`PipecatCodec` on the shell."""

    def new_codec(self) -> PipecatCodec:
        return PipecatCodec()
