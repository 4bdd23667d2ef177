"""The event log's JSON codec: every kind round-trips; bad lines name what is wrong."""

import json

import pytest

from tests.core.test_events import EXAMPLES
from voice.core import events as ev
from voice.core.event_json import event_from_json, event_to_json
from voice.errors import RecordingError


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: e.kind)
def test_every_kind_round_trips_through_json(event):
    line = json.loads(json.dumps(event_to_json(event, 16000), ensure_ascii=False))
    assert line["kind"] == event.kind and line["t"] == event.t and line["ms"] == event.t / 16
    assert event_from_json(line) == event


def test_absent_optional_fields_are_left_out_and_read_back_as_none():
    line = event_to_json(ev.CallerSpoke(0, 0, "first", 0, 10, 20), 16000)
    assert "pause" not in line and "gap" not in line
    assert event_from_json(line) == ev.CallerSpoke(0, 0, "first", 0, 10, 20)


def test_fields_unknown_to_this_version_are_ignored():
    assert event_from_json({"t": 1, "kind": "clear", "dropped": 2, "later": "x"}) == ev.PlayoutCleared(1, 2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"t": 0, "kind": "teleport"}, "unknown event kind 'teleport'"),
        ({"t": 0, "kind": "line_closed"}, "line_closed: missing field 'reason'"),
        ({"t": "0", "kind": "clear"}, "clear: field 't'"),
        ({"t": 0.5, "kind": "clear"}, "whole number"),
        ({"t": True, "kind": "clear"}, "whole number"),
        ({"t": 0, "kind": "call_end", "reason": "x", "failed": 0}, "true/false"),
        (
            {
                "t": 0,
                "kind": "caller_turn",
                "turn": 0,
                "mode": "x",
                "audio_start": 0,
                "speech_start": 0,
                "speech_end": 1,
                "pause": [1],
            },
            "list of 2",
        ),
        ({"t": 0, "kind": "control", "event": "log", "payload": [1]}, "an object"),
        ({"t": 0, "kind": "turn_plan", "turn": 0, "text": "x", "backchannel": "嗯"}, "an object"),
    ],
)
def test_malformed_lines_name_the_kind_and_field(line, message):
    with pytest.raises(RecordingError, match=message):
        event_from_json(line)


def test_a_run_line_that_does_not_add_up_is_refused_by_name() -> None:
    from voice.core.event_json import expand_rx_run

    good = {"kind": "rx_run", "t": 0, "n": 2, "d_t": [0, 320], "samples": 320, "d_arrival": [5, 320],
            "d_start": [9, 320]}  # fmt: skip
    assert [(e.t, e.samples, e.arrival, e.start) for e in expand_rx_run(good)] == [
        (0, 320, 5, 9),
        (320, 320, 325, 329),
    ]
    with pytest.raises(RecordingError, match="d_arrival must list 2 numbers"):
        expand_rx_run({**good, "d_arrival": [5]})
    with pytest.raises(RecordingError, match="rx_run: 'n'"):
        expand_rx_run({k: v for k, v in good.items() if k != "n"})
