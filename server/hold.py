"""Hold the reply the moment the caller may be cutting in; let it go on if it was only a backchannel.

A barge-in can only be *confirmed* once the caller has spoken longer than a backchannel lasts (嗯嗯, 好的:
up to ~0.5 s), which put the stop the caller hears 0.6–1.1 s after their onset.  People do something
else: they falter at once and pick up again if the other side only said 嗯.  :class:`ReplyHold` does that
with the audio already flowing, judged from the VAD's window-by-window voicing:

- **hold**: while the reply is audible, ``hold_after`` of caller speech stops the audio going out (the
  caller hears it stop once what was already on the line, ``output_lead`` at most, has played);
- **release**: ``release_after`` of caller silence lets the same reply go on from where it stopped, but
  not before the caller has heard ``min_gap`` of silence: a caller who stops after a first word
  ("行，…", "喂，…") and goes on within it is not talked over;
- **hold again**: caller speech within ``rehold_within`` of a release holds at once.

If the caller was cutting in, the turn strategy confirms it meanwhile and the reply is cancelled.  The
numbers are bound by what a listener takes for a yield (the metrics: a gap of 300 ms): the stop the caller
hears comes ``hold_after + output_lead`` (plus the VAD's lag) after their onset, and a backchannel leaves
a gap of about ``max(backchannel + release_after − hold_after − output_lead, min_gap)``.  Time is counted
in samples of the pipeline's input audio, as the VAD analysed them.

:class:`PacedWebsocketTransport` is pipecat's FastAPI websocket transport whose output sends at real
time with ``output_lead`` of audio ahead of the caller (pipecat's own sends at twice real time, so a
reply is seconds ahead and stopping it needs a ``clear``), and waits while the hold is on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pipecat.frames.frames import Frame, InterruptionFrame, OutputAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.transports.websocket.fastapi import (
    FastAPIWebsocketOutputTransport,
    FastAPIWebsocketParams,
    FastAPIWebsocketTransport,
)

from server.pcm_serializer import PlayoutTracker

if TYPE_CHECKING:
    from voice.contract.tuning import TurnSettings

logger = logging.getLogger(__name__)


class ReplyHold:
    """The hold/release decision over VAD windows, in samples; an :class:`asyncio.Event` is the gate.

    - ``hold_after_samples``: caller speech (from the first voiced window of a burst) that holds an audible
      reply; 0 turns holding off.
    - ``release_after_samples``: caller silence that lets it go on, but not before the caller has heard
      ``min_gap_samples`` of the hold (counted once ``queued()``, the audio already on the line, has
      played out): a caller who stops after a first word ("行，…", "喂，…") and goes on within that gap
      is not talked over, while a gap under 300 ms is still a hesitation, not a yield, to the listener.
    - ``rehold_within_samples``: caller speech this soon after a release holds again at once.
    - ``audible()``: whether the caller hears the assistant now.
    """

    def __init__(
        self,
        *,
        hold_after_samples: int,
        release_after_samples: int,
        min_gap_samples: int = 0,
        rehold_within_samples: int = 0,
        audible: Callable[[], bool] | None = None,
        queued: Callable[[], int] | None = None,
    ) -> None:
        self._hold_after = max(0, hold_after_samples)
        self._release_after = max(1, release_after_samples)
        self._min_gap = max(0, min_gap_samples)
        self._rehold_within = max(0, rehold_within_samples)
        self._audible = audible or (lambda: True)
        self._queued = queued or (lambda: 0)
        self._open = asyncio.Event()
        self._open.set()
        self._position = 0  # samples observed
        self._burst_start: int | None = None  # first sample of the caller's current burst of speech
        self._silent = self._release_after  # samples of silence since the caller last spoke
        self._earliest_release = 0  # while held: not let go before this sample
        self._released_at: int | None = None  # when the last hold was let go (None after a cancel)
        self.holds = 0  # how many times the reply was held
        self.releases = 0  # ... and let go on (a backchannel, or a pause inside the first words)

    @property
    def enabled(self) -> bool:
        return self._hold_after > 0

    @property
    def held(self) -> bool:
        return not self._open.is_set()

    def observe(self, voiced: bool, samples: int) -> None:
        """One VAD window of ``samples`` samples, voiced or not."""
        start, self._position = self._position, self._position + samples
        if not voiced:
            self._silent += samples
            if self._silent >= self._release_after:
                self._burst_start = None
                if self.held and self._position >= self._earliest_release:
                    self.releases += 1
                    self._released_at = self._position
                    self._open.set()
            return
        if self._burst_start is None:
            self._burst_start = start
        self._silent = 0
        if not self.enabled or self.held or not self._audible():
            return
        again = self._released_at is not None and start - self._released_at <= self._rehold_within
        if again or self._position - self._burst_start >= self._hold_after:
            self.holds += 1
            self._earliest_release = self._position + max(0, self._queued()) + self._min_gap
            self._open.clear()

    def release(self) -> None:
        """The reply was cancelled (a turn started) or the call ends: nothing is held any more."""
        self._released_at = None
        self._open.set()

    async def wait_open(self) -> None:
        """Return once the reply may go on."""
        await self._open.wait()


def reply_hold(settings: TurnSettings, playout: PlayoutTracker, sample_rate: int) -> ReplyHold | None:
    """The call's hold from its settings (seconds → samples of the pipeline's input); None when it is off
    (``hold_after_secs=0``: the reply stops only once a barge-in is confirmed)."""
    hold = ReplyHold(
        hold_after_samples=round(settings.hold_after_secs * sample_rate),
        release_after_samples=round(settings.hold_release_secs * sample_rate),
        min_gap_samples=round(settings.hold_min_gap_secs * sample_rate),
        rehold_within_samples=round(settings.hold_again_secs * sample_rate),
        audible=playout.playing,
        queued=lambda: round(playout.remaining() * sample_rate),
    )
    return hold if hold.enabled else None


class PacedWebsocketOutputTransport(FastAPIWebsocketOutputTransport):
    """Sends audio at real time, ``lead_secs`` ahead of the caller's playout, and not while held."""

    def __init__(
        self, *args: Any, playout: PlayoutTracker, hold: ReplyHold | None, lead_secs: float, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._playout = playout
        self._hold = hold
        self._lead = max(0.0, lead_secs)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        """Wait while the reply is held, then send."""
        if self._hold is not None and self._hold.held:
            logger.debug(f"{self}: reply held, the caller may be cutting in")
            await self._hold.wait_open()
        return bool(await super().write_audio_frame(frame))

    async def _write_audio_sleep(self) -> None:  # pipecat's pacing hook (twice real time there)
        while (ahead := self._playout.remaining()) > self._lead:
            await asyncio.sleep(ahead - self._lead)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """An interruption cancels what was held (the held piece is dropped, not sent), and the next reply
        starts free."""
        await super().process_frame(frame, direction)
        if isinstance(frame, InterruptionFrame) and self._hold is not None:
            self._hold.release()


class PacedWebsocketTransport(FastAPIWebsocketTransport):
    """pipecat's FastAPI websocket transport with :class:`PacedWebsocketOutputTransport` as its output."""

    def __init__(
        self,
        websocket: Any,
        params: FastAPIWebsocketParams,
        *,
        playout: PlayoutTracker,
        hold: ReplyHold | None = None,
        lead_secs: float = 0.1,
    ) -> None:
        super().__init__(websocket=websocket, params=params)
        self._output = PacedWebsocketOutputTransport(
            self,
            self._client,
            self._params,
            name=self._output_name,
            playout=playout,
            hold=hold,
            lead_secs=lead_secs,
        )
