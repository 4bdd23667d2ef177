"""``--config callsim.toml``: every option from a file, the command line over it, every problem located.

Also the documents of the file (docs/config.md, docs/ci.md): every key documented with its flag, every
``callsim`` command line in them parses, every TOML example loads.
"""

import argparse
import re
import shlex
from pathlib import Path

import pytest

from voice.app.cli import EXIT_ERROR, build_parser, main
from voice.app.run.checks import check_call_options
from voice.app.run.config_file import (
    FILE_ONLY,
    NOT_IN_FILE,
    TABLES,
    apply_config,
    dest,
    key_lines,
    load_config,
    located,
)
from voice.app.run.usage import option_names
from voice.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "docs" / "config.md", ROOT / "docs" / "ci.md"]


def command(name):
    return build_parser()._subparsers._group_actions[0].choices[name]


def merged(tmp_path, text, *argv, name="bench"):
    """``callsim NAME --config FILE ARGV...`` parsed with the file, as ``main`` does."""
    path = tmp_path / "callsim.toml"
    path.write_text(text, encoding="utf-8")
    parser = build_parser()
    full = [name, "--config", str(path), *argv]
    args = parser.parse_args(full)
    args.argv = full
    return apply_config(parser, args)


def problems(tmp_path, text):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path, command("bench"))
    return str(refused.value).splitlines()


@pytest.mark.parametrize("name", ["bench", "run"])
def test_every_option_of_bench_and_run_has_one_key_and_its_dest(name):
    parser = command(name)
    keyed = [o for keys in TABLES.values() for o in keys.values()]
    assert sorted(keyed) == sorted(set(keyed)), "an option set by two keys"
    assert sorted(keyed) == sorted(set(option_names(parser)) - set(NOT_IN_FILE))
    for option in keyed:
        assert parser._option_string_actions[option].dest == dest(option)


def test_the_files_values_become_the_options_and_the_command_line_wins(tmp_path):
    text = """
[assistant]
target = "pcm+ws://127.0.0.1:9/pcm"
wait-for-target = 30

[dialogues]
limit = 2
scenario = ["taxi", "work"]

[caller]
seed = 7

[line]
band-limit = true
jitter-ms = 20

[gates]
max-failed = 2
fail-if = ["latency_p90_ms>1500"]
"""
    args = merged(tmp_path, text)
    assert args.target == ["pcm+ws://127.0.0.1:9/pcm"] and args.wait_for_target == 30.0
    assert (args.limit, args.scenario, args.seed) == (2, ["taxi", "work"], 7)
    assert (args.band_limit, args.jitter_ms, args.max_failed) == ("on", 20.0, "2")
    assert args.fail_if == ["latency_p90_ms>1500"] and args.out == "recordings/bench"  # a default kept
    args = merged(
        tmp_path, text, "--limit", "1", "--target", "builtin", "--fail-if", "served_rate<1", "--seed=0"
    )
    assert (args.limit, args.target, args.fail_if, args.seed) == (1, ["builtin"], ["served_rate<1"], 0)
    assert args.scenario == ["taxi", "work"]  # a list not typed stays the file's
    assert "--seed" not in args.config_places
    assert args.config_places["--jitter-ms"].endswith(": line.jitter-ms")
    # run's own defaults (one at a time, six dialogues) give way to the file as bench's do
    args = merged(tmp_path, "[dialogues]\nlimit = 3\n[run]\nconcurrency = 2\n", name="run")
    assert (args.limit, args.concurrency, args.out) == (3, 2, "recordings/latest")


def test_fresh_is_for_the_command_line_only_and_excludes_retry_failed_from_the_file(tmp_path):
    """A file that set fresh would make the rerun CallSim advises ("a rerun resumes") delete the run."""
    (said,) = problems(tmp_path, "[run]\nfresh = true\n")
    assert said.startswith(f"{tmp_path / 'c.toml'}:2: run.fresh: --fresh deletes the earlier calls")
    with pytest.raises(ConfigError, match=r"choose one \(--fresh, .*:2: run.retry"):
        merged(tmp_path, "[run]\nretry-failed = true\n", "--fresh")


def test_a_secret_redacted_in_settings_toml_is_refused_not_sent(tmp_path):
    (said,) = problems(tmp_path, '[assistant]\nheader = ["Authorization: ***"]\n')
    assert said.startswith(f"{tmp_path / 'c.toml'}:2: assistant.header: holds '***'") and "${VAR}" in said


def test_a_byte_order_mark_is_not_toml(tmp_path):
    (tmp_path / "c.toml").write_bytes("\ufeff[dialogues]\nlimit = 2\n".encode())
    assert load_config(tmp_path / "c.toml", command("bench")).values["--limit"] == 2


def test_every_problem_is_said_at_once_with_its_line_and_the_nearest_name(tmp_path):
    text = """limit = 3
[assistant]
wait_for_target = 3
assistant-set = ["a=1"]

[dialogs]
x = 1

[dialogues]
repeats = "2"
persona = "patient"
dialogues = "d.jsonl"
all = 1

[line]
band-limit = "maybe"
kind = "openai:m"
"""
    path = tmp_path / "c.toml"
    assert problems(tmp_path, text) == [
        f"{path}:1: limit: every key goes in its table: --limit is dialogues.limit",
        f"{path}:3: assistant.wait_for_target: unknown key (did you mean wait-for-target? [assistant] takes"
        " target, header, request-data, ice-server, jitter-buffer-ms, wait-for-target, policy, set, tts,"
        " sip-user, sip-password)",
        f"{path}:4: assistant.assistant-set: unknown key: --assistant-set is assistant.set",
        f"{path}:6: [dialogs]: unknown table (did you mean [dialogues]? the tables: assistant, dialogues,"
        " caller, line, scoring, gates, output, run)",
        f"{path}:10: dialogues.repeats: takes a whole number (--repeats), not a string",
        f"{path}:11: dialogues.persona: unknown key: --persona is caller.persona",
        f"{path}:12: dialogues.dialogues: unknown key: --dialogues is dialogues.file",
        f"{path}:13: dialogues.all: takes true or false (--all), not a whole number",
        f"{path}:16: line.band-limit: 'maybe': choose one of on, off (--band-limit)",
        f"{path}:17: line.kind: unknown key: kind belongs in [caller]",
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[caller]\nseed = 1.5\n", "caller.seed: takes a whole number (--seed), not a number"),
        ("[caller]\nseed = true\n", "caller.seed: takes a whole number (--seed), not true/false"),
        ('[line]\nloss = "0.1"\n', "line.loss: takes a number (--loss), not a string"),
        (
            "[gates]\nfail-if = [1]\n",
            "gates.fail-if: takes a string or a list of strings (--fail-if), not a list",
        ),
        ('[output]\naudio = "embedd"\n', "'embedd': choose one of embed, link, none (--audio); did you"),
        ("[output]\nout = {a = 1}\n", "output.out: takes a string (--out), not a table"),
        ("[output]\nout = 1979-05-27\n", "output.out: takes a string (--out), not a date or time"),
        ("caller = 3\n", "caller: a table ([caller] and its keys below it) (--caller is caller.kind)"),
        ("frobnicate = 1\n", "frobnicate: unknown key, outside any table (the tables: assistant,"),
        ('[line]\ntts = "edge"\n', "line.tts: unknown key: --tts is caller.tts"),
        ('[line]\nset = ["a=1"]\n', "line.set: unknown key: set belongs in [assistant]"),
    ],
)
def test_a_value_of_the_wrong_kind_is_named_in_tomls_words(tmp_path, text, says):
    [said] = problems(tmp_path, text)
    assert says in said and not re.search(r"\b(NoneType|str|int|dict)\b|<class", said)


def test_a_file_that_is_not_toml_or_not_there_is_one_line_naming_it(tmp_path):
    assert problems(tmp_path, "[assistant]\ntarget = = 1\n") == [
        f"{tmp_path / 'c.toml'}:2: not valid TOML: invalid value (column 10)"
    ]
    (tmp_path / "c.toml").write_bytes(b"[caller]\nkind = '\xff'\n")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_config(tmp_path / "c.toml", command("bench"))
    with pytest.raises(ConfigError, match=r"no such file \(`callsim init` writes a starter\)"):
        load_config(tmp_path / "none.toml", command("bench"))
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(tmp_path, command("bench"))


def test_key_lines_finds_tables_dotted_keys_and_skips_values():
    text = '# a\n[dialogues]\nlimit = 1\nids = [\n  "a=b",\n]\n[caller]\nline.jitter-ms = 2\n'
    lines = key_lines(text)
    assert lines[("dialogues",)] == 2 and lines[("dialogues", "limit")] == 3
    assert lines[("caller", "line", "jitter-ms")] == 8 and ("dialogues", '"a') not in lines


def test_a_value_the_checks_refuse_names_its_line_and_nothing_is_made(tmp_path, capsys):
    path = tmp_path / "callsim.toml"
    out = tmp_path / "out"
    path.write_text(f'[dialogues]\nlimit = -2\n[output]\nout = "{out}"\n', encoding="utf-8")
    assert main(["bench", "--config", str(path)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"callsim: error: {path}:2: dialogues.limit: --limit -2: takes a whole number from 1" in err
    assert not out.exists()
    assert main(["bench", "--config", str(path), "--limit", "-3"]) == EXIT_ERROR  # typed: no line to name
    assert "callsim: error: --limit -3: takes" in capsys.readouterr().err
    path.write_text('[caller]\npersona = "patient"\n[scoring]\njudge = "gpt4"\n', encoding="utf-8")
    assert main(["run", "--config", str(path), "--judge", "checklist"]) == EXIT_ERROR
    assert f"{path}:2: caller.persona: --persona: for the reactive caller only" in capsys.readouterr().err
    path.write_text('[dialogues]\nscenario = "pizza"\n', encoding="utf-8")
    assert main(["run", "--config", str(path), "--tts", "memory", "--no-transcribe"]) == EXIT_ERROR
    assert f"{path}:2: dialogues.scenario: --scenario: unknown value(s) pizza" in capsys.readouterr().err


def test_located_leaves_other_errors_as_they_are():
    args = argparse.Namespace(config_places={"--limit": "c.toml:2: dialogues.limit"})
    with pytest.raises(ConfigError, match=r"^--junit x: is a folder$"), located(args):
        raise ConfigError("--junit x: is a folder")


# --- a SIP target's settings: the credentials from the file or the environment, never a flag -------------

SIP_FILE = """
[assistant]
target = "sip:bot@127.0.0.1:5070"
jitter-buffer-ms = 120
sip-user = "callsim"
sip-password = "${CALLSIM_TEST_PBX_SECRET}"
"""


def test_the_sip_keys_set_the_credentials_and_the_jitter_buffer_under_the_command_line(tmp_path, monkeypatch):
    monkeypatch.setenv("CALLSIM_TEST_PBX_SECRET", "s3cret-file")
    monkeypatch.setenv("CALLSIM_SIP_USER", "env-user")
    monkeypatch.setenv("CALLSIM_SIP_PASSWORD", "s3cret-env")
    args = merged(tmp_path, SIP_FILE, "--out", str(tmp_path / "o"))
    assert (args.jitter_buffer_ms, args.sip_user) == (120, "callsim")
    assert args.sip_password == "${CALLSIM_TEST_PBX_SECRET}"  # the reference: read when checked, not kept
    assert args.config_places["sip-password"].endswith(":6: assistant.sip-password")
    sip = check_call_options(args).sip  # the file over the environment
    assert (sip.user, sip.password, sip.jitter_buffer_ms) == ("callsim", "s3cret-file", 120)
    args = merged(tmp_path, SIP_FILE, "--jitter-buffer-ms", "40", "--out", str(tmp_path / "o"))
    assert check_call_options(args).sip.jitter_buffer_ms == 40  # the command line over the file
    bare = '[assistant]\ntarget = "sip:bot@127.0.0.1:5070"\n'
    sip = check_call_options(merged(tmp_path, bare, "--out", str(tmp_path / "o"))).sip
    assert (sip.user, sip.password, sip.jitter_buffer_ms) == ("env-user", "s3cret-env", 60)  # env, default


def test_a_sip_password_written_in_the_file_is_refused_naming_the_file_and_key_never_the_password(tmp_path):
    text = '[assistant]\nsip-user = "callsim"\nsip-password = "hunter2"\n'
    (said,) = problems(tmp_path, text)
    assert said.startswith(f"{tmp_path / 'c.toml'}:3: assistant.sip-password: a password written in the file")
    assert "${VAR}" in said and "hunter2" not in said
    for value in ('"Bearer ${X}"', '"${X}${Y}"', '"$X"'):  # a reference and nothing else
        (said,) = problems(tmp_path, f"[assistant]\nsip-password = {value}\n")
        assert "a password written in the file" in said and value.strip('"') not in said


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[assistant]\nsip-user = 7\n", "assistant.sip-user: takes a string (sip-user), not a whole number"),
        ('[assistant]\nsip-user = ""\n', "assistant.sip-user: takes a string that is not empty"),
        ('[assistant]\njitter-buffer-ms = "60"\n', "takes a whole number (--jitter-buffer-ms), not a string"),
        ('[line]\nsip-user = "callsim"\n', "line.sip-user: unknown key: sip-user belongs in [assistant]"),
        ('[assistant]\nsip_password = "${X}"\n', "unknown key (did you mean sip-password?"),
        ('sip-user = "callsim"\n', "sip-user: every key goes in its table: sip-user is assistant.sip-user"),
        ('[assistant]\nsip-password = "***"\n', "assistant.sip-password: holds '***'"),
    ],
)
def test_a_sip_key_of_the_wrong_kind_or_place_is_named(tmp_path, text, says):
    [said] = problems(tmp_path, text)
    assert says in said


def test_a_sip_value_the_checks_refuse_names_its_line(tmp_path, monkeypatch):
    monkeypatch.delenv("CALLSIM_TEST_PBX_SECRET", raising=False)
    with pytest.raises(ConfigError) as refused, located(args := merged(tmp_path, SIP_FILE, "--out", "o")):
        check_call_options(args)
    assert str(refused.value) == (
        f"{tmp_path / 'callsim.toml'}:6: assistant.sip-password: sip-password: the environment variable"
        " CALLSIM_TEST_PBX_SECRET is not set (or empty)"
    )
    text = SIP_FILE.replace("120", "5")
    with pytest.raises(ConfigError) as refused, located(args := merged(tmp_path, text, "--out", "o")):
        check_call_options(args)
    assert str(refused.value).startswith(
        f"{tmp_path / 'callsim.toml'}:4: assistant.jitter-buffer-ms: --jitter-buffer-ms 5: takes a whole"
    )


# --- the documents ------------------------------------------------------------------------------------------


def test_docs_config_lists_every_key_with_its_flag():
    rows = re.findall(r"^\| `(\w+)` \| `([\w-]+)` \| `(--[\w-]+)` \|", DOCS[0].read_text(), re.M)
    assert rows == [(t, k, o) for t, keys in TABLES.items() for k, o in keys.items()]
    flagless = re.findall(r"^\| `(\w+)` \| `([\w-]+)` \| - \(no flag\) \|", DOCS[0].read_text(), re.M)
    assert flagless == [(t, k) for t, keys in FILE_ONLY.items() for k in keys]


def code_blocks(text, language):
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)


def callsim_lines(text):
    """Every ``callsim`` command line in the code blocks and code spans of a page (continuations joined)."""
    found = []
    for block in code_blocks(text, r"\w*"):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"^\s*(?:- |run: )?", "", line)
            if line.startswith("callsim "):
                found.append(line)
    spans = re.findall(r"(?<!`)`(callsim [^`]+)`", text)
    return found + [s for s in spans if len(s.split()) > 2]  # `callsim compare` alone names a command


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_callsim_line_in_the_docs_parses(page):
    lines = callsim_lines(page.read_text(encoding="utf-8"))
    assert len(lines) >= 3
    for line in lines:
        words = shlex.split(line, comments=True)[1:]
        try:
            build_parser().parse_args(words)
        except SystemExit as exit_:
            assert exit_.code == 0 and words[-1] in ("--version", "--help"), line


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_toml_example_in_the_docs_loads(page, tmp_path):
    blocks = code_blocks(page.read_text(encoding="utf-8"), "toml")
    assert blocks
    for block in blocks:
        (tmp_path / "c.toml").write_text(block, encoding="utf-8")
        assert load_config(tmp_path / "c.toml", command("bench")).values
