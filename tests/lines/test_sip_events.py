"""The phone network's refusals name their outcomes, each with a fix the report shows."""

from __future__ import annotations

from voice.lines.sip_events import AUTH_REFUSED, CALL_REJECTED, OUTCOMES
from voice.metrics.failed_calls import FIXES


def test_every_refusal_outcome_has_a_fix() -> None:
    assert OUTCOMES[486] == "busy" and OUTCOMES[603] == "declined" and OUTCOMES[404] == "not_found"
    assert OUTCOMES[408] == "no_answer"
    for outcome in {*OUTCOMES.values(), AUTH_REFUSED, CALL_REJECTED, "no_media"}:
        assert outcome in FIXES, outcome
