import asyncio

import pytest

from voice.clock import MonotonicClock, VirtualClock


async def test_virtual_clock_auto_advances_to_deadlines():
    clock = VirtualClock()
    await clock.sleep_until(20_000_000)
    assert clock.now_ns() == 20_000_000
    await clock.sleep_until(10)  # the past: returns at once, time does not go back
    assert clock.now_ns() == 20_000_000


async def test_manual_virtual_clock_waits_until_advanced():
    clock = VirtualClock(auto_advance=False)
    task = asyncio.create_task(clock.sleep_until(1_000))
    await asyncio.sleep(0)
    assert not task.done()
    clock.advance(999)
    await asyncio.sleep(0)
    assert not task.done()
    clock.advance(1)
    await asyncio.wait_for(task, 1)
    with pytest.raises(ValueError):
        clock.advance(-1)


async def test_monotonic_clock_never_wakes_early():
    clock = MonotonicClock()
    start = clock.now_ns()
    for k in range(1, 6):
        deadline = start + k * 5_000_000
        await clock.sleep_until(deadline)
        assert clock.now_ns() >= deadline
