"""The caller's playout buffer: assistant audio is heard in real time from when it arrives, as on a phone.

An assistant may send audio in bursts or faster than real time; a phone plays it at its own pace.  Each
received chunk is scheduled to start at ``max(arrival, end of what is already queued)``, so what the caller
hears (and what CallSim measures) is the played-out signal, not the transport's delivery times.  A ``clear``
drops everything not yet played.  Positions are samples on the call's timeline.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from voice.core.audio import Pcm, shared_silence, silence


@dataclass
class _Scheduled:
    start: int
    pcm: Pcm

    @property
    def end(self) -> int:
        return self.start + len(self.pcm)


class PlayoutBuffer:
    """Schedules received chunks on the timeline and renders any interval of what is heard."""

    def __init__(self) -> None:
        self._queue: deque[_Scheduled] = deque()
        self._end = 0  # end of the last scheduled chunk

    def schedule(self, pcm: Pcm, arrival: int) -> int:
        """Queue ``pcm`` received at sample ``arrival``; return the sample where it will start playing."""
        start = max(arrival, self._end)
        if len(pcm):
            self._queue.append(_Scheduled(start, np.asarray(pcm, dtype=np.int16)))
            self._end = start + len(pcm)
        return start

    def render(self, start: int, n: int) -> Pcm:
        """What plays during ``[start, start + n)``; chunks wholly before ``start + n`` are released.

        Silence comes back as a shared read-only array: the caller must not write into the result.
        """
        stop = start + n
        while self._queue and self._queue[0].end <= start:
            self._queue.popleft()
        if not self._queue or self._queue[0].start >= stop:
            return shared_silence(n)
        out = silence(n)
        for item in self._queue:
            if item.start >= stop:
                break
            lo, hi = max(item.start, start), min(item.end, stop)
            if hi > lo:
                out[lo - start : hi - start] = item.pcm[lo - item.start : hi - item.start]
        while self._queue and self._queue[0].end <= stop:
            self._queue.popleft()
        return out

    def clear(self, at: int) -> int:
        """Drop everything not played by sample ``at``; return how many samples were dropped."""
        dropped = 0
        kept: deque[_Scheduled] = deque()
        for item in self._queue:
            if item.end <= at:
                kept.append(item)
            elif item.start >= at:
                dropped += len(item.pcm)
            else:
                dropped += item.end - at
                kept.append(_Scheduled(item.start, item.pcm[: at - item.start]))
        self._queue = kept
        if dropped:
            self._end = max((i.end for i in kept), default=at)
        return dropped

    def pending(self, at: int) -> int:
        """Samples scheduled to play at or after sample ``at``."""
        return sum(max(0, item.end - max(item.start, at)) for item in self._queue)

    @property
    def end(self) -> int:
        """Sample where the queued audio runs out."""
        return self._end
