"""The asyncio driver: one clock, one line, one core — on virtual time with an in-memory line."""

import asyncio

import pytest

from tests.fakes import MemoryBot, ScriptedAssistant, plan, turn
from voice.audio import FRAME_SAMPLES
from voice.call import CallCore, LineInput
from voice.clock import VirtualClock
from voice.driver import run_call
from voice.errors import LineError
from voice.lines.base import CallStart
from voice.lines.memory import MemoryLine


async def test_a_call_runs_on_virtual_time_and_sends_one_frame_per_tick():
    core = CallCore(plan(turn(0), turn(1)))
    line = MemoryLine(MemoryBot(ScriptedAssistant()))
    clock = VirtualClock()
    trace = await run_call(core, line, clock, CallStart("c", {"id": "d"}))
    assert trace.outcome.reason == "completed"
    n_frames = len(line.sent)
    assert len(trace.caller) == len(trace.heard) == n_frames * FRAME_SAMPLES
    assert clock.now_ns() == n_frames * 20_000_000  # exactly real time, never faster
    assert line.hangup_reason == "completed"
    assert trace.pacing_late_ms[2] == 0.0


class _NeverAnswers:
    async def open(self, start: CallStart) -> None:
        await asyncio.sleep(3600)

    async def send(self, pcm) -> None: ...
    async def recv(self) -> LineInput: ...  # type: ignore[empty-body]
    async def hangup(self, reason: str) -> None: ...
    async def close(self) -> None: ...


async def test_an_assistant_that_never_answers_the_connect_is_a_line_error():
    with pytest.raises(LineError, match="did not answer"):
        await run_call(
            CallCore(plan(turn(0))), _NeverAnswers(), VirtualClock(), CallStart("c"), connect_timeout_s=0.05
        )
