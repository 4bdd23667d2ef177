"""The --caller options of bench and run (the light module the parser imports)."""

import argparse

from voice.react.caller_options import add_caller_options, caller_from_args


def test_the_cli_options_make_the_caller():
    p = argparse.ArgumentParser()
    add_caller_options(p)
    assert caller_from_args(p.parse_args([])) is None
    args = p.parse_args(["--caller", "openai:qwen", "--persona", "hesitant", "--caller-max-turns", "9"])
    caller = caller_from_args(args)
    assert caller is not None and (caller.persona, caller.max_turns, caller.llm.model) == (
        "hesitant",
        9,
        "qwen",
    )
