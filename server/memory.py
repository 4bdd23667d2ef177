"""Giving a finished call's memory back: its pipeline is freed by the cycle collector, and the heap trimmed.

A call's pipecat pipeline is a web of reference cycles (processors, their tasks, event handlers and the
worker point at each other), so it outlives the call until Python's *full* collection runs; the cycles hold
each call's Silero ONNX session and buffers, ~10 MB a call.  With the thousands of objects a loaded server
keeps, full collections are rare: 40 calls held +430 MB that were never returned.  So a finished call
triggers a full collection (then ``malloc_trim`` hands freed heap pages back to the system), when no other
call is running, or else after every :data:`COLLECT_EVERY` calls, so busy servers collect too.

A full collection walks every tracked object, ~0.15 s in a server with pipecat loaded on a busy machine,
which would stall the other calls' audio; :func:`freeze_startup_objects` moves everything that exists once
the server is up into the collector's permanent generation, so a collection walks only what calls made.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import sys

COLLECT_EVERY = 8

_LIBC = ctypes.CDLL(ctypes.util.find_library("c")) if sys.platform == "linux" else None


def freeze_startup_objects() -> None:
    """Collect once, then exempt everything alive now (modules, engines, the app) from later collections."""
    gc.collect()
    gc.freeze()


def return_freed_memory() -> None:
    """A full collection, then glibc's ``malloc_trim`` (where there is one) to give freed pages back."""
    gc.collect()
    if _LIBC is not None:
        with contextlib.suppress(AttributeError, OSError):  # musl or another libc: no malloc_trim
            _LIBC.malloc_trim(0)


class CallMemory:
    """Decides when a finished call's memory is collected (module doc)."""

    def __init__(self, every: int = COLLECT_EVERY) -> None:
        self.every = every
        self.pending = 0  # calls ended since the last collection
        self.collections = 0

    def call_ended(self, still_running: int) -> None:
        """One call is over; ``still_running`` other calls are in progress."""
        self.pending += 1
        if still_running == 0 or self.pending >= self.every:
            self.pending = 0
            self.collections += 1
            return_freed_memory()
