"""The fault runner: selection, isolation (a broken fault is a failed row, not a crash), the table."""

from __future__ import annotations

import pytest

from voice.app.benchmarks.faults.fault import Fault, FaultOutcome
from voice.app.benchmarks.faults.run import run_isolated, select, table


def fault(name: str, area: str = "lines", fast: bool = True) -> Fault:
    return Fault(name, area, fast, lambda _: FaultOutcome("ok", True, 0.1))


def test_selection_by_speed_name_and_area() -> None:
    faults = [fault("a"), fault("b", fast=False), fault("c", area="serve")]
    assert [f.name for f in select(faults, fast=True, only=[])] == ["a", "c"]
    assert [f.name for f in select(faults, fast=False, only=["serve", "b"])] == ["b", "c"]
    with pytest.raises(SystemExit, match="no such fault or area: nope"):
        select(faults, fast=False, only=["nope"])


def test_a_fault_that_cannot_run_is_a_failed_row() -> None:
    outcome = run_isolated(fault("not in the catalogue: a/b"), timeout=60)  # prose names make safe folders
    assert not outcome.passed and "no such fault" in outcome.outcome


def test_the_table_marks_failing_rows() -> None:
    rows = [
        (fault("flood"), FaultOutcome("recorded: 1000 kept | 5 dropped", True, 2.0, peak_mb=90, kept="1/1")),
        (fault("lost"), FaultOutcome("call lost", True, 3.0, calls_lost=1)),
    ]
    text = table(rows).splitlines()
    assert text[2] == "| flood | lines | recorded: 1000 kept / 5 dropped | 2.0 | 90 | 0 | 1/1 | 0 | yes |"
    assert text[3].endswith("| **NO** |") and "| – |" in text[3]
