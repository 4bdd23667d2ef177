"""The fidelity truth model (``voice/app/benchmarks/fidelity/truth.py``): what the caller must hear, by the
rules
alone."""

import pytest

from server.assistants.behaviour import REPLY_GAP_MS, ReferenceBehaviour
from tests.fakes import caller_turn_event as turn
from voice.app.benchmarks.fidelity.truth import truth, truth_spans
from voice.core import events as ev
from voice.core.audio import ms_to_samples

S = ms_to_samples


def test_truth_follows_the_rules_through_a_talked_over_turn_and_a_takeover():
    # never stops: the caller talks over the greeting, then pauses inside its second turn
    b = ReferenceBehaviour(300, None, True, False, greeting_ms=300, reply_len_ms=3000)
    events = [
        turn(0, 1000, 2500, "barge_in"),
        turn(1, 9000, 12000, pause=(10000, 11000)),
    ]
    spans = truth_spans(b, events, S(3000))
    assert spans == [
        [S(300), S(3300), -1],  # greeting, never cut
        [S(3300 + REPLY_GAP_MS), S(6700), -1],  # the turn ended at 2500 while still talking: after a gap
        [S(10300), S(13300), -1],  # reply into the pause
        [S(13300 + REPLY_GAP_MS), S(16700), -1],  # the full turn is answered after it
    ]
    t = truth(b, events, S(3000), S(30000))
    assert t["first_word"] == 300
    assert t["turns"][0] == {"latency": 1200, "stop_latency": 2300, "success": False, "false_starts": 0}
    # the reply into the pause is still going when the caller ends: that is the reply, talked over
    assert t["turns"][1] == {"latency": 10300 - 12000, "takeover": True, "false_starts": 0}


def test_truth_of_a_stop_counts_from_the_callers_speech_onset():
    b = ReferenceBehaviour(300, 120, True, True, greeting_ms=300, reply_len_ms=3000)
    events = [turn(0, 1000, 2500, "barge_in")]
    assert truth_spans(b, events, S(3000)) == [[S(300), S(1120), S(1000)], [S(2800), S(5800), -1]]
    assert truth(b, events, S(3000), S(9000))["turns"][0] == {
        "latency": 300,
        "stop_latency": 120,
        "success": True,
        "false_starts": 0,
    }


@pytest.mark.parametrize(
    ("stop_ms", "bc_ms", "carried"),
    [
        (120, (1000, 1200), False),
        (900, (1000, 1200), True),
        (None, (1000, 1200), True),
        (None, (3000, 3200), None),
    ],
)
def test_truth_of_a_backchannel_is_true_false_or_tells_nothing(stop_ms, bc_ms, carried):
    b = ReferenceBehaviour(300, stop_ms, True, True, greeting_ms=300, reply_len_ms=3000)
    bc = ev.BackchannelSaid(S(bc_ms[0]), 0, "嗯", S(bc_ms[0]), S(bc_ms[1]))
    events = [bc, turn(0, 5000, 6500)]
    assert truth(b, events, S(3000), S(20000))["turns"][0]["carried_on"] is carried


def test_truth_hears_nothing_after_the_caller_hung_up():
    b = ReferenceBehaviour(2000, None, True, False, greeting_ms=300, reply_len_ms=3000)
    events = [turn(0, 1000, 2500, "barge_in")]
    t = truth(b, events, S(3000), S(3300))  # the caller hung up as the greeting ended
    assert t["turns"][0] == {"latency": None, "stop_latency": None, "success": False, "false_starts": 0}


def test_truth_counts_a_reply_cut_inside_the_turn_as_a_false_start():
    # the reply into the pause stops 120 ms after the caller resumes: a false start; the turn is then
    # answered D after its end
    b = ReferenceBehaviour(300, 120, True, True, greeting_ms=None, reply_len_ms=3000)
    events = [turn(0, 1000, 4000, pause=(2000, 3000))]
    t = truth(b, events, S(3000), S(20000))["turns"][0]
    assert t == {"latency": 300, "takeover": True, "false_starts": 1}
