"""What the websocket lines share: close reasons, the line's mirror of the caller's playout, flood limits.

The call core owns the real playout buffer (:mod:`voice.core.playout`) but is I/O-free and is not asked about
it.  A line that must act when a point of the assistant's audio has been *played out* (Twilio's ``mark``)
or must refuse a bot that queues minutes of audio ahead (a flood) keeps its own :class:`PlayoutMirror`: the
same rule as the core's buffer (a chunk plays from ``max(arrival, end of the queue)``; ``clear`` drops what
is unplayed), fed with the same items at the same moments, so both agree to well under a frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from websockets.exceptions import ConnectionClosed

from voice.core.audio import SAMPLE_RATE
from voice.core.call import LineInput

MAX_MESSAGE_BYTES = 1 << 20  # one websocket message; far beyond any sane audio chunk
FLOOD_QUEUED_S = 60.0  # a bot that queues more than this much audio ahead of playout is flooding
FLOOD_BACKLOG = 5000  # messages read from the socket but not yet taken by the driver


def closed_reason(exc: ConnectionClosed) -> str:
    """A short, recordable reason for a closed websocket.

    When CallSim failed the connection for something the bot did (a malformed frame 1002, text that is not
    UTF-8 1007, no longer reading 1008, a too-big message 1009) that is the bot's protocol error.
    """
    sent, rcvd = exc.sent, exc.rcvd
    ours = rcvd is None or exc.rcvd_then_sent is False  # CallSim closed first (not an echo of the bot's)
    if sent is not None and ours and sent.code == 1009:
        return f"protocol_error: message larger than {MAX_MESSAGE_BYTES} bytes"
    if sent is not None and ours and sent.code in (1002, 1007, 1008):
        return f"protocol_error: {sent.reason or f'websocket close code {sent.code}'}"
    if rcvd is None:
        return "connection lost (no close frame)"
    return f"closed by assistant (code {rcvd.code}{': ' + rcvd.reason if rcvd.reason else ''})"


class PlayoutMirror:
    """Where the caller's playout queue ends, on the line's clock (ns), by the core's scheduling rule."""

    def __init__(self) -> None:
        self._end_ns: int | None = None

    def add(self, samples: int, at_ns: int, rate: int = SAMPLE_RATE) -> int:
        """Queue ``samples`` of audio arriving at ``at_ns``; return when they will have finished playing."""
        start = at_ns if self._end_ns is None else max(at_ns, self._end_ns)
        self._end_ns = start + samples * 1_000_000_000 // rate
        return self._end_ns

    def clear(self, at_ns: int) -> None:
        """Drop everything not yet played at ``at_ns``."""
        if self._end_ns is not None and self._end_ns > at_ns:
            self._end_ns = at_ns

    def end_ns(self, at_ns: int) -> int:
        """When what is queued at ``at_ns`` will have played (``at_ns`` itself if nothing is queued)."""
        return at_ns if self._end_ns is None else max(at_ns, self._end_ns)

    def queued_s(self, at_ns: int) -> float:
        """Seconds of audio queued and not yet played at ``at_ns``."""
        return (self.end_ns(at_ns) - at_ns) / 1e9


class FloodGuard:
    """Ends a call whose bot queues far more audio than real time can play (``FLOOD_QUEUED_S``)."""

    def __init__(self, max_queued_s: float = FLOOD_QUEUED_S) -> None:
        self.max_queued_s = max_queued_s
        self._mirror = PlayoutMirror()

    def audio(self, samples: int, at_ns: int) -> str | None:
        """Account for ``samples`` received at ``at_ns``; a ``protocol_error`` reason if that is a flood."""
        self._mirror.add(samples, at_ns)
        queued = self._mirror.queued_s(at_ns)
        if queued > self.max_queued_s:
            return (
                f"protocol_error: flood: {queued:.1f} s of audio queued ahead of playout "
                f"(cap {self.max_queued_s:g} s)"
            )
        return None

    def clear(self, at_ns: int) -> None:
        self._mirror.clear(at_ns)


@runtime_checkable
class ReportsDelivery(Protocol):
    """A line that must know when each item it returned actually reached the call core.

    By default such a line assumes the moment ``recv`` returns is the moment of delivery.  A wrapper that
    delays or alters items on their way (:class:`voice.lines.effects.EffectLine`) calls
    :meth:`report_delivery_externally` once, then calls the returned function with each item at the
    moment it hands that item on, so the line's playout mirror follows what the core really plays.
    """

    def report_delivery_externally(self) -> Callable[[LineInput], None]: ...
