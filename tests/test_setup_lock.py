"""``requirements.lock``: every machine installs the same packages at the same versions.

``scripts/setup`` installs the lock, then CallSim without dependencies; these checks keep the lock whole
(every dependency and extra of ``pyproject.toml`` pinned exactly, within its range), keep setup on it, and
check that this environment is the lock's: a package at another version than its pin means setup did not
install from it (or someone installed over it), and the tests are then passing on something else.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
SETUP = ROOT / "scripts" / "setup"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*$")
UPDATE = (
    "uv pip compile pyproject.toml --extra dev --extra ray --python-version 3.11 --python-platform linux "
    "-o requirements.lock"
)


def pins() -> dict[str, str]:
    """Package (canonical name) → its pinned version; every line of the lock is a pin or a comment."""
    found: dict[str, str] = {}
    for number, line in enumerate(LOCK.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"requirements.lock:{number}: {line!r} is not an exact pin (name==version)"
        found[canonicalize_name(match[1])] = match[2]
    return found


def declared() -> list[Requirement]:
    """The dependencies of ``pyproject.toml`` and of every extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"].values()
    lines = [*project["dependencies"], *(d for extra in extras for d in extra)]
    return [Requirement(line) for line in lines]


def test_every_declared_dependency_is_pinned_within_its_range():
    locked = pins()
    for req in declared():
        name = canonicalize_name(req.name)
        assert name in locked, f"{req.name} (pyproject.toml) is not in requirements.lock: {UPDATE}"
        assert req.specifier.contains(Version(locked[name]), prereleases=True), (
            f"requirements.lock pins {req.name}=={locked[name]}, outside pyproject's {req.specifier}: "
            + UPDATE
        )


def test_the_lock_says_how_it_is_made_and_keeps_torch_out():
    text = LOCK.read_text(encoding="utf-8")
    assert UPDATE in text, "requirements.lock was made by another command than docs/install.md's"
    assert "torch" not in pins(), "the lock pulls in torch (CallSim runs without it)"
    assert "callsim" not in pins(), "CallSim itself is installed editable, not from the lock"


def test_setup_installs_the_lock_then_callsim_without_dependencies():
    script = SETUP.read_text(encoding="utf-8")
    lock_at = script.index("pip install -q -r requirements.lock")
    assert script.index("pip install -q --no-deps -e .") > lock_at
    # the stamp that skips a second install changes with the lock (a hash of it, not its mtime)
    assert re.search(
        r"cat requirements\.lock pyproject\.toml; echo \"\$venv_python\"; echo \"pip \$PIP_VERSION\"\)"
        r" \| sha256sum",
        script,
    )  # and with pip's pin and the venv's Python
    install = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    assert UPDATE in install, "docs/install.md: the lock's update command"


def test_this_environment_is_the_locked_one():
    wrong = []
    for name, version in pins().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            wrong.append(f"{name}: not installed (lock {version})")
            continue
        if Version(installed) != Version(version):
            wrong.append(f"{name}: {installed} installed, lock {version}")
    assert not wrong, "the environment is not requirements.lock's (run scripts/setup):\n" + "\n".join(wrong)


# A stand-in for the venv's Python: notes each call, installs nothing, says the version it is told to
FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$SETUP_LOG"
if [ "$1" = -c ]; then case "$2" in *sys.version*) echo "$FAKE_VERSION" ;; *) echo ok ;; esac; fi
"""


def _setup(folder: Path, version: str) -> list[str]:
    """``scripts/setup`` run in ``folder`` with the stand-in Python; the pip commands it ran."""
    log = folder / "log"
    log.write_text("")
    env = os.environ | {
        "SETUP_LOG": str(log),
        "FAKE_VERSION": version,
        "PATH": f"{folder / 'bin'}:{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", "scripts/setup"], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [line for line in log.read_text().splitlines() if line.startswith("-m pip")]


def test_setup_installs_once_and_again_only_when_the_lock_or_the_venvs_python_changes(tmp_path: Path) -> None:
    for name in ("scripts/setup", "requirements.lock", "pyproject.toml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    for name, text in {
        ".venv/bin/python": FAKE_PYTHON,
        "bin/dpkg-query": "#!/bin/sh\necho 'install ok installed'\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    assert any("-r requirements.lock" in c for c in _setup(tmp_path, "3.11.7 (main)"))  # no stamp: installs
    assert _setup(tmp_path, "3.11.7 (main)") == []  # the same lock and Python: nothing to install
    assert any("-r requirements.lock" in c for c in _setup(tmp_path, "3.11.9 (main)"))  # another Python
    assert _setup(tmp_path, "3.11.9 (main)") == []
    with (tmp_path / "requirements.lock").open("a") as lock:
        lock.write("# a new pin\n")
    assert any("-r requirements.lock" in c for c in _setup(tmp_path, "3.11.9 (main)"))  # another lock
