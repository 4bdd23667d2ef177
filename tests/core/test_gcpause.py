"""The GC helpers: what they freeze, and that they give everything back."""

import asyncio
import gc
import weakref

from voice.core.gcpause import freeze_long_lived, short_gc_pauses


async def test_short_gc_pauses_freezes_while_inside_and_unfreezes_after():
    gc.unfreeze()
    async with short_gc_pauses(period_s=0.01):
        await asyncio.sleep(0.05)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


async def test_what_was_frozen_before_stays_frozen_after_short_gc_pauses():
    freeze_long_lived()
    try:
        async with short_gc_pauses(period_s=0.01):
            await asyncio.sleep(0.02)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_freeze_long_lived_collects_garbage_first_and_freezes_what_is_alive():
    gc.unfreeze()

    class Node:
        other: object = None

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle that is garbage once the names go
    dead = weakref.ref(a)
    del a, b
    alive = Node()
    try:
        freeze_long_lived()
        assert dead() is None  # collected before freezing, not frozen forever
        assert gc.get_freeze_count() > 0
        assert weakref.ref(alive)() is alive
    finally:
        gc.unfreeze()
