"""The carriers' shared pieces: JSON checks, ids, pending acknowledgements, the bot's close."""

from __future__ import annotations

import json

from tests.lines.carrier_peers import closed
from voice.core.call import AssistantControl, LineClosed, PlayoutMark
from voice.lines.carrier import (
    MAX_PENDING_MARKS,
    PlayoutAcks,
    at_path,
    base64_field,
    check_id,
    closed_by_bot,
    derived_hex,
    derived_id,
    json_event,
    passed_on,
)


def test_json_event_takes_objects_naming_their_kind() -> None:
    assert json_event('{"event": "media", "x": 1}', "event", "X") == ("media", {"event": "media", "x": 1})
    assert json_event('{"action": "clear"}', "action", "X") == ("clear", {"action": "clear"})
    for bad in ("{", "[]", '{"event": 1}', b"{}"):
        assert isinstance(json_event(bad, "event", "X"), LineClosed)


def test_paths_payloads_and_ids() -> None:
    assert at_path({"a": {"b": 2}}, "a", "b") == 2 and at_path({"a": 3}, "a", "b") is None
    assert base64_field({"m": {"p": "AAE="}}, "m", "p") == b"\x00\x01"
    assert isinstance(base64_field({"m": {}}, "m", "p"), LineClosed)
    assert check_id({"sid": "a"}, "sid", "a", "media") is None and check_id({}, "sid", "a", "media") is None
    assert isinstance(check_id({"sid": "b"}, "sid", "a", "media"), LineClosed)
    assert derived_id("s", "c1") == derived_id("s", "c1") != derived_id("s", "c2")
    assert len(derived_id("s", "c1")) == 36 and derived_hex("MA", "c1", 18).startswith("MA")


def test_unknown_events_are_recorded_bounded_and_log_is_the_bots_log() -> None:
    assert passed_on("log", {"event": "log", "a": 1}) == AssistantControl("log", {"a": 1})
    big = passed_on("spam", {"event": "spam", "x": "y" * 5000})
    assert big.event == "unknown" and len(json.dumps(big.payload)) < 1000
    assert passed_on("log", {"action": "log"}, key="action").event == "unknown"  # only an event is a log


def test_acknowledgements_come_back_in_order_and_a_flood_is_refused() -> None:
    acks = PlayoutAcks[int]()
    assert acks.ask("a", 1) == PlayoutMark("a") and acks.ask("b", 2) == PlayoutMark("b")
    assert acks.played(1) == [1] and acks.played(5) == [2] and acks.played(1) == []
    assert acks.answered == [1, 2]
    for i in range(MAX_PENDING_MARKS):
        acks.ask("m", i)
    assert isinstance(acks.ask("m", -1), LineClosed)


def test_only_a_normal_close_is_a_hang_up() -> None:
    assert closed_by_bot(closed(1001, "going"))[0] == AssistantControl(
        "hangup", {"reason": "the bot closed the stream (code 1001)", "detail": "going"}
    )
    assert closed_by_bot(closed(1011)) == ()
