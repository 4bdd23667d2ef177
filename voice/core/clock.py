"""The one clock interface of CallSim: real (monotonic) for live calls, virtual for tests.

Nothing else in ``voice/`` reads the wall clock or sleeps on its own: every component is handed a
:class:`Clock`.  Time is integer nanoseconds, as in pipecat's ``BaseClock``; audio logic converts to samples
once, through :func:`voice.core.audio.ns_to_samples`.
"""

from __future__ import annotations

import asyncio
import heapq
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
    """Real time from ``time.monotonic_ns``; the only place in ``voice/`` that reads the system clock.

    ``spin_ns`` is the last stretch before a deadline that is waited out by yielding to the loop
    (``asyncio.sleep(0)``) instead of a timer: the loop's timers wake with ~1 ms granularity, so one call
    alone gets sub-millisecond pacing this way.  Every spinning waiter keeps the loop busy, though, so
    many calls in one loop share a :class:`FrameTicker` over ``MonotonicClock(spin_ns=0)`` instead.
    """

    def __init__(self, spin_ns: int = 1_500_000) -> None:
        if spin_ns < 0:
            raise ValueError("spin_ns must be >= 0")
        self.spin_ns = spin_ns
        # Below this a timer could overshoot the spin window, so spin instead.
        self._timer_above = spin_ns + 500_000

    def now_ns(self) -> int:
        return time.monotonic_ns()

    async def sleep_until(self, deadline_ns: int) -> None:
        if not self.spin_ns:
            await self._sleep_on_timers(deadline_ns)
            return
        while True:
            remaining = deadline_ns - time.monotonic_ns()
            if remaining <= 0:
                return
            if remaining > self._timer_above:
                await asyncio.sleep((remaining - self.spin_ns) / 1e9)
            else:
                await asyncio.sleep(0)

    @staticmethod
    async def _sleep_on_timers(deadline_ns: int) -> None:
        remaining = deadline_ns - time.monotonic_ns()
        if remaining <= 0:
            return
        # An exact timer: asyncio fires it as soon as it is due on any loop iteration (I/O wakes the loop
        # often), so it is not rounded.  A loop that rounds timers to the nearest millisecond (uvloop) can
        # wake up to 0.5 ms early: the rest is waited out in whole milliseconds rather than in a busy loop.
        await asyncio.sleep(remaining / 1e9)
        while (remaining := deadline_ns - time.monotonic_ns()) > 0:
            await asyncio.sleep(-(-remaining // 1_000_000) / 1e3)


def monotonic_s() -> float:
    """Seconds on the monotonic clock: durations and bounds measured at the edge (throughput, timeouts of a
    bench), never time inside audio logic, which is counted in samples."""
    return time.monotonic_ns() / 1e9


def utc_now_iso() -> str:
    """The wall-clock date and time in UTC, ISO 8601 to the second (``2026-12-03T08:00:00Z``).

    For the record only (when a run was made, in its provenance): nothing may time or order anything by it,
    since the wall clock jumps (NTP, a suspended laptop); durations come from the monotonic clock above.
    """
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class FrameTicker:
    """A clock shared by many calls in one loop: one timer wakes every call whose deadline has come.

    Each call's driver still awaits ``sleep_until`` on its own absolute schedule, but instead of one
    timer (or spin) per call, the waits go into one heap and a single waker task sleeps on ``base`` until
    the earliest deadline, then releases every wait that is due, earliest first.  A wait is never released
    before ``base.now_ns() >= deadline`` (never faster than real time); calls started at different
    moments keep their own phases, which spreads the per-frame work over the 20 ms instead of bursting.
    Built on a :class:`VirtualClock` it runs frame-exact in tests.
    """

    def __init__(self, base: Clock | None = None) -> None:
        self.base = base if base is not None else MonotonicClock(spin_ns=0)
        self._heap: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = 0
        self._waker: asyncio.Task[None] | None = None
        self._armed_for: int | None = None  # the deadline the waker is sleeping toward
        self.wakeups = 0  # how often the waker released waits (for benchmarks)

    def now_ns(self) -> int:
        return self.base.now_ns()

    async def sleep_until(self, deadline_ns: int) -> None:
        if self.base.now_ns() >= deadline_ns:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (deadline_ns, self._seq, fut))
        self._seq += 1
        if self._waker is None or self._armed_for is None or deadline_ns < self._armed_for:
            self._rearm()
        await fut  # a cancelled wait stays in the heap until due, then is skipped

    def _rearm(self) -> None:
        if self._waker is not None:
            self._waker.cancel()
        self._armed_for = self._heap[0][0]
        self._waker = asyncio.get_running_loop().create_task(self._wake())

    async def _wake(self) -> None:
        try:
            while self._heap:
                self._armed_for = self._heap[0][0]
                await self.base.sleep_until(self._armed_for)
                now = self.base.now_ns()
                self.wakeups += 1
                while self._heap and self._heap[0][0] <= now:
                    fut = heapq.heappop(self._heap)[2]
                    if not fut.done():
                        fut.set_result(None)
        finally:
            if self._waker is asyncio.current_task():
                self._waker = self._armed_for = None


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
