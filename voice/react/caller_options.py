"""The ``--caller`` options of ``bench`` and ``run``; light to import (the parser is built on every call)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from voice.react.caller import ReactiveCaller


def add_caller_options(p: argparse.ArgumentParser) -> None:
    """``--caller`` and its settings, for ``bench`` and ``run``."""
    who = p.add_argument_group("the caller (default: scripted, the dialogue as written; docs/caller.md)")
    who.add_argument(
        "--caller",
        default="scripted",
        help="scripted, or openai:MODEL: a caller that listens and pursues its goal, played by any"
        " OpenAI-compatible chat model ($OPENAI_BASE_URL / $OPENAI_API_KEY or --caller-base-url)",
    )
    who.add_argument("--caller-base-url", help="the caller model's server (default $OPENAI_BASE_URL)")
    who.add_argument(
        "--persona",
        default="random",
        help="the reactive caller's manner: random (seeded per call; scammer for harassment), patient,"
        " impatient, talkative, terse, hesitant, scammer",
    )
    who.add_argument(
        "--caller-max-turns",
        type=int,
        default=0,
        help="caller turns per call before it hangs up (default: twice the script's, at least 6)",
    )


def caller_from_args(args: argparse.Namespace) -> ReactiveCaller | None:
    """The run's caller from the options of :func:`add_caller_options`."""
    from voice.react.caller import parse_caller

    return parse_caller(
        args.caller,
        persona=args.persona,
        max_turns=args.caller_max_turns,
        **({"base_url": args.caller_base_url} if args.caller_base_url else {}),
    )
