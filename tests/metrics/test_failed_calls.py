"""The assistant's failed calls on top: grouped by outcome, each kind with an example and what to do."""

import dataclasses

from voice.app.run.failures import CONNECT_FAILED, failed_call
from voice.metrics.failed_calls import FIXES, failed_groups, failed_lines
from voice.metrics.simulator import CALLER_SPEECH_FAILED


def call(call_id, outcome, detail="", failed=True):
    return dataclasses.replace(failed_call(call_id, "d", 2, outcome, detail), failed=failed)


REFUSED = "cannot connect to ws://127.0.0.1:8765/pcm: [Errno 111] Connection refused"


def test_a_bot_not_listening_says_so_with_the_fix_and_one_calls_own_words():
    calls = [call("m-1", CONNECT_FAILED, REFUSED), call("m-2", CONNECT_FAILED, REFUSED)]
    lines = failed_lines([("bot", calls)])
    assert lines[0].startswith("FAILED CALLS: 2 of 2 call(s) failed (each kind below")
    assert lines[1] == "  connect_failed: 2 call(s), " + FIXES[CONNECT_FAILED][0] + ": m-1, m-2"
    assert lines[2] == f"    e.g. {REFUSED}"
    assert lines[3].startswith("    what to do: start it") and "--wait-for-target" in lines[3]


def test_kinds_are_grouped_in_the_order_seen_and_calls_named_by_target_when_there_are_several():
    a = [
        call("m-1", "assistant_silent", "2 replies in a row never came"),
        call("m-2", "completed", failed=False),
    ]
    b = [call("m-1", "protocol_error"), call("m-2", "assistant_silent"), call("m-3", "frobnicated")]
    groups = failed_groups([("A", a), ("B", b)])
    assert [(g.outcome, g.calls) for g in groups] == [
        ("assistant_silent", ["m-1 (A)", "m-2 (B)"]),
        ("protocol_error", ["m-1 (B)"]),
        ("frobnicated", ["m-3 (B)"]),
    ]
    assert groups[0].example == "2 replies in a row never came" and groups[1].example == ""
    assert "docs/protocol.md" in groups[1].fix and groups[2].fix  # an outcome unknown here still gets one
    lines = failed_lines([("A", a), ("B", b)])
    assert lines[0].startswith("FAILED CALLS: 4 of 5 call(s)") and not any("e.g." in x for x in lines[5:])


def test_callsims_own_failures_and_clean_runs_have_no_such_section():
    callsim = [
        call("m-1", CALLER_SPEECH_FAILED, "TTS engine produced silence"),
        call("m-2", "completed", failed=False),
    ]
    assert failed_lines([("bot", callsim)]) == []  # CallSim's banner says those: not the assistant's
    assert failed_lines([("bot", [])]) == []
