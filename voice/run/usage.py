""" "Did you mean …?" for argparse's usage errors: an unknown option, subcommand or choice names the nearest.

argparse (Python 3.11) says ``unrecognized arguments: --targt x`` under the *top-level* usage, which does not
even list the subcommand's options, and ``invalid choice: 'benh'`` without a guess.  A newcomer then reads
the whole ``--help``; one close name (:mod:`difflib`, as Python 3.12+ does for choices) is usually all it
takes.  Only option names and choices are added to a message, never a value typed after them.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence

UNRECOGNIZED = "unrecognized arguments: "
_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)")


def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` if any is close enough to be a typo of it."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


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
