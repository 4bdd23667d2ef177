"""``--policy``: which dialogue policy the built-in assistant runs — the rules, or your own.

A policy is anything with ``greeting() -> str`` and ``respond(caller_text) -> reply`` (a reply has ``text``
and ``end_call``): the :class:`~voice.contract.policy.Policy` protocol.  The built-in assistant
builds one per call from the call's assistant view (``id``, ``scenario``, ``preset``, ``owner_goal``: never
the caller's goal) through a *factory*.  ``--policy rules`` (the default) is the rules policy;
``--policy openai:MODEL`` a chat model (:mod:`server.policy.llm_policy`, streamed on live calls);
``--policy package.module:name`` imports ``name`` from ``package.module`` (importable from the current
directory or ``PYTHONPATH``) and uses it as the factory: a class whose constructor takes the view works as
is.  ``docs/example_policy.py`` is a complete one.  The pipeline around it — VAD, Whisper, turn-taking,
TTS, barge-in handling, hang-up — stays the built-in's, so the same measurements apply.
"""

from __future__ import annotations

import importlib
from typing import Any

from server.config import default_policy_factory
from server.policy.llm_policy import LLMPolicyFactory
from voice.contract.policy import AssistantView, PolicyFactory
from voice.errors import ConfigError

POLICIES = ("rules", "openai:MODEL", "module:callable")


def load_policy_factory(spec: str, *, base_url: str = "", timeout_s: float = 10.0) -> PolicyFactory:
    """The factory named by ``spec``: ``rules``, ``openai:MODEL`` (on ``base_url``, "" for
    ``$OPENAI_BASE_URL``; ``timeout_s`` per reply) or ``module:callable``.  A ConfigError says what is
    wrong."""
    if spec == "rules":
        return default_policy_factory
    if spec.startswith("openai:"):
        return LLMPolicyFactory(spec, base_url=base_url, timeout_s=timeout_s)
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            f"--policy {spec!r}: rules (the default), openai:MODEL or module:callable,"
            " e.g. my_bot.policy:Policy"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"--policy {spec!r}: cannot import {module_name!r}: {exc}") from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"--policy {spec!r}: {module_name} has no callable {attr!r}")
    return _checked(factory, spec)


def _checked(factory: Any, spec: str) -> PolicyFactory:
    """The factory, refusing at the first call a product that is not a policy (a clear error, not a crash)."""

    def make(view: AssistantView) -> Any:
        policy = factory(view)
        missing = [m for m in ("greeting", "respond") if not callable(getattr(policy, m, None))]
        if missing:
            raise ConfigError(
                f"--policy {spec!r} made {type(policy).__name__}, which lacks {', '.join(missing)}()"
            )
        return policy

    return make
