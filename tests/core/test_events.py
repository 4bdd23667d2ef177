"""The event log's schema: every kind has an example, events are frozen, the schema page names them all."""

import dataclasses
from pathlib import Path

import pytest

from voice.core import events as ev

EXAMPLES: list[ev.CallEvent] = [
    ev.CallStarted(0, "d-1", 2, True, "您好"),
    ev.TurnPlanned(
        0,
        0,
        "喂",
        dialogue_turn=1,
        audio_samples=9000,
        speech_start=480,
        speech_end=8500,
        think=6400,
        think_source="random",
        pause=(4000, 8000),
        barge_in=9600,
        backchannel=ev.BackchannelCue("嗯", 8000),
        reference="好的",
    ),
    ev.CallEnded(99_000, "completed", False, "", 2, 2),
    ev.AudioReceived(1000, 320, 990, 1000),
    ev.ControlReceived(1000, "log", {"kind": "reply", "text": "好的", "nested": {"a": [1, 2]}}),
    ev.PlayoutCleared(2000, 640),
    ev.MarkReceived(2000, "reply-end", 9000),
    ev.MarkPlayed(9000, "reply-end", 9000),
    ev.HungUp(3000, "assistant", "scam"),
    ev.RecordsCapped(3000, {"control:clear": {"received": 5000, "kept": 1000}}),
    ev.LineDropped(3000, "closed by assistant (code 1000)"),
    ev.ReplyStarted(3200, 0, 3100),
    ev.ReplyEnded(9000, 0, 8000),
    ev.ReplyMissed(20_000, 1, 128_000, 1),
    ev.CallerSpoke(4000, 1, "after_reply", 4000, 4480, 9000, (6000, 7000), 3000, 1000, 1000),
    ev.BargedIn(5000, 1, 4900, 3100, 1800),
    ev.BargeInSkipped(5000, 1, "reply ended before the barge-in point"),
    ev.BackchannelSaid(5000, 1, "嗯", 4900, 5200, 3100),
    ev.BackchannelSkipped(5000, 1, "reply already ended"),
    ev.TurnRequested(9000, 2, "reply_ended", 8000),
    ev.CallerDecided(9600, 2, "say", "llm", "那放门口吧", "助理：放哪儿？", reason="answer", key="ab12"),
    ev.CallerLate(12_000, 2, 11_000, 1000),
    ev.CallerEarly(10_240, 2, 9600, True),
    ev.GoalReported(30_000, "partly", "放了门口，但没人签收", 3),
]


def test_every_kind_has_an_example():
    assert {type(e) for e in EXAMPLES} == set(ev.EVENT_TYPES.values())


def test_events_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXAMPLES[0].t = 5  # type: ignore[misc]


def test_the_schema_page_names_every_kind_and_field():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text(encoding="utf-8")
    for kind, cls in ev.EVENT_TYPES.items():
        assert f"`{kind}` (`{cls.__name__}`)" in doc, kind
        for f in dataclasses.fields(cls):
            assert f"`{f.name}`" in doc, (kind, f.name)
