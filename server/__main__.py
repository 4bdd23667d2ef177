"""``python -m server``: run the built-in assistant on a websocket (what ``callsim serve`` and runs use)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from server.serve_options import add_serve_options, settings_from_args
from voice.errors import CallSimError, ConfigError


def run(args: argparse.Namespace) -> int:
    """Serve with parsed options (``callsim serve`` calls this too).

    2 with a one-line error for bad settings (a ``--set`` pair, a value out of range), as for any bad
    option; 1 when serving itself fails (the port is taken, a model is missing).
    """
    try:
        settings = settings_from_args(args)
        from server.policy.plugins import load_policy_factory

        factory = load_policy_factory(
            args.policy,
            base_url=settings.policy.policy_base_url,
            timeout_s=settings.policy.policy_timeout_secs,
        )
    except ConfigError as exc:
        print(f"callsim assistant: error: {exc}", file=sys.stderr)
        return 2
    try:
        from server.app import run_server

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
