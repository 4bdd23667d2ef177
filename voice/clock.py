"""The one clock interface of CallSim: real (monotonic) for live calls, virtual for tests.

Nothing else in ``voice/`` reads the wall clock or sleeps on its own: every component is handed a
:class:`Clock`.  Time is integer nanoseconds, as in pipecat's ``BaseClock``; audio logic converts to samples
once, through :func:`voice.audio.ns_to_samples`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """A source of monotonic time and a way to wait for it."""

    def now_ns(self) -> int:
        """Current time in nanoseconds on this clock's own (arbitrary) epoch."""
        ...

    async def sleep_until(self, deadline_ns: int) -> None:
        """Return once ``now_ns() >= deadline_ns``."""
        ...


class MonotonicClock:
    """Real time from ``time.monotonic_ns``; the only place in ``voice/`` that reads the system clock."""

    def now_ns(self) -> int:
        return time.monotonic_ns()

    async def sleep_until(self, deadline_ns: int) -> None:
        # asyncio.sleep wakes with ~1 ms granularity; finish the last stretch with a short spin so
        # frame pacing jitter stays well under a millisecond without burning a core.
        while True:
            remaining = deadline_ns - time.monotonic_ns()
            if remaining <= 0:
                return
            if remaining > 2_000_000:
                await asyncio.sleep((remaining - 1_500_000) / 1e9)
            else:
                await asyncio.sleep(0)


class VirtualClock:
    """A clock that only moves when told to, or (``auto_advance``) jumps to whatever deadline is awaited.

    With ``auto_advance`` a single driver task runs a whole call in zero wall time, frame-exact.
    """

    def __init__(self, start_ns: int = 0, *, auto_advance: bool = True) -> None:
        self._now = start_ns
        self._auto = auto_advance
        self._changed = asyncio.Event() if not auto_advance else None

    def now_ns(self) -> int:
        return self._now

    def advance(self, delta_ns: int) -> None:
        """Move time forward by ``delta_ns`` (never backwards)."""
        if delta_ns < 0:
            raise ValueError("a clock never goes backwards")
        self._now += delta_ns
        if self._changed is not None:
            self._changed.set()

    async def sleep_until(self, deadline_ns: int) -> None:
        if self._auto:
            if deadline_ns > self._now:
                self._now = deadline_ns
            await asyncio.sleep(0)
            return
        assert self._changed is not None
        while self._now < deadline_ns:
            self._changed.clear()
            await self._changed.wait()
