"""The one policy protocol: ``heard`` reaches only a policy that takes it; rules and plain policies fit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voice.contract.policy import Policy, answer, takes_heard


@dataclass(frozen=True)
class Reply:
    text: str
    end_call: bool = False


class Plain:
    def greeting(self) -> str:
        return "您好"

    def respond(self, caller_text: str) -> Reply:
        return Reply(f"您说{caller_text}")


class Hearing(Plain):
    def __init__(self) -> None:
        self.heard: list[Any] = []

    def respond(self, caller_text: str, heard: dict[str, float] | None = None) -> Reply:  # type: ignore[override]
        self.heard.append(heard)
        return Reply("好的", end_call=True)


class Keywords(Plain):
    def respond(self, caller_text: str, **extra: Any) -> Reply:  # type: ignore[override]
        return Reply(str(sorted(extra)))


def test_a_plain_policy_is_answered_without_heard():
    policy: Policy = Plain()
    assert not takes_heard(policy)
    assert answer(policy, "外卖到了", {"avg_logprob": -1.2}) == Reply("您说外卖到了")


def test_heard_goes_to_a_policy_that_takes_it_or_any_keyword():
    policy = Hearing()
    figures = {"avg_logprob": -1.2, "no_speech_prob": 0.1}
    assert takes_heard(policy) and answer(policy, "喂", figures).end_call
    answer(policy, "喂")
    assert policy.heard == [figures, None]
    assert answer(Keywords(), "喂", None).text == "['heard']"


def test_a_respond_without_a_signature_gets_the_plain_call():
    class Builtin(Plain):
        respond = staticmethod(max)  # type: ignore[assignment]  # no inspectable signature in CPython

    assert not takes_heard(Builtin())


def test_the_rules_policy_speaks_the_protocol():
    from server.config import default_policy_factory

    policy = default_policy_factory({"preset": {"type": "regular", "text": "外卖放门口。"}})
    reply = answer(policy, "您好，您的外卖到了。", None)
    assert policy.greeting() and isinstance(reply.text, str) and isinstance(reply.end_call, bool)
