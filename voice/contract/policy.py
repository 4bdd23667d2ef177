"""The dialogue policy interface: what the built-in assistant asks for a greeting and a reply, declared once.

Every policy the built-in assistant can run speaks it — the rules (``server.policy.rules.RulePolicy``),
``openai:MODEL`` (``server.policy.llm_policy.LLMPolicy``) and a user's own (``--policy module:callable``) —
and so does everything that drives one: the assistant's pipeline (``server.policy.processor``) and the
known replies a transcriber is measured on (:func:`voice.speech.known_replies.replay_policy`).  It lives
in the contract (``voice/contract/``) because both the server and ``voice.speech`` use it.

A policy is built once per call by a :data:`PolicyFactory` from the call's assistant view
(:class:`AssistantView`: ``id``, ``scenario``, ``preset``, ``owner_goal``; never the caller's goal).
``respond`` may also take the keyword ``heard``: the ASR's confidence in the turn (a dict of Whisper's
figures, :class:`Heard`, or None); :func:`answer` passes it only to a policy that takes it, so the plain
two-method protocol stays enough.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Protocol, TypedDict

__all__ = [
    "AssistantView", "Heard", "Policy", "PolicyFactory", "PolicyReply", "PresetView", "answer", "takes_heard",
]  # fmt: skip


class PresetView(TypedDict):
    """The owner's instruction as the assistant sees it: ``type`` regular, emergent or none (``text`` "")."""

    type: str
    text: str


class AssistantView(TypedDict):
    """What the assistant under test may know of a call (``voice.dialogues.Dialogue.assistant_view``): never
    the caller's goal, which would leak the answer key.  It travels as JSON in the call's ``start``, so a
    policy gets what came over the wire, as a plain dict: it must tolerate a malformed one."""

    id: str
    scenario: str
    preset: PresetView
    owner_goal: str


class Heard(TypedDict, total=False):
    """How sure the ASR was of a turn: Whisper's figures (``voice.speech.asr.Confidence``), each when known;
    the caller log's ``confidence`` on the wire."""

    avg_logprob: float  # mean token log-probability (0 is certain)
    no_speech_prob: float  # the probability that it held no speech
    compression_ratio: float  # the text's compression ratio (a repetition loop is high)


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


PolicyFactory = Callable[[AssistantView], Policy]
"""Builds one call's policy from the call's assistant view."""


def takes_heard(policy: Policy) -> bool:
    """Whether the policy's ``respond`` takes the ``heard`` keyword (the rules policy does)."""
    try:
        parameters = inspect.signature(policy.respond).parameters
    except (TypeError, ValueError):  # a callable without a signature: the plain protocol
        return False
    return "heard" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def answer(policy: Policy, caller_text: str, heard: Heard | None = None) -> PolicyReply:
    """``policy.respond(caller_text)``, with ``heard`` when the policy takes it."""
    if takes_heard(policy):
        return policy.respond(caller_text, heard=heard)  # type: ignore[call-arg]
    return policy.respond(caller_text)
