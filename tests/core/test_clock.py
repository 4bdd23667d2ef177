import asyncio
import calendar
import re
import time

import pytest

from voice.core.clock import FrameTicker, MonotonicClock, VirtualClock, utc_now_iso


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


# --- the shared frame ticker ----------------------------------------------------------------------------

FRAME = 20_000_000


async def _paced(ticker: FrameTicker, phase_ns: int, frames: int, woke: list[tuple[int, int]]) -> None:
    """A call's pacing loop: frame k is due at phase + (k+1) * 20 ms; record (deadline, wake-up time)."""
    for k in range(frames):
        deadline = phase_ns + (k + 1) * FRAME
        await ticker.sleep_until(deadline)
        woke.append((deadline, ticker.now_ns()))


async def _step(base: VirtualClock, until_ns: int, step_ns: int = 1_000_000) -> None:
    while base.now_ns() < until_ns:
        base.advance(step_ns)
        for _ in range(10):  # let the waker and the released calls run
            await asyncio.sleep(0)


async def test_frame_ticker_releases_each_call_once_per_frame_never_before_its_deadline():
    base = VirtualClock(auto_advance=False)
    ticker = FrameTicker(base)
    phases = [0, 3_000_000, 3_000_000, 7_500_000, 19_000_000]  # two calls share a phase
    woke: list[list[tuple[int, int]]] = [[] for _ in phases]
    tasks = [asyncio.create_task(_paced(ticker, p, 6, w)) for p, w in zip(phases, woke, strict=True)]
    await _step(base, 200_000_000)
    await asyncio.wait_for(asyncio.gather(*tasks), 1)
    for phase, calls in zip(phases, woke, strict=True):
        assert [d for d, _ in calls] == [
            phase + (k + 1) * FRAME for k in range(6)
        ]  # each frame once, in order
        for deadline, now in calls:
            assert deadline <= now < deadline + 1_000_000  # never early; released at the first step after
    assert ticker.wakeups <= 6 * 4  # one wake-up serves every call due at that moment


async def test_frame_ticker_rearms_for_an_earlier_deadline_and_skips_cancelled_waits():
    base = VirtualClock(auto_advance=False)
    ticker = FrameTicker(base)
    late = asyncio.create_task(ticker.sleep_until(50_000_000))
    await asyncio.sleep(0)
    gone = asyncio.create_task(ticker.sleep_until(5_000_000))
    early = asyncio.create_task(ticker.sleep_until(10_000_000))  # earlier than what the waker sleeps toward
    await asyncio.sleep(0)
    gone.cancel()
    await _step(base, 10_000_000)
    assert early.done() and not late.done()
    await _step(base, 50_000_000)
    assert late.done()
    await ticker.sleep_until(1)  # a deadline already passed returns at once


async def test_frame_ticker_on_the_real_clock_never_wakes_early():
    ticker = FrameTicker()  # a non-spinning MonotonicClock
    start = ticker.now_ns()
    deadlines = [start + k * 2_500_000 for k in (1, 1, 2, 3)]
    woke: list[int] = []

    async def wait(d: int) -> None:
        await ticker.sleep_until(d)
        woke.append(ticker.now_ns() - d)

    await asyncio.gather(*(wait(d) for d in deadlines))
    assert len(woke) == 4 and min(woke) >= 0


async def test_non_spinning_monotonic_clock_never_wakes_early():
    clock = MonotonicClock(spin_ns=0)
    start = clock.now_ns()
    for k in range(1, 4):
        await clock.sleep_until(start + k * 1_300_000)
        assert clock.now_ns() >= start + k * 1_300_000
    with pytest.raises(ValueError):
        MonotonicClock(spin_ns=-1)


def test_the_utc_date_is_iso_8601_to_the_second_and_now():
    before = time.time()
    stamp = utc_now_iso()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", stamp)
    parsed = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    assert before - 2 <= parsed <= time.time() + 1
