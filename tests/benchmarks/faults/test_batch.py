"""The batch's fast faults, run for real (``callsim bench`` processes against the echo assistant)."""

import pytest

from voice.benchmarks.faults.batch import FAULTS

FAST = [f for f in FAULTS if f.fast]


@pytest.mark.parametrize("fault", FAST, ids=[f.name for f in FAST])
def test_a_fast_batch_fault_meets_every_goal(fault, tmp_path):
    outcome = fault.run(tmp_path)
    assert outcome.passed, outcome


def test_the_catalogue_covers_the_issue_and_leaves_the_model_faults_out_of_ci():
    names = " ".join(f.name for f in FAULTS)
    for what in ("id", "surrogate", "10k", "nesting", "digit", "resume", "disk full", "read-only", "timeout",
                 "wss", "kill -9", "SIGTERM", "built-in killed"):  # fmt: skip
        assert what in names, what
    assert {f.name for f in FAULTS if not f.fast} == {
        "kill -9 of bench: orphans", "SIGTERM of bench: orphans", "built-in killed mid-run"
    }  # fmt: skip
