"""The blocks of a summary: latency, barge-in, pacing, the caller's goal and CallSim's own failures."""

from tests.metrics.model.old_files import FAILING, REACTIVE, TARGET, doc
from voice.metrics.model.blocks import (
    BargeInBlock,
    GoalBlock,
    LatencyBlock,
    PacingBlock,
    SimulatorBlock,
    SimulatorReason,
)
from voice.metrics.model.jsonio import Fields


def test_each_block_of_an_old_summary_loads_and_writes_back_as_written():
    summary = doc(REACTIVE / TARGET / "results.json")["summary"]
    for key, block in (
        ("latency_ms", LatencyBlock),
        ("barge_in", BargeInBlock),
        ("pacing_late_ms", PacingBlock),
        ("goal", GoalBlock),
    ):
        assert block.from_json(Fields(summary[key])).to_json() == summary[key], key
    goal = GoalBlock.from_json(Fields(summary["goal"]))
    assert goal.calls == 2 and sum(goal.verdicts.values()) == 2


def test_callsims_failures_keep_their_reasons_in_order():
    failures = doc(FAILING / "results.json")["targets"][0]["summary"]["simulator_failures"]
    block = SimulatorBlock.from_json(Fields(failures))
    assert block.count == 1 and list(block.reasons) == ["caller_speech_failed"] and block.redo
    assert isinstance(block.reasons["caller_speech_failed"], SimulatorReason)
    assert block.to_json() == failures
    assert SimulatorBlock().to_json() == {"count": 0, "calls": [], "reasons": {}, "redo": ""}
