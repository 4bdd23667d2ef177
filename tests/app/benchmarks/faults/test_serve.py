"""The fast ``serve`` faults (``voice/app/benchmarks/faults/serve.py``), each against a real ``python -m
server``
child with the memory TTS: every row must pass (expected behaviour, bounded memory, no orphan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.benchmarks.faults import layered
from voice.app.benchmarks.faults.fault import Fault
from voice.app.benchmarks.faults.serve import FAULTS

# two server starts; the gate's answers (401/403, 1008/1009/1013) are unit-tested in tests/server/test_gate.py
FAST = layered(FAULTS, {"serve-malformed-start", "serve-client-close"})


def test_every_fault_is_a_serve_fault_and_the_slow_ones_are_the_calls() -> None:
    assert {fault.area for fault in FAULTS} == {"serve"}
    assert {f.name for f in FAULTS if not f.fast} == {
        "serve-memory-after-calls",
        "serve-client-close-mid-call",
    }


@pytest.mark.parametrize("fault", FAST)
def test_a_fast_serve_fault_passes(fault: Fault, tmp_path: Path) -> None:
    outcome = fault.run(tmp_path)
    assert outcome.passed, outcome
