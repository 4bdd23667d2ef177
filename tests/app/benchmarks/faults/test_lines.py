"""The fast hostile-bot faults of the lines area: each a real ``callsim bench`` against a flooding bot."""

import pytest

from tests.app.benchmarks.faults import layered
from voice.app.benchmarks.faults.lines import FAULTS

FAST = layered(FAULTS, {"twilio: marks flood"})  # one flood for real; the others: --full


def test_the_catalogue_covers_every_line_and_flood_the_issue_names():
    names = " / ".join(f.name for f in FAULTS)
    for what in ("pcm: tiny unknown", "pcm: clear", "log", "binary", "twilio: unknown", "twilio: marks"):
        assert what in names, what
    assert all(f.area == "lines" for f in FAULTS)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("fault", FAST)
def test_a_hostile_bot_leaves_a_bounded_kept_call(fault, tmp_path):
    outcome = fault.run(tmp_path)
    assert outcome.passed, outcome
