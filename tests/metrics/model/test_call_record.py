"""A call as the files hold it: metrics, the derived figures recomputed on reading, and the run's labels."""

import json

import pytest

from tests.metrics.model.old_files import TARGET, VOICED, doc
from voice.metrics.call_metrics import BargeIn, CallMetrics, TurnMetrics
from voice.metrics.goal import CallerGoal, CallerWait
from voice.metrics.model.call_record import CallRecord, call_to_json, metrics_from_json
from voice.metrics.model.jsonio import json_bytes

OLD_CALL = VOICED / TARGET / "m-2.r1.metrics.json"


def test_an_old_metrics_file_loads_with_its_labels_and_writes_back_the_same_bytes():
    record = CallRecord.from_json(doc(OLD_CALL))
    m = record.metrics
    assert (m.call_id, m.dialogue_id, m.outcome, m.failed) == ("m-2.r1", "m-2", "completed", False)
    assert m.barge_ins and isinstance(m.turns[0], TurnMetrics) and m.assistant_speech_ms
    assert record.labels["voice"] == record.label("voice") and record.labels["repeat"] == 1
    assert "latency_p50_ms" not in record.labels and "schema_version" not in record.labels  # recomputed
    assert record.label("persona") == "?" and record.label("persona", "-") == "-"
    assert json_bytes(record.to_json()) == OLD_CALL.read_bytes()


def test_every_field_comes_back_typed_and_keys_it_does_not_know_are_ignored():
    goal = CallerGoal("yes", "ok", 2, 900.0, 30.0, waits=[CallerWait(1, 10.0, 30.0)])
    turn = TurnMetrics(
        0, "barge_in", "喂", 0.0, 900.0, 1200.0, 300.0, 5.0, BargeIn(100.0, True, 250.0, True, False),
        rhythm=4, rhythm_reasons=("late",),
    )  # fmt: skip
    m = CallMetrics(
        "c", "d", "completed", False, 3000.0, 80.0, [turn], 1, assistant_speech_ms=[(1200.0, 2000.0)],
        goal=goal, records_capped={"control:clear": {"received": 9, "kept": 1}}, pacing_late_ms={"p99": 0.4},
    )  # fmt: skip
    doc = json.loads(json_bytes(call_to_json(m, {"scenario": "taxi", "line": ("a", 1)})))
    doc["from_a_newer_writer"] = True
    assert metrics_from_json(doc) == m
    record = CallRecord.from_json(doc)
    assert record.labels == {"scenario": "taxi", "line": ["a", 1], "from_a_newer_writer": True}


@pytest.mark.parametrize(
    ("broken", "why"),
    [
        ({"call_id": "c"}, r"call\.dialogue_id is missing"),
        ({"turns": [{"turn": "0"}]}, r"turns\[\]\.turn is not a whole number"),
        ({"assistant_speech_ms": [[1.0]]}, r"not a \[lo, hi\] pair"),
        ({"failed": "no"}, r"call\.failed is not true or false"),
    ],
)
def test_a_malformed_call_is_refused_naming_the_key(broken, why):
    with pytest.raises(ValueError, match=why):
        metrics_from_json({**doc(OLD_CALL), **broken} if "call_id" not in broken else broken)
