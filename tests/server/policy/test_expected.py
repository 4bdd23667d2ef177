"""The replies known before a call begins: nearly every reply's first clause is among them."""

from server.policy import expected
from server.policy import keywords as kw
from server.policy.rules import RulePolicy


def test_the_first_clause_of_nearly_every_reply_is_known_before_the_caller_speaks() -> None:
    from server.processors import split_for_tts
    from voice.dialogues import bundled_dialogues_path, load_dialogues

    known = unknown = 0
    for d in load_dialogues(bundled_dialogues_path()):
        policy = RulePolicy(d.assistant_view())
        warm = {split_for_tts(t)[0] for t in policy.expected_replies()}
        assert split_for_tts(policy.greeting())[0] in warm
        for t in d.turns:
            reply = policy.respond(t.text) if t.role == "caller" else None
            if reply is not None and reply.text:
                first = split_for_tts(reply.text)[0]
                known, unknown = (known + 1, unknown) if first in warm else (known, unknown + 1)
    # the rest open with the caller's own words or a channel the preset names ("付款的事麻烦您发短信…")
    assert known >= 0.95 * (known + unknown)


def test_any_calls_replies_are_the_openings_then_the_declines() -> None:
    known = expected.any_call()
    assert known[: len(expected.OPENINGS)] == expected.OPENINGS
    assert all(reply in known for _, reply in kw.HARASSMENT) and len(set(known)) == len(known)
