"""``callsim fake-llm --role caller|policy|judge``: a scripted stand-in chat model, served over HTTP.

Not a model: an OpenAI-compatible server (:class:`voice.llm.scripted_server.StandInLLM`) that answers from a
script
or rules, for tests, CI and demos: it lets anyone run the paths that need a chat model — the reactive caller,
the built-in assistant's ``openai:`` policy, the LLM judge — with no weights and no key.  Each role's answers
are the ones CallSim's own tests use:

- ``caller``: the rule-played caller model (:mod:`voice.react.scripted_caller`): follows the script, asks
  again when
  the reply was not heard, hangs up on a goodbye or a wrong number;
- ``policy``: the rules policy answering as a chat model (:mod:`server.policy.scripted_llm`), hang-up marker
  and
  all, streamed when asked to stream;
- ``judge``: the same middle score for every turn and one fixed verdict
  (:mod:`voice.metrics.scoring.scripted_judge`), each reason saying it is a stand-in.

Kept apart from :mod:`voice.app.cli` so the command line stays thin; in the ``llm`` room, beside the stand-in
server it runs.  The roles' answers live above it (the caller's in ``react``, the policy's rules in the
server, the judge's in ``metrics``): :mod:`voice.app.cli`, the one room that sees all three, hands them in
(:func:`voice.app.cli.standin_answer`) when it registers the command.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from voice.errors import ConfigError

if TYPE_CHECKING:
    from voice.llm.scripted_server import Responder

EXIT_ERROR = 2  # as voice.app.cli's: usage or settings
DEFAULT_PORTS = {"caller": 8011, "policy": 8012, "judge": 8013}
USE = {  # how to point CallSim at each role, printed once it serves
    "caller": "callsim bench --caller openai:rules --caller-base-url {url}",
    "policy": "OPENAI_BASE_URL={url} callsim bench --policy openai:rules",
    "judge": "callsim score RUN --judge openai:rules --llm-base-url {url}",
}


def register(sub: Any, answers: Callable[[str], Responder]) -> None:
    """Add ``fake-llm`` to the ``callsim`` subcommands; ``answers(role)`` is that role's answer function."""
    f = sub.add_parser(
        "fake-llm",
        help="serve a scripted stand-in chat model (caller, policy or judge): for tests and demos",
        description="Serve a scripted, OpenAI-compatible stand-in for the caller's, the built-in policy's or"
        " the judge's chat model, so those paths run without a model or a key.  It plays rules, not a model:"
        " its answers say nothing about any real model.",
    )
    roles = sorted(DEFAULT_PORTS)
    f.add_argument("--role", required=True, choices=roles, help="which model it stands in for")
    f.add_argument(
        "--port",
        type=int,
        help="the port (default: 8011 caller, 8012 policy, 8013 judge; 0 picks a free one)",
    )
    f.add_argument("--host", default="127.0.0.1", help="the address to listen on (default %(default)s)")
    f.add_argument("--delay", type=float, default=0.0, help="seconds before every answer, as a slow model")
    f.set_defaults(func=cmd_fake_llm, answers=answers)


def cmd_fake_llm(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """Serve the role's stand-in until interrupted (or ``stop`` is set: tests); exit 2 if it cannot listen."""
    from voice.llm.scripted_server import StandInLLM

    if args.delay < 0:
        raise ConfigError(f"--delay {args.delay}: a number of seconds, 0 or more")
    answer = args.answers(args.role)
    port = DEFAULT_PORTS[args.role] if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: a port number, 0..65535 (0 picks a free one)")
    try:
        served = StandInLLM(host=args.host, port=port)
    except OSError as exc:
        said = exc.strerror or exc
        print(f"callsim fake-llm: error: cannot serve on {args.host}:{port}: {said}", file=sys.stderr)
        return EXIT_ERROR
    with served.respond(answer, delay_s=args.delay) as model:
        print(f"{args.role} stand-in (scripted, not a model) at {model.url}", flush=True)
        print("use it: " + USE[args.role].format(url=model.url), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            (stop or threading.Event()).wait()
    return 0
