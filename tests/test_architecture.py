"""The architecture's promises, checked on the source: one clock, and voice/ independent of server/."""

import ast
from pathlib import Path

import pytest

VOICE = Path(__file__).resolve().parent.parent / "voice"
MODULES = sorted(VOICE.rglob("*.py"))


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(VOICE)))
def test_only_the_clock_module_reads_the_system_clock(path):
    if path.name == "clock.py":
        return
    found = imports(path) & {"time", "datetime"}
    assert not found, f"{path} imports {found}: take time from voice.core.clock instead"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(VOICE)))
def test_voice_never_imports_server_except_the_cli(path):
    if path.name == "cli.py":
        return
    assert not any(n == "server" or n.startswith("server.") for n in imports(path)), path
