"""The dialogue policy interface: what the built-in assistant asks for a greeting and a reply, declared once.

Every policy the built-in assistant can run speaks it — the rules (``server.policy.rules.RulePolicy``),
``openai:MODEL`` (``server.policy.llm_policy.LLMPolicy``) and a user's own (``--policy module:callable``) —
and so does everything that drives one: the assistant's pipeline (``server.policy.processor``) and the
known replies a transcriber is measured on (:func:`voice.speech.known_replies.replay_policy`).  It lives
in the contract (``voice/contract/``) because both the server and ``voice.speech`` use it.

A policy is built once per call by a :data:`PolicyFactory` from the call's assistant view (``id``,
``scenario``, ``preset``, ``owner_goal``; never the caller's goal).  ``respond`` may also take the keyword
``heard``: the ASR's confidence in the turn (a dict of Whisper's figures, or None); :func:`answer` passes it
only to a policy that takes it, so the plain two-method protocol stays enough.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Protocol

__all__ = ["Policy", "PolicyFactory", "PolicyReply", "answer", "takes_heard"]


class PolicyReply(Protocol):
    """One reply: what to say (empty: nothing, the caller keeps the floor) and whether to hang up after."""

    @property
    def text(self) -> str: ...

    @property
    def end_call(self) -> bool: ...


class Policy(Protocol):
    """A dialogue policy: the opening line, then one reply per finished caller turn."""

    def greeting(self) -> str: ...

    def respond(self, caller_text: str) -> PolicyReply:
        """The reply to a turn; a policy may also take ``heard``, the ASR's confidence (module docstring)."""
        ...


PolicyFactory = Callable[[Mapping[str, Any]], Policy]
"""Builds one call's policy from the call's assistant view."""


def takes_heard(policy: Policy) -> bool:
    """Whether the policy's ``respond`` takes the ``heard`` keyword (the rules policy does)."""
    try:
        parameters = inspect.signature(policy.respond).parameters
    except (TypeError, ValueError):  # a callable without a signature: the plain protocol
        return False
    return "heard" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def answer(policy: Policy, caller_text: str, heard: Mapping[str, float] | None = None) -> PolicyReply:
    """``policy.respond(caller_text)``, with ``heard`` when the policy takes it."""
    if takes_heard(policy):
        return policy.respond(caller_text, heard=heard)  # type: ignore[call-arg]
    return policy.respond(caller_text)
