"""The core's event log: capped per kind and counted, payloads cut with a marker, streamed to a sink."""

import json

from voice.core import events as ev
from voice.core.eventlog import (
    MAX_EVENT_NAME_CHARS,
    MAX_PAYLOAD_CHARS,
    TRUNCATED,
    EventLog,
    bounded_name,
    bounded_payload,
    capped_kind,
)


def test_each_capped_kind_keeps_its_first_records_and_counts_the_rest():
    log = EventLog(cap=3)
    for i in range(10):
        log.append(ev.ControlReceived(i, "clear"))
        log.append(ev.PlayoutCleared(i, 0))
        log.append(ev.ControlReceived(i, f"made-up-{i}"))  # every made-up name counts as one kind
        log.append(ev.AudioReceived(i, 320, i, i))  # audio is never capped
    log.append(ev.ControlReceived(10, "log", {"kind": "caller"}))  # a kind under its cap
    kept = [e for e in log.events if isinstance(e, ev.ControlReceived) and e.event == "clear"]
    assert [e.t for e in kept] == [0, 1, 2]
    assert sum(isinstance(e, ev.AudioReceived) for e in log.events) == 10
    assert log.capped() == {
        "clear": {"received": 10, "kept": 3},
        "control:clear": {"received": 10, "kept": 3},
        "control:unknown": {"received": 10, "kept": 3},
    }


def test_the_kinds_a_bot_can_multiply_are_capped_and_the_cores_own_records_are_not():
    assert capped_kind(ev.MarkReceived(0, "m", 0)) == "mark"
    assert capped_kind(ev.MarkPlayed(0, "m", 0)) == "mark_played"
    assert capped_kind(ev.ControlReceived(0, "hangup")) == "control:hangup"
    assert capped_kind(ev.CallerSpoke(0, 0, "first", 0, 1, 2)) is None
    assert capped_kind(ev.AudioReceived(0, 1, 0, 0)) is None


def test_a_long_payload_is_cut_with_a_marker_and_its_length():
    short = {"kind": "caller", "text": "外卖到了"}
    assert bounded_payload(short) == short
    cut = bounded_payload({"text": "x" * 100_000})
    assert cut["chars"] == len(json.dumps({"text": "x" * 100_000}))
    assert cut[TRUNCATED].endswith("…") and len(cut[TRUNCATED]) == MAX_PAYLOAD_CHARS + 1
    assert bounded_name("dtmf") == "dtmf"
    assert len(bounded_name("e" * 10_000)) == MAX_EVENT_NAME_CHARS + 1


def test_streaming_sends_the_records_so_far_then_each_new_one_and_keeps_rx_on_disk_only():
    log = EventLog(cap=1)
    log.append(ev.CallStarted(0, "d", 1, True))
    log.append(ev.AudioReceived(10, 320, 10, 10))
    sunk: list[ev.Event] = []
    log.stream_to(sunk.append)
    log.append(ev.AudioReceived(20, 320, 20, 20))
    log.append(ev.ControlReceived(30, "clear"))
    log.append(ev.ControlReceived(40, "clear"))  # over the cap: neither sunk nor kept
    assert [e.t for e in sunk] == [0, 10, 20, 30]
    assert [e.kind for e in log.events] == ["call_start", "control"]
    assert log.capped() == {"control:clear": {"received": 2, "kept": 1}}
