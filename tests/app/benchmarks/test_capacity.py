"""Pure helpers of the capacity benchmark (the benchmark itself prints figures and is not a test)."""

from __future__ import annotations

from tests.fakes import plan, turn
from voice.app.benchmarks.capacity import split
from voice.app.benchmarks.plans import estimated_secs, join_turns, pack_plans
from voice.app.benchmarks.sysstats import MachineCpu, fmt, machine_busy_fraction, table
from voice.core.caller import CallerTiming


def test_turns_of_several_dialogues_are_packed_into_long_greeting_less_plans():
    timing = CallerTiming()
    dialogues = [plan(turn(0, 2000), turn(1, 2000)) for _ in range(5)]  # 10 turns of ~2 s speech
    packed = pack_plans(dialogues, call_secs=12.0, echo_delay_ms=500, timing=timing)
    assert len(packed) >= 2
    for p in packed:
        assert not p.expects_greeting
        assert [t.index for t in p.turns] == list(range(len(p.turns)))
        assert estimated_secs(p.turns, timing, 500) >= 12.0
    assert sum(len(p.turns) for p in packed) <= 10


def test_a_short_set_still_gives_one_plan():
    timing = CallerTiming()
    packed = pack_plans([plan(turn(0, 500))], call_secs=60.0, echo_delay_ms=0, timing=timing)
    assert len(packed) == 1 and len(packed[0].turns) == 1
    joined = join_turns(packed[0].turns, timing, "x")
    assert joined.dialogue_id == "x" and joined.references == (None,)


def test_calls_are_split_evenly_over_processes():
    assert split(10, 3) == [4, 3, 3]
    assert split(2, 4) == [1, 1]
    assert sum(split(250, 2)) == 250


def test_tables_and_cpu_fractions():
    assert fmt(None) == "-" and fmt(1.234, ".2f") == "1.23"
    text = table(["name", "n"], [["a", "1"], ["bb", "10"]])
    assert text.splitlines() == ["name   n", "a      1", "bb    10"]
    assert machine_busy_fraction(MachineCpu(10, 100), MachineCpu(40, 200)) == 0.3
    assert machine_busy_fraction(None, MachineCpu(1, 2)) is None
