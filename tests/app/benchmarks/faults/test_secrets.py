"""The secrets faults, run for real: credentials reach the bot and no file or output of CallSim."""

import pytest

from tests.app.benchmarks.faults import layered
from voice.app.benchmarks.faults.secrets import FAULTS, leaks

FAST = layered(FAULTS, {"secrets-header-crlf", "secrets-refused-connection"})  # the bench run: --full


def test_leaks_names_where_each_secret_was_found():
    texts = [("a.json", b'{"t": "SECRET123"}'), ("stdout", b"all clear")]
    assert leaks(texts, ("SECRET123", "other")) == ["a.json: SECRET123"]


@pytest.mark.parametrize("fault", FAST)
def test_fast_secrets_fault_passes(fault, tmp_path):
    outcome = fault.run(tmp_path)
    assert outcome.passed, outcome
