"""settings.toml: a run's options written into its folder, without secrets, as a file --config reads back."""

import argparse
import json
import math
import tomllib

import pytest

from tests.records import short_delivery
from tests.ws_fake import FakeServer
from voice.app.cli import build_parser, main
from voice.app.run.config_file import TABLES, apply_config, dest, load_config
from voice.app.run.settings_file import SETTINGS_FILE, settings_toml, shown_header, toml_value
from voice.errors import ConfigError


def bench_parser():
    return build_parser()._subparsers._group_actions[0].choices["bench"]


@pytest.mark.parametrize(
    "value",
    [True, 0, -3, 0.1, 1e-300, math.inf, -math.inf, "", 'say "hi"\\ \n\t\x01', "喂，你好", ["a", "b"], []],
)
def test_every_value_reads_back_as_written(value):
    [(_, back)] = tomllib.loads(f"x = {toml_value(value)}").items()
    assert back == value and type(back) is type(value)
    assert math.isnan(tomllib.loads(f"x = {toml_value(math.nan)}")["x"])


def test_a_header_value_is_kept_only_when_it_is_only_environment_references():
    assert shown_header("Authorization: Bearer ${CALLSIM_TARGET_TOKEN}") == (
        "Authorization: Bearer ${CALLSIM_TARGET_TOKEN}"
    )
    assert shown_header("X-Key:${A}${B}") == "X-Key: ${A}${B}"
    assert shown_header("X-Key: hunter2") == "X-Key: ***"
    assert shown_header("Authorization: Bearer abc${X}") == "Authorization: ***"
    assert shown_header("no colon") == "***"


def test_the_resolved_options_read_back_as_the_same_options_but_the_secrets(tmp_path):
    argv = [
        "bench", "--target", "pcm+ws://me:pw@bot:1/x?token=abc", "--header", "X-Key: hunter2",
        "--header", "Authorization: Bearer ${T}", "--limit", "2", "--fresh", "--fail-if", "served_rate<1",
        "--jitter-ms", "20", "--out", str(tmp_path / "o"),
    ]  # fmt: skip
    args = build_parser().parse_args(argv)
    text = settings_toml(args)
    assert not any(secret in text for secret in ("hunter2", "me:pw", "abc"))
    assert "bench --config" in text and "fresh" not in text.split("\n", 2)[2]  # only in the header lines
    assert 'target = ["pcm+ws://***@bot:1/x?token=***"]' in text
    assert 'header = ["X-Key: ***", "Authorization: Bearer ${T}"]' in text
    path = tmp_path / SETTINGS_FILE
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:  # read back as is, a redacted secret is refused, not sent
        load_config(path, bench_parser())
    assert [line.split(": ")[1] for line in str(refused.value).splitlines()] == [
        "assistant.target", "assistant.header",
    ]  # fmt: skip
    path.write_text("\n".join(x for x in text.splitlines() if "***" not in x), encoding="utf-8")
    values = load_config(path, bench_parser()).values
    options = [o for keys in TABLES.values() for o in keys.values()]
    written = {o: getattr(args, dest(o)) for o in options if getattr(args, dest(o)) not in (None, [])}
    assert values.keys() == written.keys() - {"--retry-failed", "--target", "--header"}
    assert values == {o: written[o] for o in values}


def test_a_run_writes_its_settings_and_a_rerun_from_them_resumes(tmp_path, capsys):
    data, out = tmp_path / "d.jsonl", tmp_path / "run"
    data.write_text(json.dumps(short_delivery("k-0"), ensure_ascii=False) + "\n", encoding="utf-8")
    config = tmp_path / "callsim.toml"
    with FakeServer().running() as bot:
        config.write_text(
            f'[assistant]\ntarget = "{bot.target}"\n[dialogues]\nfile = "{data}"\n[caller]\ntts = "memory"\n'
            f'[scoring]\nno-transcribe = true\n[output]\nno-report = true\nout = "{out}"\n',
            encoding="utf-8",
        )
        assert main(["bench", "--config", str(config), "--seed", "3"]) == 0
        settings = out / SETTINGS_FILE
        written = tomllib.loads(settings.read_text(encoding="utf-8"))
        assert written["caller"]["seed"] == 3 and written["assistant"]["target"] == [bot.target]
        assert written["dialogues"]["file"] == str(data) and not list(out.glob(".settings.toml.*"))
        capsys.readouterr()
        assert main(["bench", "--config", str(settings)]) == 0
    assert "resuming: kept 1 finished call(s)" in capsys.readouterr().err
    assert tomllib.loads(settings.read_text(encoding="utf-8")) == written


def test_options_not_set_are_left_out():
    args = argparse.Namespace(out="o", command="run", judge=None, limit=6, target=None)
    text = settings_toml(args)
    assert "callsim run --config o/settings.toml" in text
    assert tomllib.loads(text) == {"dialogues": {"limit": 6}, "output": {"out": "o"}}


def test_a_webrtc_targets_settings_are_written_without_a_turn_secret(tmp_path):
    argv = [
        "bench", "--target", "webrtc+http://127.0.0.1:7860/api/offer", "--request-data", '{"mode": "eval"}',
        "--ice-server", "stun:stun.example.org:3478", "--ice-server", "turn:alice:hunter2@turn.example.org",
        "--ice-server", "turn:bob:${TURN_SECRET}@turn.example.org", "--out", str(tmp_path / "o"),
    ]  # fmt: skip
    text = settings_toml(build_parser().parse_args(argv))
    assert "hunter2" not in text
    assert 'request-data = "{\\"mode\\": \\"eval\\"}"' in text
    assert (
        'ice-server = ["stun:stun.example.org:3478", "turn:alice:***@turn.example.org", '
        '"turn:bob:${TURN_SECRET}@turn.example.org"]'
    ) in text
    path = tmp_path / "c.toml"
    path.write_text(
        text.replace("turn:alice:***@turn.example.org", "stun:other.example.org"), encoding="utf-8"
    )
    loaded = load_config(path, bench_parser()).values  # what the file says comes back as the options
    assert loaded["--request-data"] == '{"mode": "eval"}'
    assert loaded["--ice-server"][-1] == "turn:bob:${TURN_SECRET}@turn.example.org"


def test_a_sip_targets_settings_are_written_with_the_passwords_reference_never_the_password(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CALLSIM_TEST_PBX_SECRET", "s3cret-pbx")
    config = tmp_path / "callsim.toml"
    config.write_text(
        '[assistant]\ntarget = "builtin+sip"\njitter-buffer-ms = 80\nsip-user = "callsim"\n'
        'sip-password = "${CALLSIM_TEST_PBX_SECRET}"\n',
        encoding="utf-8",
    )
    parser = build_parser()
    argv = ["bench", "--config", str(config), "--jitter-buffer-ms", "100", "--out", str(tmp_path / "o")]
    args = parser.parse_args(argv)
    args.argv = argv
    text = settings_toml(apply_config(parser, args))
    assert "s3cret-pbx" not in text
    written = tomllib.loads(text)["assistant"]
    assert (written["jitter-buffer-ms"], written["sip-user"]) == (100, "callsim")  # the command line's
    assert written["sip-password"] == "${CALLSIM_TEST_PBX_SECRET}"
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    loaded = load_config(path, bench_parser()).values  # read back as the same settings
    assert (loaded["--jitter-buffer-ms"], loaded["sip-user"]) == (100, "callsim")
    assert loaded["sip-password"] == "${CALLSIM_TEST_PBX_SECRET}"
    # a password that is no reference (not from a file, which refuses one) is never written
    literal = argparse.Namespace(out="o", sip_user="callsim", sip_password="hunter2")
    assert 'sip-password = "***"' in settings_toml(literal) and "hunter2" not in settings_toml(literal)
