"""``callsim fake-llm --role caller|policy|judge``: each scripted stand-in served over real HTTP, answering
what the real client of that role sends; a port in use or a bad option is one line and exit 2."""

from __future__ import annotations

import json
import socket
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from server.policy.llm_policy import HANG_UP, system_prompt
from voice.app.cli import build_parser, main
from voice.llm.fake_cli import DEFAULT_PORTS, cmd_fake_llm
from voice.metrics.scoring.scripted_judge import SCORE
from voice.react.persona import PERSONAS
from voice.react.prompt import Situation, render_user
from voice.react.scripted_caller import ASK_AGAIN


@contextmanager
def serving(capsys: pytest.CaptureFixture[str], *argv: str) -> Iterator[tuple[str, str]]:
    """``callsim fake-llm ARGV --port 0`` in a thread: its URL and what it printed; stopped after."""
    args = build_parser().parse_args(["fake-llm", *argv, "--port", "0"])
    stop = threading.Event()
    server = threading.Thread(target=cmd_fake_llm, args=(args,), kwargs={"stop": stop})
    server.start()
    try:
        out = ""
        for _ in range(500):
            out += capsys.readouterr().out
            if "use it:" in out:
                break
            stop.wait(0.01)
        yield out.split(" at ")[1].split()[0], out
    finally:
        stop.set()
        server.join(timeout=10)
    assert not server.is_alive()


def chat(url: str, body: dict) -> str:
    request = urllib.request.Request(
        f"{url}/chat/completions", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(json.loads(response.read())["choices"][0]["message"]["content"])


def test_the_caller_role_follows_the_script(capsys):
    from tests.records import short_delivery
    from voice.dialogues import parse_dialogue
    from voice.react.heard_so_far import HeardLine

    dialogue = parse_dialogue(short_delivery("d-1"), "mem", 1)
    greeted = [HeardLine("assistant", "您好，机主不在，您有什么事？", (), 0)]
    user = render_user(dialogue, PERSONAS["terse"], greeted, Situation("reply_ended", 0), 6)
    with serving(capsys, "--role", "caller") as (url, out):
        said = json.loads(chat(url, {"model": "rules", "messages": [{"role": "user", "content": user}]}))
    assert said["text"] == "快递到了。" and said["text"] != ASK_AGAIN
    assert "scripted, not a model" in out and "--caller openai:rules --caller-base-url" in out


def test_the_policy_role_answers_as_the_rules_with_the_hang_up_marker(capsys):
    system = system_prompt({"preset": {"type": "regular", "text": "外卖放门口就行，我在开会。"}})
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "好的，再见。"}]
    with serving(capsys, "--role", "policy") as (url, _):
        assert chat(url, {"model": "rules", "messages": messages}).endswith(HANG_UP)


def test_the_judge_role_scores_the_asked_turns(capsys):
    user = "Preset (机主预设): none (无预设)\nScore every assistant turn: 1, 2; then give the call verdict."
    with serving(capsys, "--role", "judge", "--host", "127.0.0.1") as (url, _):
        got = json.loads(chat(url, {"model": "rules", "messages": [{"role": "user", "content": user}]}))
    assert [t["turn"] for t in got["turns"]] == [1, 2]
    assert {s["score"] for s in got["turns"][0]["scores"].values()} == {SCORE}
    assert got["call_verdict"]["preset_respected"] == "not_applicable"


def test_each_role_has_its_own_default_port_and_the_options_parse():
    args = build_parser().parse_args(["fake-llm", "--role", "judge"])
    assert (args.port, args.host, args.delay) == (None, "127.0.0.1", 0.0)
    assert DEFAULT_PORTS == {"caller": 8011, "policy": 8012, "judge": 8013}


def test_a_port_in_use_is_one_line_and_exit_2(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code = main(["fake-llm", "--role", "caller", "--port", str(taken.getsockname()[1])])
    err = capsys.readouterr().err
    assert code == 2 and "cannot serve on 127.0.0.1:" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--role", "caller", "--delay", "-1"], "--delay -1.0"),
        (["--role", "oracle"], "invalid choice"),
        (["--role", "judge", "--port", "99999"], "--port 99999"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(capsys, argv, says):
    try:
        code = main(["fake-llm", *argv])
    except SystemExit as exc:  # argparse's own refusal
        code = exc.code
    assert code == 2 and says in capsys.readouterr().err
