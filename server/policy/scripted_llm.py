"""The scripted stand-in for ``--policy openai:MODEL``: the rules policy, answering as a chat model would.

Not a model: a script for tests and demos.  It answers each chat request of the LLM policy
(:mod:`server.policy.llm_policy`, streamed by :mod:`server.policy.llm`) with what the rules policy would
say: the preset is read back from the system prompt, the conversation replayed from the user messages, and a
hang-up marked with ``[挂断]``.  With it the LLM policy's whole path — pipecat's OpenAI service, streaming
(the stand-in server streams a reply clause by clause when asked to), the reply gate, hang-ups — runs and is
measured without model weights: ``callsim fake-llm --role policy`` serves it (:mod:`voice.llm.fake_cli`).
"""

from __future__ import annotations

import re
from typing import Any

from server.policy.llm_policy import HANG_UP
from server.policy.rules import RulePolicy

_PRESET = re.compile(r"机主的(紧急|日常)预设：(.+)")  # as server.policy.llm_policy.system_prompt writes it


def answer(body: dict[str, Any]) -> str:
    """The reply the rules policy gives at this point of the conversation (a chat request's body)."""
    messages = body["messages"]
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    m = _PRESET.search(system)
    preset = {"type": {"紧急": "emergent", "日常": "regular"}[m.group(1)], "text": m.group(2)} if m else {}
    policy = RulePolicy({"preset": preset or {"type": "none", "text": ""}})
    reply = None
    for message in messages:
        if message["role"] == "user":
            reply = policy.respond(str(message["content"]))
    if reply is None:
        return policy.greeting()
    return reply.text + (HANG_UP if reply.end_call else "")
