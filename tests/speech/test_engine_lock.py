"""The run's engine lock: one holder, the most urgent waiter next, cancellation never loses the engine."""

import asyncio
import threading

import pytest

from voice.speech.engine_lock import BACKGROUND, SOON, URGENT, EngineLock, Urgency


async def _queue_up(
    lock: EngineLock, order: list[str], jobs: list[tuple[str, int]]
) -> list[asyncio.Task[None]]:
    tasks = []
    for name, priority in jobs:
        tasks.append(asyncio.ensure_future(lock.run(priority, order.append, name)))
        await asyncio.sleep(0)  # each arrives (and queues) in this order
    return tasks


async def test_waiters_are_served_most_urgent_first_then_in_arrival_order():
    lock, order = EngineLock(), []
    await lock.acquire(BACKGROUND)  # a long job holds the engine
    jobs = [
        ("bg1", BACKGROUND),
        ("soon1", SOON),
        ("urgent1", URGENT),
        ("bg2", BACKGROUND),
        ("urgent2", URGENT),
    ]
    tasks = await _queue_up(lock, order, jobs)
    assert order == [] and lock.locked()
    lock.release()
    await asyncio.gather(*tasks)
    assert order == ["urgent1", "urgent2", "soon1", "bg1", "bg2"]
    assert not lock.locked()


async def test_a_free_engine_is_taken_at_once():
    lock = EngineLock()
    assert await lock.run(URGENT, lock.locked)  # held while the job runs
    assert not lock.locked()


async def test_a_waiters_urgency_raised_while_it_waits_moves_it_up():
    lock, order = EngineLock(), []
    await lock.acquire()
    guess = Urgency(SOON)

    tasks = [
        asyncio.ensure_future(lock.run(p, order.append, n)) for n, p in (("piece", SOON), ("guess", guess))
    ]
    await asyncio.sleep(0)
    guess.level = URGENT  # the guess became the turn's decision
    lock.release()
    await asyncio.gather(*tasks)
    assert order == ["guess", "piece"]


async def test_a_job_runs_in_a_thread_and_keeps_the_engine_until_it_returns_even_if_its_task_is_cancelled():
    lock, started, finish = EngineLock(), threading.Event(), threading.Event()
    running, most = [0], [0]

    def engine(name: str) -> str:
        running[0] += 1
        most[0] = max(most[0], running[0])
        started.set()
        finish.wait(5)
        running[0] -= 1
        return name

    first = asyncio.ensure_future(lock.run(BACKGROUND, engine, "first"))
    await asyncio.to_thread(started.wait, 5)
    second = asyncio.ensure_future(lock.run(URGENT, engine, "second"))
    await asyncio.sleep(0)
    first.cancel()  # the thread cannot be stopped: the engine stays held until it returns
    await asyncio.sleep(0.05)
    assert lock.locked() and not second.done()
    finish.set()
    assert await second == "second"
    assert first.cancelled() and most[0] == 1 and not lock.locked()


async def test_a_job_that_raises_frees_the_engine_and_the_error_reaches_its_caller():
    lock = EngineLock()

    def broken() -> None:
        raise ValueError("engine broke")

    with pytest.raises(ValueError, match="engine broke"):
        await lock.run(URGENT, broken)
    assert not lock.locked()


async def test_a_cancelled_waiter_leaves_the_queue_and_the_next_one_is_served():
    lock, order = EngineLock(), []
    await lock.acquire()
    urgent, background = await _queue_up(lock, order, [("urgent", URGENT), ("bg", BACKGROUND)])
    urgent.cancel()
    await asyncio.sleep(0)
    lock.release()
    await background
    assert order == ["bg"] and urgent.cancelled() and not lock.locked()


async def test_a_waiter_cancelled_as_the_engine_is_handed_to_it_hands_it_on():
    lock, order = EngineLock(), []
    await lock.acquire()
    first, second = await _queue_up(lock, order, [("first", URGENT), ("second", SOON)])
    lock.release()  # handed to "first", which has not run yet
    first.cancel()
    await asyncio.gather(first, second, return_exceptions=True)
    assert order == ["second"] and first.cancelled() and not lock.locked()


async def test_the_holder_runs_to_its_end_whatever_waits():
    lock, order = EngineLock(), []
    started, release = threading.Event(), threading.Event()

    def long_job() -> None:
        order.append("long starts")
        started.set()
        release.wait(5)
        order.append("long ends")

    long = asyncio.ensure_future(lock.run(BACKGROUND, long_job))
    await asyncio.to_thread(started.wait, 5)
    (urgent,) = await _queue_up(lock, order, [("urgent", URGENT)])
    assert order == ["long starts"]
    release.set()
    await asyncio.gather(long, urgent)
    assert order == ["long starts", "long ends", "urgent"]


def test_releasing_a_free_engine_is_an_error():
    with pytest.raises(RuntimeError):
        EngineLock().release()
