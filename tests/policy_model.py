"""A stand-in chat model for the built-in assistant's ``--policy openai:MODEL``: the rules policy, served.

It answers each chat request of the LLM policy (``server/policy/llm.py``) with what the rules policy would
say: the preset is read back from the system prompt, the conversation replayed from the user messages,
the reply streamed clause by clause (server-sent events), and a hang-up marked with ``[挂断]``.  With it
the LLM policy's whole path — pipecat's OpenAI service, streaming, the reply gate, hang-ups — runs and is
measured without model weights (``python -m tests.policy_model --port 8012``, then
``OPENAI_BASE_URL=http://127.0.0.1:8012/v1 callsim bench --policy openai:rules``).  ``--delay`` holds every
piece back, as a slow model would.
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any

from server.policy.llm import HANG_UP
from server.policy.rules import RulePolicy
from tests.llm_fake import FakeLLM

_PRESET = re.compile(r"机主的(紧急|日常)预设：(.+)")


def answer(body: dict[str, Any]) -> str:
    """The reply the rules policy gives at this point of the conversation."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8012)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before the answer starts")
    args = parser.parse_args()
    with FakeLLM(port=args.port).respond(answer, delay_s=args.delay) as fake:
        print(f"policy model at {fake.url}", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
