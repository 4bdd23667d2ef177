"""Runs and recordings with a reactive caller, for the tests of goal-level results, reports and compare.

``reactive_bench``: the two assistants of :mod:`tests.runs` called by the reactive caller on virtual time,
its model played by rules (:mod:`voice.react.scripted_caller`) behind a real HTTP server in the test process.
``goal_recording``: a hand-built recording whose event log holds a reactive caller's decisions, waits and
verdict exactly where a test puts them (no call is made).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tests.llm_fake import FakeLLM
from tests.runs import A, B, memory_lines
from voice.app.run.dataset import BenchConfig, TargetResult, run_bench
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.core.clock import VirtualClock
from voice.dialogues import Dialogue
from voice.react import scripted_caller
from voice.react.caller import parse_caller
from voice.recording import Recording
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS


async def reactive_bench(
    out: Path, dialogues: Sequence[Dialogue], persona: str = "patient", **kw: object
) -> list[TargetResult]:
    """Both assistants (A answers after 300 ms, B after 900 ms), every dialogue, by a reactive caller."""
    with FakeLLM().respond(scripted_caller.answer) as fake:
        caller = parse_caller(
            "openai:rules",
            base_url=fake.url,
            wait_in_place=True,
            cache="use",
            cache_dir=out / "llm",
            persona=persona,
        )
        config = BenchConfig(out=out, targets=(A, B), tts="memory", transcribe=True, caller=caller, **kw)
        return await run_bench(
            list(dialogues),
            config,
            MemoryTTS(),
            MemoryASR([], default="好的"),
            new_clock=VirtualClock,
            line_factories={A: memory_lines(300), B: memory_lines(900)},
        )


S = ms_to_samples


def decided(
    at_ms: float, turn: int, action: str = "say", source: str = "llm", **more: str
) -> ev.CallerDecided:
    return ev.CallerDecided(S(at_ms), turn, action, source, **more)


def goal_recording(length_ms: float, extra: Sequence[ev.CallEvent], call_id: str = "g") -> Recording:
    """A silent call of ``length_ms`` (one caller turn said) whose log also holds ``extra`` events."""
    n = S(length_ms)
    events: list[ev.CallEvent] = [ev.CallStarted(0, call_id, 1, False), ev.TurnPlanned(0, 0, "喂")]
    events.append(ev.CallerSpoke(S(500), 0, "first", S(500), S(500), S(1500)))
    events += list(extra)
    events.append(ev.CallEnded(n, "completed", False, caller_turns_started=1, caller_turns=1))
    silence = np.zeros(n, np.int16)
    return Recording(call_id, silence, silence.copy(), events)
