"""The public API (``voice/__init__.py``, ``docs/api.md``) and the example test a bot's repository copies.

The example (``docs/example_test_my_bot.py``) runs here for real, as a user would run it: copied into an
empty folder, run by pytest in a child process, calling a tiny raw-PCM bot on localhost (the reference
assistant, started by the example's own fixture) with two bundled dialogues in real time.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import voice

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "example_test_my_bot.py"
# a bot that takes turns well: answers 600 ms after the caller's end, stops 500 ms after being cut into,
# talks on through a backchannel; it waits 400 ms of silence before taking a turn
GOOD = {"reply_ms": 600, "stop_ms": 500, "takeover_pauses": False, "stop_on_backchannel": False}
GOOD |= {"endpoint_ms": 400, "reply_len_ms": 2000}
DEAF = GOOD | {"stop_ms": None, "reply_len_ms": 4000}  # ...and one that talks on, cut into or not


def test_import_voice_is_light_and_the_public_names_load_on_first_use():
    code = (
        "import sys, voice; heavy = ('numpy', 'websockets', 'voice.app.run.dataset',"
        " 'voice.metrics.measure');"
        "print([m for m in heavy if m in sys.modules]); voice.run_bench;"
        "print('voice.app.run.dataset' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]


def test_every_public_name_is_its_modules_object():
    from voice.app.run.dataset import run_bench
    from voice.metrics.measure import measure

    assert voice.run_bench is run_bench and voice.measure is measure
    assert sorted(voice.__all__) == sorted(["__version__", *voice._EXPORTS])
    for name in voice.__all__:
        assert getattr(voice, name) is not None and name in dir(voice)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        voice.nothing  # noqa: B018


def test_docs_api_md_describes_every_public_name():
    doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [name for name in voice.__all__ if f"`{name}" not in doc]
    assert not missing, f"docs/api.md does not describe {missing}"
    assert "example_test_my_bot.py" in doc


def run_example(folder: Path, behaviour: dict) -> subprocess.Popen:
    """The example, copied into ``folder`` as a bot's repository would hold it, run by pytest."""
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "test_my_bot.py")
    command = "{python} -m server.assistants.reference --port {port} --behaviour " + repr(
        json.dumps(behaviour)
    )
    env = os.environ | {
        "MY_BOT_COMMAND": command,
        "CALLSIM_TTS": "memory",  # instant caller audio: no model in the fast suite
        "PYTHONPATH": str(ROOT),
    }
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_bot.py"]
    return subprocess.Popen(
        args, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_the_example_test_passes_a_bot_that_takes_turns_well_and_fails_one_that_talks_on(tmp_path):
    good, deaf = run_example(tmp_path / "good", GOOD), run_example(tmp_path / "deaf", DEAF)  # at once
    good_out, deaf_out = good.communicate(timeout=300)[0], deaf.communicate(timeout=300)[0]
    assert good.returncode == 0 and "1 passed" in good_out, good_out
    assert deaf.returncode == 1 and "the bot talked on when the caller cut in" in deaf_out, deaf_out
    assert "CallSim report: " in deaf_out  # where to look when it fails
