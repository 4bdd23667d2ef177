"""argparse's usage errors with the nearest option, subcommand or choice."""

import argparse

from voice.app.run.usage import option_names, subcommand, with_hint
from voice.errors import nearest


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="x")
    sub = p.add_subparsers(dest="command")
    b = sub.add_parser("bench")
    b.add_argument("--target")
    b.add_argument("--concurrency", type=int)
    b.add_argument("--audio", choices=["embed", "link", "none"])
    return p


def test_the_nearest_is_a_close_one_or_none():
    assert nearest("benh", ["bench", "run"]) == "bench"
    assert nearest("frobnicate", ["bench", "run"]) is None


def test_the_subcommand_is_found_in_the_command_line():
    p = parser()
    bench = subcommand(p, ["--x", "bench", "--targt", "y"])
    assert bench is not None and "--concurrency" in option_names(bench)
    assert subcommand(p, ["nothing"]) is None and subcommand(bench, ["bench"]) is None


def test_unknown_options_and_choices_get_a_did_you_mean_without_the_values():
    bench = subcommand(parser(), ["bench"])
    assert bench is not None
    said = with_hint("unrecognized arguments: --targt wss://u:p@h --concurency=3", bench)
    assert said.endswith("(did you mean --target (for --targt), --concurrency (for --concurency)?)")
    assert with_hint("unrecognized arguments: --targt", bench).endswith("(did you mean --target?)")
    assert with_hint("unrecognized arguments: --zzzzzz 1", bench) == "unrecognized arguments: --zzzzzz 1"
    said = with_hint(
        "argument --audio: invalid choice: 'embedd' (choose from 'embed', 'link', 'none')", bench
    )
    assert said.endswith("; did you mean 'embed'?")
    assert (
        with_hint("the following arguments are required: a", bench)
        == "the following arguments are required: a"
    )
