"""Giving a finished call's memory back (``server/memory.py``): what is collected, and when."""

from __future__ import annotations

import gc
import weakref

from server.memory import CallMemory, return_freed_memory


class Node:
    """Stands for a pipeline: objects that point at each other, freed only by the cycle collector."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_objects_in_reference_cycles_are_freed() -> None:
    gc.disable()  # no automatic collection may do the work for us
    try:
        ref = cycle()
        assert ref() is not None
        return_freed_memory()
        assert ref() is None
    finally:
        gc.enable()


def test_a_collection_when_the_last_call_ends_or_every_few_calls() -> None:
    memory = CallMemory(every=3)
    memory.call_ended(still_running=0)
    assert memory.collections == 1
    memory.call_ended(still_running=2)
    memory.call_ended(still_running=2)
    assert memory.collections == 1  # other calls run: their audio is not stalled for a collection
    memory.call_ended(still_running=1)
    assert memory.collections == 2 and memory.pending == 0
