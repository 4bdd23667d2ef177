"""The batch's fast faults, run for real (``callsim bench`` processes against the echo assistant)."""

import pytest

from tests.app.benchmarks.faults import layered
from voice.app.benchmarks.faults.batch import FAULTS

# a bad file refused by a real bench process; the others: --full
FAST = layered(FAULTS, {"bad file: 240-character id"})


@pytest.mark.parametrize("fault", FAST)
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
