""" "Did you mean …?" for argparse's usage errors: an unknown option, subcommand or choice names the nearest.

argparse (Python 3.11) says ``unrecognized arguments: --targt x`` under the *top-level* usage, which does not
even list the subcommand's options, and ``invalid choice: 'benh'`` without a guess.  A newcomer then reads
the whole ``--help``; one close name (:mod:`difflib`, as Python 3.12+ does for choices) is usually all it
takes.  Only option names and choices are added to a message, never a value typed after them.
:class:`RedactingParser`, the parser of every ``callsim`` command, hides credentials in those messages.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from voice.errors import nearest

UNRECOGNIZED = "unrecognized arguments: "
_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)")


def option_names(parser: argparse.ArgumentParser) -> list[str]:
    """Every ``--option`` the parser takes (long forms: the ones typed wrong)."""
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]


def subcommand(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser | None:
    """The parser of the subcommand named in ``argv`` (its first word that is one), if the parser has any."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            choices: dict[str, argparse.ArgumentParser] = action.choices
            return next((choices[w] for w in argv if w in choices), None)
    return None


def with_hint(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` with "did you mean …?" for each unknown option or invalid choice that has a near one."""
    if message.startswith(UNRECOGNIZED):
        known = option_names(parser)
        typed = [w.split("=", 1)[0] for w in message[len(UNRECOGNIZED) :].split() if w.startswith("--")]
        pairs = [(t, n) for t in typed if (n := nearest(t, known)) is not None]
        if pairs:
            said = ", ".join(n if len(pairs) == 1 else f"{n} (for {t})" for t, n in pairs)
            return f"{message} (did you mean {said}?)"
        return message
    match = _CHOICE.search(message)
    if match is not None:
        guess = nearest(match["given"], re.findall(r"'([^']*)'", match["choices"]))
        if guess is not None:
            return f"{message}; did you mean {guess!r}?"
    return message


class RedactingParser(argparse.ArgumentParser):
    """argparse, whose usage errors never print a ``--header`` value or a URL's credentials.

    argparse quotes the command line in its errors (``unrecognized arguments: --targt wss://u:p@bot``); the
    subcommands' parsers are of this class too (``add_subparsers`` makes them of the parent's class).
    """

    _argv: Sequence[str] | None = None

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        """The error under the subcommand's usage (its options, not the top level's), with the nearest
        option or choice (:func:`with_hint`)."""
        from voice.lines.redact import redact_arguments

        argv = sys.argv[1:] if self._argv is None else self._argv
        sub = subcommand(self, argv)
        if sub is not None and message.startswith(UNRECOGNIZED):
            sub.error(message)
        super().error(redact_arguments(with_hint(message, self), argv))
