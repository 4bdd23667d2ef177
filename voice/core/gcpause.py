"""Keep Python's cyclic garbage collector from freezing real-time calls.

A full (generation 2) collection walks every tracked object while the event loop stands still.  Two kinds
of object make that walk long: libraries loaded once and kept for the whole run (TensorFlow alone brings
about 0.4 M objects: a full collection then takes ~175 ms) and, with many calls in one loop, the call
cores' growing event logs (50-120 ms with 100 calls).  Either stalls every call's frame pacing at once.
``gc.freeze`` moves objects to a permanent generation that collections never walk.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator

GC_FREEZE_PERIOD_S = 1.0


def freeze_long_lived() -> None:
    """Collect once, then freeze everything alive: call right after loading a large library or model.

    What is alive just after a load (modules, the model, its tables) lives until exit, so freezing it costs
    nothing, and later full collections only walk what the calls allocate.
    """
    gc.collect()
    gc.freeze()


@contextlib.asynccontextmanager
async def short_gc_pauses(period_s: float = GC_FREEZE_PERIOD_S) -> AsyncIterator[None]:
    """Freeze the heap every ``period_s`` while many calls run in this loop (``scripts/bench_capacity``).

    Collections then only scan what was allocated since the last freeze; cycles that die young are still
    collected.  The price: a cycle that outlives a period is only freed on exit, when the heap is unfrozen
    and collected once (and frozen again if something, e.g. :func:`freeze_long_lived`, had frozen it
    before).  Not needed for one call at a time.
    """
    frozen_before = gc.get_freeze_count() > 0

    async def freeze_periodically() -> None:
        while True:
            await asyncio.sleep(period_s)
            gc.freeze()

    task = asyncio.create_task(freeze_periodically())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.unfreeze()
        gc.collect()
        if frozen_before:
            gc.freeze()
