"""callsim init: a starter callsim.toml that loads as written, lists every key, and never overwrites."""

import json
import re

from tests.records import short_delivery
from tests.ws_fake import FakeServer
from voice.app.cli import EXIT_ERROR, build_parser, main
from voice.app.run.config_file import FILE_ONLY, TABLES, apply_config, load_config
from voice.app.run.init_cli import STARTER, starter


def bench_parser():
    return build_parser()._subparsers._group_actions[0].choices["bench"]


def keys_by_table(text):
    """(table, key) of every key line of the starter, set or commented out."""
    found, table = [], None
    for line in text.splitlines():
        if header := re.match(r"\[(\w+)\]", line):
            table = header[1]
        elif key := re.match(r"(?:# )?([a-z-]+) = ", line):
            found.append((table, key[1]))
    return found


def test_the_starter_shows_every_key_in_its_table_once():
    listed = keys_by_table(STARTER)
    every = [(t, k) for t, keys in TABLES.items() for k in keys] + [
        (t, k) for t, ks in FILE_ONLY.items() for k in ks
    ]
    assert sorted(listed) == sorted(every)


def test_the_starter_loads_as_written_and_with_every_key_uncommented(tmp_path, capsys):
    path = tmp_path / "callsim.toml"
    assert main(["init", "--target", "ws://127.0.0.1:8765/pcm", "--out", str(path)]) == 0
    assert f"callsim bench --config {path}" in capsys.readouterr().out
    values = load_config(path, bench_parser()).values
    assert values["--target"] == ["ws://127.0.0.1:8765/pcm"]
    assert (values["--limit"], values["--wait-for-target"], values["--out"]) == (6, 30.0, "recordings/bench")
    every = re.sub(r"^# ([a-z-]+ = )", r"\1", path.read_text(encoding="utf-8"), flags=re.M)
    path.write_text(every, encoding="utf-8")
    every = sum(len(keys) for keys in TABLES.values()) + sum(len(keys) for keys in FILE_ONLY.values())
    assert len(load_config(path, bench_parser()).values) == every


def test_without_a_target_it_calls_the_built_in_assistant(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    parser = build_parser()
    argv = ["run", "--config", "callsim.toml"]
    args = parser.parse_args(argv)
    args.argv = argv
    assert apply_config(parser, args).target == ["builtin"]


def test_it_never_overwrites_without_force_and_refuses_what_it_cannot_write(tmp_path, capsys):
    path = tmp_path / "callsim.toml"
    path.write_text("# mine\n", encoding="utf-8")
    assert main(["init", "--out", str(path)]) == EXIT_ERROR
    assert f"callsim: error: {path} exists; --force overwrites it" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "# mine\n"
    assert main(["init", "--out", str(path), "--force", "--target", "twilio+ws://127.0.0.1:9/tw"]) == 0
    assert 'target = "twilio+ws://127.0.0.1:9/tw"' in path.read_text(encoding="utf-8")
    assert main(["init", "--out", str(tmp_path)]) == EXIT_ERROR
    assert "is a folder" in capsys.readouterr().err
    assert main(["init", "--out", str(tmp_path / "x.toml"), "--target", "http://bot/x"]) == EXIT_ERROR
    assert "callsim: error: --target: " in capsys.readouterr().err and not (tmp_path / "x.toml").exists()


def test_a_url_with_credentials_is_refused_without_showing_them(tmp_path, capsys):
    out = tmp_path / "x.toml"
    assert main(["init", "--out", str(out), "--target", "wss://me:pw@bot/x?token=abc"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "holds credentials" in err and "${CALLSIM_TARGET_TOKEN}" in err
    assert not any(secret in err for secret in ("me:pw", "abc")) and not out.exists()


def test_a_quote_in_the_url_cannot_break_the_file():
    text = starter('ws://127.0.0.1:9/a"b')
    assert 'target = "ws://127.0.0.1:9/a\\"b"' in text


def test_init_then_bench_with_the_file_calls_the_bot(tmp_path, capsys, monkeypatch):
    """The two commands a newcomer types, against a bot on localhost (the caller's voice made in memory)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text(json.dumps(short_delivery("k-0"), ensure_ascii=False) + "\n")
    with FakeServer().running() as bot:
        assert main(["init", "--target", bot.target]) == 0
        fast = ["--tts", "memory", "--no-transcribe", "--no-report", "--dialogues", "d.jsonl"]
        assert main(["bench", "--config", "callsim.toml", *fast, "--junit", "out.xml"]) == 0
    assert "junit: out.xml" in capsys.readouterr().out
    run = json.loads((tmp_path / "recordings" / "bench" / "results.json").read_text())
    assert run["targets"][0]["target"] == bot.target and run["targets"][0]["summary"]["calls_failed"] == 0
    assert (tmp_path / "out.xml").read_text().count("<testcase") == 2  # the call and --max-failed 0
