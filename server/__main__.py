"""``python -m server``: run the built-in assistant on a websocket (what ``callsim serve`` and runs use)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from server.options import add_serve_options, settings_kwargs
from voice.errors import CallSimError


def run(args: argparse.Namespace) -> int:
    """Serve with parsed options (``callsim serve`` calls this too); 1 with a clear error on bad settings."""
    try:
        from server.app import run_server
        from server.config import AssistantSettings, parse_overrides
        from server.policy.plugins import load_policy_factory

        settings = AssistantSettings(**settings_kwargs(args), **parse_overrides(args.overrides))
        factory = load_policy_factory(
            args.policy, base_url=settings.policy_base_url, timeout_s=settings.policy_timeout_secs
        )
        run_server(settings, policy_factory=factory)
    except CallSimError as exc:
        print(f"callsim assistant: error: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m server", description="The built-in CallSim assistant.")
    add_serve_options(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
