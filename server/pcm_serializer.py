"""A pipecat ``FrameSerializer`` for CallSim's raw PCM websocket protocol (``docs/protocol.md``).

Inbound (CallSim → assistant):

* binary 16-bit LE mono PCM at the line rate → :class:`InputAudioRawFrame` at the pipeline's input rate;
* ``{"event": "start", ...}`` → :class:`InputTransportMessageFrame` carrying a validated copy of the start
  message (``call_id``, ``dialogue``); the policy processor configures itself from it and greets;
* ``{"event": "stop", ...}`` → :class:`CancelWorkerFrame`: the caller has hung up, so nothing queued is worth
  playing and nothing more is sent.

Outbound (assistant → CallSim):

* :class:`OutputAudioRawFrame` → binary PCM at the line rate (resampled if the pipeline's rate differs);
* :class:`InterruptionFrame` → ``{"event": "clear"}`` (only while sent audio may still be playing);
* :class:`EndFrame` / :class:`CancelFrame` → ``{"event": "hangup"}`` unless the caller stopped first;
* :class:`OutputTransportMessageFrame` / ``...UrgentFrame`` → the message as JSON (``log`` / ``error``).

Malformed input never raises: it is logged and dropped, and counted in :attr:`PcmSerializer.malformed`.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, TypedDict

from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import (
    CancelFrame,
    CancelWorkerFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    OutputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
)
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.serializers.base_serializer import FrameSerializer

from voice.core.audio import SAMPLE_RATE

logger = logging.getLogger(__name__)

START_EVENT = "start"
STOP_EVENT = "stop"
ENCODING = "pcm_s16le"
_MAX_LOGGED_CHARS = 200


class StartMessage(TypedDict):
    """A call's ``start`` as the policy gets it (an ``InputTransportMessageFrame``'s message): this
    protocol's own, or one made from Twilio's custom parameters or a WebRTC offer's ``request_data``."""

    event: str  # START_EVENT
    call_id: str | None
    dialogue: dict[str, Any] | None  # the assistant view as it came (an object), or none: the default view


class PlayoutTracker:
    """Estimates whether audio already sent to CallSim is still being played out there.

    CallSim plays what it receives in real time through a playout buffer, while the output transport sends
    ahead of it (``output_lead_secs``: :mod:`server.hold`, which paces by this estimate; pipecat's own
    transport sends at twice real time); so "sent" is not "heard".  The tracker keeps the estimated
    wall-clock end of playout, assuming playout starts when audio arrives.
    """

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._play_end = float("-inf")

    def on_audio_sent(self, seconds: float) -> None:
        """Record ``seconds`` of audio handed to the socket now."""
        now = self._clock()
        self._play_end = max(self._play_end, now) + max(0.0, seconds)

    def on_clear(self) -> None:
        """The client was told to drop its buffer: nothing is playing any more."""
        self._play_end = float("-inf")

    def remaining(self) -> float:
        """Seconds of sent audio estimated still to be played (0 when idle)."""
        return max(0.0, self._play_end - self._clock())

    def playing(self, margin: float = 0.0) -> bool:
        """Whether sent audio is (estimated to be) still playing, allowing ``margin`` seconds of slack."""
        return self._clock() < self._play_end + margin


class PcmSerializer(FrameSerializer):
    """Frames ↔ CallSim raw PCM protocol messages.  One instance per call (it keeps per-call state)."""

    def __init__(
        self,
        *,
        line_rate: int = SAMPLE_RATE,
        playout: PlayoutTracker | None = None,
        clear_margin_secs: float = 0.5,
        **kwargs: Any,
    ) -> None:
        """Create a serializer.

        Args:
            line_rate: sample rate of the PCM on the wire (the protocol fixes 16 kHz).
            playout: shared playout estimate (the turn strategy reads it to know if the caller hears us).
            clear_margin_secs: send ``clear`` on an interruption if sent audio may still be playing within
                this many seconds of slack (network and buffering delays on the CallSim side).
        """
        super().__init__(FrameSerializer.InputParams(resampler_clear_after_secs=None), **kwargs)
        self._line_rate = line_rate
        self._pipeline_in_rate = line_rate
        self._input_resampler = create_stream_resampler(clear_after_secs=None)
        self._output_resampler = create_stream_resampler(clear_after_secs=None)
        self.playout = playout or PlayoutTracker()
        self._clear_margin = clear_margin_secs
        self.call_id: str | None = None
        self.started = False
        self.stopped = False
        self.stop_reason: str | None = None
        self.hung_up = False
        self.malformed = 0
        self.bytes_in = 0
        self.bytes_out = 0

    @property
    def line_rate(self) -> int:
        """Sample rate of the PCM on the wire."""
        return self._line_rate

    async def setup(self, setup: FrameProcessorSetup) -> None:  # type: ignore[override]  # (pipecat's own)
        """Learn the pipeline's input sample rate."""
        self._pipeline_in_rate = setup.audio_in_sample_rate or self._line_rate

    # --- outbound -----------------------------------------------------------------------------------

    async def serialize(self, frame: Frame) -> str | bytes | None:
        """Turn an outgoing frame into a websocket message, or ``None`` when there is nothing to send."""
        if self.stopped or self.hung_up:
            return None  # the call is over: the caller hung up, or we did
        if isinstance(frame, OutputAudioRawFrame):
            return await self._serialize_audio(frame)
        if isinstance(frame, InterruptionFrame):
            if not self.playout.playing(self._clear_margin):
                return None  # nothing of ours is playing: a clear would only be noise
            self.playout.on_clear()
            return _dump({"event": "clear"})
        if isinstance(frame, (EndFrame, CancelFrame)):
            self.hung_up = True
            reason = frame.reason if isinstance(frame.reason, str) and frame.reason else None
            if reason is None:
                reason = "assistant ended the call" if isinstance(frame, EndFrame) else "assistant cancelled"
            return _dump({"event": "hangup", "reason": reason})
        if isinstance(frame, (OutputTransportMessageFrame, OutputTransportMessageUrgentFrame)):
            message = frame.message
            if isinstance(message, dict) and self.should_ignore_frame(frame):  # (it assumes a dict)
                return None
            if not (isinstance(message, dict) and isinstance(message.get("event"), str)):
                message = {"event": "log", "data": message}
            if message["event"] == "error":
                self.hung_up = True  # CallSim ends the call on an error: nothing else is worth sending
            return _dump(message)
        return None

    async def _serialize_audio(self, frame: OutputAudioRawFrame) -> bytes | None:
        audio = frame.audio
        if frame.num_channels != 1:
            logger.warning(f"PcmSerializer: dropping {frame.num_channels}-channel audio (mono only)")
            return None
        if frame.sample_rate != self._line_rate:
            audio = await self._output_resampler.resample(audio, frame.sample_rate, self._line_rate)
        if len(audio) % 2:
            audio = audio[:-1]
        if not audio:
            return None
        self.bytes_out += len(audio)
        self.playout.on_audio_sent(len(audio) / 2 / self._line_rate)
        return bytes(audio)

    # --- inbound ------------------------------------------------------------------------------------

    async def deserialize(self, data: str | bytes) -> Frame | None:
        """Turn an incoming websocket message into a frame, or ``None`` (ignored or malformed)."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            return await self._deserialize_audio(bytes(data))
        if isinstance(data, str):
            return self._deserialize_text(data)
        self._reject(f"unexpected message type {type(data).__name__}")
        return None

    async def _deserialize_audio(self, data: bytes) -> Frame | None:
        if self.stopped:
            return None
        if len(data) % 2:
            self._reject(f"odd-length PCM payload ({len(data)} bytes)")
            return None
        if not data:
            return None
        self.bytes_in += len(data)
        if self._pipeline_in_rate != self._line_rate:
            data = await self._input_resampler.resample(data, self._line_rate, self._pipeline_in_rate)
            if not data:
                return None
        return InputAudioRawFrame(audio=data, sample_rate=self._pipeline_in_rate, num_channels=1)

    def _deserialize_text(self, text: str) -> Frame | None:
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to parse, as malformed
            self._reject(f"malformed JSON: {text[:_MAX_LOGGED_CHARS]!r}")
            return None
        if not isinstance(message, dict) or not isinstance(message.get("event"), str):
            self._reject(f"control message without an 'event' string: {text[:_MAX_LOGGED_CHARS]!r}")
            return None
        event = message["event"]
        if event == START_EVENT:
            return self._handle_start(message)
        if event == STOP_EVENT:
            if self.stopped:
                return None
            self.stopped = True
            reason = message.get("reason")
            self.stop_reason = reason if isinstance(reason, str) else ""
            logger.info(f"call {self.call_id}: caller hung up ({self.stop_reason or 'no reason'})")
            return CancelWorkerFrame(reason=f"caller hung up: {self.stop_reason}".rstrip(": "))
        logger.debug(f"PcmSerializer: ignoring unknown event {event!r}")
        return None

    def _handle_start(self, message: dict[str, Any]) -> Frame | None:
        if self.started:
            self._reject("duplicate 'start' event ignored")
            return None
        rate = message.get("sample_rate", SAMPLE_RATE)
        if isinstance(rate, int) and not isinstance(rate, bool) and 8000 <= rate <= 48000:
            self._line_rate = rate
        else:
            self._reject(f"bad sample_rate {rate!r} in 'start'; keeping {self._line_rate} Hz")
        encoding = message.get("encoding", ENCODING)
        if encoding != ENCODING:
            logger.warning(f"PcmSerializer: unsupported encoding {encoding!r}; treating audio as {ENCODING}")
        call_id = message.get("call_id")
        self.call_id = str(call_id) if call_id is not None else None
        dialogue = message.get("dialogue")
        if dialogue is not None and not isinstance(dialogue, dict):
            self._reject("'dialogue' in 'start' is not an object; using the default view")
            dialogue = None
        self.started = True
        start: StartMessage = {"event": START_EVENT, "call_id": self.call_id, "dialogue": dialogue}
        return InputTransportMessageFrame(message=start)

    def _reject(self, what: str) -> None:
        self.malformed += 1
        logger.warning(f"PcmSerializer: {what}")


def _dump(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, default=str)
