"""One call of the built-in assistant over WebRTC: pipecat's ``SmallWebRTCTransport`` around the pipeline
every call runs (:func:`server.assistant.assemble_call`), and ICE kept on the addresses the server listens on.

Kept apart from :mod:`server.webrtc_route` (the signalling: offers, candidates, the door, the calls' tasks)
as :mod:`server.assistant` is from :mod:`server.app`: this is what a WebRTC call *is*.

* **Audio**: 16 kHz in and out of the pipeline; SmallWebRTC resamples from and to Opus at 48 kHz.
* **The playout estimate** (:class:`~server.pcm_serializer.PlayoutTracker`, read by the barge-in strategy
  and the hold): over a websocket it must be estimated, because the output sends ahead of the caller's
  playout.  SmallWebRTC's output track plays in real time, and its ``write_audio_frame`` returns only once
  the track has handed the frame to the RTP sender, so what was written is what is playing: the output adds
  each frame's length to the estimate as it writes it (the estimate is at most one 20 ms frame ahead, and
  ``output_lead_secs`` has nothing to do).  While the reply is held (:mod:`server.hold`) nothing is written
  and the track sends silence; an interruption leaves at most the frame already on the track to play.
* **Media on loopback**: aioice gathers host candidates on every interface *except* loopback, and no
  ``RTCConfiguration`` setting changes that, so a server bound to 127.0.0.1 would offer (and send media
  from) the machine's other addresses; filtering the answer's candidates would leave none.
  :func:`~voice.lines.webrtc_ice.gather_on` (shared with CallSim's WebRTC line) makes aioice gather on
  given addresses only, for the peer connections set up inside it (gathering anywhere else in the process
  is unchanged).  The server gathers where it is bound (:func:`~voice.lines.webrtc_ice.media_addresses`)
  with no STUN server, so every socket of a call is bound to 127.0.0.1 by default and its media cannot
  leave it, whatever candidates the caller sends.
* **Hang-ups**: the caller closing the peer connection ends the call (pipecat's client-disconnected
  event, as a websocket close); the pipeline ending (the policy hung up) closes the peer connection from
  the server's side (pipecat's output transport disconnects on its end frame).  A caller that vanishes
  without closing fails ICE's consent checks (aioice: 6 missed, 5 s apart), which closes it too.
* **The dialogue**: the ``start`` made from ``request_data`` is handed in when the peer connects, so the
  policy is told to wait for it as long as the route waits for the peer (not ``start_timeout_secs``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    OutputTransportMessageUrgentFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.transports.smallwebrtc.transport import (
    SmallWebRTCInputTransport,
    SmallWebRTCOutputTransport,
    SmallWebRTCTransport,
)

from server.assistant import AssistantCall, assemble_call
from server.config import AssistantSettings, SpeechEngines
from server.hold import ReplyHold, reply_hold
from server.pcm_serializer import PlayoutTracker
from server.policy.processor import PolicyFactory
from server.twilio_route import start_message
from voice.core.audio import SAMPLE_RATE

__all__ = ["WebrtcCallTransport", "WebrtcLineState", "build_webrtc_call"]

logger = logging.getLogger(__name__)


class _AudioOnlyIsNormal(logging.Filter):
    """pipecat warns on every audio-only peer that it has no video transceivers, and when the caller hangs
    up that reading its audio failed: both are how a phone call goes, not warnings here."""

    QUIET = (
        "No video transceiver",
        "No screen video transceiver",
        "Media stream error while reading",
        "Data channel not established",
    )

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.QUIET)


for _name in ("pipecat.transports.smallwebrtc.connection", "pipecat.transports.smallwebrtc.transport"):
    if not any(isinstance(f, _AudioOnlyIsNormal) for f in logging.getLogger(_name).filters):
        logging.getLogger(_name).addFilter(_AudioOnlyIsNormal())


# --- one call over WebRTC -----------------------------------------------------------------------------------


@dataclass(eq=False)
class WebrtcLineState:
    """A WebRTC call's :class:`~server.assistant.CallLine`: what the websocket routes' serializers keep."""

    call_id: str | None = None
    playout: PlayoutTracker = field(default_factory=PlayoutTracker)
    stopped: bool = False  # the caller closed the peer connection
    hung_up: bool = False  # the assistant ended the call
    bytes_in: int = 0  # as 16 kHz PCM16
    bytes_out: int = 0


class _CountingInput(SmallWebRTCInputTransport):
    """SmallWebRTC's input, counting the caller's audio for the call log."""

    def __init__(self, *args: Any, line: WebrtcLineState, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._line = line

    async def push_audio_frame(self, frame: InputAudioRawFrame) -> None:
        self._line.bytes_in += len(frame.audio) * SAMPLE_RATE // max(1, frame.sample_rate)
        await super().push_audio_frame(frame)


class HeldWebrtcOutput(SmallWebRTCOutputTransport):
    """SmallWebRTC's output (real time already: the module doc), not writing while the reply is held, and
    keeping the playout estimate."""

    def __init__(self, *args: Any, line: WebrtcLineState, hold: ReplyHold | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._line = line
        self._hold = hold

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        """Wait while held; then the frame is playing for its length, from now (the write returns once the
        track has taken it)."""
        if self._hold is not None and self._hold.held:
            await self._hold.wait_open()
        seconds = len(frame.audio) / 2 / max(1, frame.num_channels) / max(1, frame.sample_rate)
        self._line.playout.on_audio_sent(seconds)
        if not await super().write_audio_frame(frame):
            self._line.playout.on_clear()  # not connected (yet, or any more): nothing plays
            return False
        self._line.bytes_out += round(seconds * SAMPLE_RATE) * 2
        return True

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """An interruption drops the reply (what is held too); at most the frame on the track still plays."""
        await super().process_frame(frame, direction)
        if isinstance(frame, InterruptionFrame):
            self._line.playout.on_clear()
            if self._hold is not None:
                self._hold.release()

    async def stop(self, frame: EndFrame) -> None:
        await self._say_hangup(frame)
        await super().stop(frame)

    async def cancel(self, frame: CancelFrame) -> None:
        await self._say_hangup(frame)
        await super().cancel(frame)

    async def _say_hangup(self, frame: EndFrame | CancelFrame) -> None:
        """Unless the caller left first, say why on the data channel (if the caller opened one), as the
        websocket routes' ``hangup`` does; pipecat's teardown then closes the peer connection."""
        self._line.hung_up = not self._line.stopped
        if self._line.hung_up:
            reason = frame.reason if isinstance(frame.reason, str) and frame.reason else "assistant hung up"
            message = {"event": "hangup", "reason": reason}
            await self.send_message(OutputTransportMessageUrgentFrame(message=message))


class WebrtcCallTransport(SmallWebRTCTransport):
    """pipecat's SmallWebRTC transport with the counting input and the held output."""

    def __init__(
        self,
        connection: SmallWebRTCConnection,
        params: TransportParams,
        *,
        line: WebrtcLineState,
        hold: ReplyHold | None,
    ) -> None:
        super().__init__(connection, params)
        self._line, self._hold = line, hold

    def input(self) -> SmallWebRTCInputTransport:
        if not self._input:
            self._input = _CountingInput(self._client, self._params, name=self._input_name, line=self._line)
        return self._input

    def output(self) -> SmallWebRTCOutputTransport:
        if not self._output:
            self._output = HeldWebrtcOutput(
                self._client, self._params, name=self._output_name, line=self._line, hold=self._hold
            )
        return self._output


def build_webrtc_call(
    connection: SmallWebRTCConnection,
    engines: SpeechEngines,
    *,
    settings: AssistantSettings,
    policy_factory: PolicyFactory | None = None,
    request_data: Mapping[str, Any] | None = None,
) -> AssistantCall:
    """The call's pipeline behind pipecat's SmallWebRTC transport on ``connection`` (answered, not yet
    connected); ``request_data``'s ``call_id`` and ``dialogue`` make its ``start``."""
    start = start_message(connection.pc_id, dict(request_data or {}))
    # The start goes in once the peer connects, or the call is dropped (server.webrtc_route): until then the
    # policy must not give up on it and greet, from the default view, a caller who cannot hear yet.
    patience = max(settings.policy.start_timeout_secs, settings.serving.socket_idle_secs + 1.0)
    settings = replace(settings, policy=replace(settings.policy, start_timeout_secs=patience))
    line = WebrtcLineState(call_id=str(start["call_id"]))
    hold = reply_hold(settings.turns, line.playout, SAMPLE_RATE)
    params = TransportParams(
        audio_in_enabled=True,
        audio_in_sample_rate=SAMPLE_RATE,
        audio_out_enabled=True,
        audio_out_sample_rate=SAMPLE_RATE,
        audio_out_10ms_chunks=2,
        audio_out_end_silence_secs=0,
    )
    transport = WebrtcCallTransport(connection, params, line=line, hold=hold)

    @transport.event_handler("on_client_disconnected")  # before the pipeline's own handler, which cancels
    async def _on_closed(_transport: Any, _connection: Any) -> None:
        if not line.hung_up:
            line.stopped = True
            logger.info(f"call {line.call_id}: the caller closed the peer connection")

    return assemble_call(
        transport,
        line,
        hold,
        tts=engines.tts,
        asr=engines.asr,
        settings=settings,
        policy_factory=policy_factory,
        tts_executor=engines.tts_executor,
        asr_executor=engines.asr_executor,
        start_message=start,
    )
