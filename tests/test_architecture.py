"""The architecture's promises, checked on the source.

One clock; imports that point one way, room to room (``ALLOWED``: ``voice`` independent of ``server`` but
for the cli and the benchmarks, the server never importing the run room or a benchmark); the built-in
assistant started from one launcher module; no import cycles, imports read at any depth; no module using
another's private names; no module over 400 lines; ``voice`` keeps its modules in rooms; every module has a
mirroring test file.  Known offenders that other work is removing are
``xfail(strict=True)`` by path, or listed with a reason: once one is fixed, the check says so, and the entry
must be deleted here.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VOICE, SERVER, TESTS = ROOT / "voice", ROOT / "server", ROOT / "tests"
MODULES = sorted(VOICE.rglob("*.py"))
ALL_MODULES = sorted([*VOICE.rglob("*.py"), *SERVER.rglob("*.py")])


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from … import`` names, a relative one resolved against ``package``."""
    if not node.level:
        return node.module or ""
    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def import_targets(source: str, name: str, is_package: bool, known: set[str]) -> set[str]:
    """Every module an import anywhere in module ``name`` names (module level, functions, methods, ``if
    TYPE_CHECKING:``): ``from p import x`` names ``p.x`` when that is a module of ``known``, else ``p``."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
    return found


KNOWN_MODULES = {module_name(p) for p in ALL_MODULES}


def imports(path: Path, known: set[str] = KNOWN_MODULES) -> set[str]:
    """Every module an import anywhere in ``path`` names (:func:`import_targets`)."""
    return import_targets(
        path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py", known
    )


def cases(paths: Iterable[Path], known: Mapping[str, str]) -> list[object]:
    """One parameter per module, ``xfail(strict=True)`` for the known offenders in ``known``."""
    return [
        pytest.param(p, id=rel(p), marks=pytest.mark.xfail(strict=True, reason=known[rel(p)]))
        if rel(p) in known
        else pytest.param(p, id=rel(p))
        for p in paths
    ]


# --- one clock --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(VOICE)))
def test_only_the_clock_module_reads_the_system_clock(path):
    if rel(path) == "voice/core/clock.py":
        return
    found = imports(path) & {"time", "datetime"}
    assert not found, f"{path} imports {found}: take time from voice.core.clock instead"


# --- the built-in assistant is launched from one module --------------------------------------------------

LAUNCHER = "voice/app/run/launch.py"
KNOWN_LAUNCHES: dict[str, str] = {}
PROCESS_CALLS = {
    *(f"subprocess.{f}" for f in ("Popen", "run", "call", "check_call", "check_output", "getoutput")),
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "asyncio.subprocess.create_subprocess_exec",
    "asyncio.subprocess.create_subprocess_shell",
    *(f"os.{f}" for f in ("system", "popen", "posix_spawn", "posix_spawnp")),
    *(f"os.exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    *(f"os.spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
}
SERVER_MODULE = re.compile(r"server(\.\w+)*")
SERVER_IN_COMMAND = re.compile(r"(^|\s)-m\s*server(\.\w+)*(\s|$)")


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → what it was imported as (``sp`` → ``subprocess``, ``Popen`` → ``subprocess.Popen``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]  # ``import os.path`` binds ``os``
                names[a.asname or top] = a.name if a.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {(a.asname or a.name): f"{node.module}.{a.name}" for a in node.names}
    return names


def _dotted(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """``subprocess.Popen``, ``asyncio.create_subprocess_exec``… for a callee, through import aliases."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value, aliases)) is not None:
        return f"{base}.{node.attr}"
    return None


def _is_process_call(call: ast.Call, aliases: Mapping[str, str]) -> bool:
    name = _dotted(call.func, aliases)
    if name in PROCESS_CALLS:
        return True
    # an event loop's own launchers: loop.subprocess_exec(...), loop.subprocess_shell(...)
    return isinstance(call.func, ast.Attribute) and call.func.attr in ("subprocess_exec", "subprocess_shell")


def _strings(node: ast.AST, scope: Mapping[str, list[ast.AST]], seen: set[str]) -> Iterator[str]:
    """The string constants an expression is built from, in order, through names assigned in ``scope``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Name):
        if node.id not in seen:
            for value in scope.get(node.id, []):
                yield from _strings(value, scope, seen | {node.id})
    else:
        for child in ast.iter_child_nodes(node):
            yield from _strings(child, scope, seen)


def _assignments(body: ast.AST) -> dict[str, list[ast.AST]]:
    """Name → the values assigned to it in ``body`` (``=``, ``+=``, annotated), in source order."""
    found: dict[str, list[ast.AST]] = {}
    for node in ast.walk(body):
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target]
        else:
            continue
        if node.value is not None:
            for t in targets:
                found.setdefault(t.id, []).append(node.value)
    return found


def _names_the_server(strings: list[str]) -> bool:
    """``"-m", "server…"`` as arguments, or ``-m server…`` inside one command string."""
    after_m = any(a == "-m" and SERVER_MODULE.fullmatch(b) for a, b in itertools.pairwise(strings))
    return after_m or any(SERVER_IN_COMMAND.search(s) for s in strings)


def server_launches(source: str) -> list[int]:
    """Lines of ``source`` that start ``python -m server…`` in a child process (subprocess, asyncio, os)."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    module_scope = _assignments(tree)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_process_call(n, aliases)):
        # a name means what the innermost enclosing function assigns to it, else the module
        scope = dict(module_scope)
        node: ast.AST = call
        enclosing = []
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                enclosing.append(node)
        for function in reversed(enclosing):
            scope |= _assignments(function)
        args = [*call.args, *(k.value for k in call.keywords)]
        if _names_the_server([s for a in args for s in _strings(a, scope, set())]):
            lines.append(call.lineno)
    return sorted(lines)


@pytest.mark.parametrize("path", cases((p for p in MODULES if rel(p) != LAUNCHER), KNOWN_LAUNCHES))
def test_only_the_launcher_starts_the_server_in_a_child_process(path):
    lines = server_launches(path.read_text(encoding="utf-8"))
    assert not lines, f"{rel(path)}:{lines} runs `python -m server…`: start it through {LAUNCHER}"


def test_the_launch_check_finds_the_launchers_own_launch():
    assert server_launches((ROOT / LAUNCHER).read_text(encoding="utf-8"))


def test_the_launch_check_follows_names_aliases_and_command_strings():
    found = server_launches(
        "import asyncio, sys\n"
        "import subprocess as sp\n"
        "from subprocess import Popen\n"
        "MODULE = 'server.assistants.echo'\n"
        "def a(port):\n"
        "    args = [sys.executable, '-m', MODULE, '--port', str(port)]\n"
        "    args += ['--quiet']\n"
        "    return Popen(args)\n"
        "async def b():\n"
        "    return await asyncio.create_subprocess_exec(sys.executable, '-m', 'server')\n"
        "def c():\n"
        "    sp.run('python -m server --port 1', shell=True)\n"
        "def d(loop):\n"
        "    return loop.subprocess_exec(lambda: None, 'python', '-mserver.assistants.reference')\n"
    )
    assert found == [8, 10, 12, 14]
    assert not server_launches(
        "import subprocess, sys\n"
        "subprocess.run(['espeak-ng', '-v', 'cmn'])\n"
        "subprocess.Popen([sys.executable, '-m', 'voice.app.cli', 'bench', '--target', 'server'])\n"
        "print('-m', 'server')\n"
    )


# --- no import cycles ------------------------------------------------------------------------------------


def module_imports(source: str, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports, at any depth (:func:`import_targets`); a
    package's ``__init__`` run implicitly on the way to a submodule is not counted."""
    return {t for t in import_targets(source, name, is_package, known) if t in known and t != name}


def import_graph() -> dict[str, set[str]]:
    return {
        module_name(p): {n for n in imports(p) if n in KNOWN_MODULES} - {module_name(p)} for p in ALL_MODULES
    }


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One shortest cycle ``[a, b, …, a]`` per strongly connected group of modules (Tarjan, then BFS)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while (w := stack.pop()) != v:
                group.add(w)
            groups.append(group | {v})

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(_shortest_cycle(graph, g) for g in groups if len(g) > 1)


def _shortest_cycle(graph: Mapping[str, set[str]], group: set[str]) -> list[str]:
    """The shortest way from the group's first module back to itself (breadth first)."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    following.append(w)
        frontier = following
    raise AssertionError(f"{sorted(group)} is strongly connected, so it has a cycle")


def _reaches(graph: Mapping[str, set[str]], start: str, goal: str) -> bool:
    """Whether ``goal`` is imported from ``start``, through any number of modules."""
    seen, todo = {start}, [start]
    while todo:
        todo += (new := graph.get(todo.pop(), set()) - seen)
        seen |= new
    return goal in seen


# Circles that other work is removing: (module, what it imports) → why, and what removes it; the arrow is left
# out of the graph.  Once it is gone or closes no circle, ``test_the_known_cycles_are_current`` says so.
KNOWN_CYCLES: dict[tuple[str, str], str] = {}


def test_voice_and_server_have_no_import_cycles():
    """No module imports itself back, through any number of others, at any depth.

    An import in a function or a method is a circle all the same: the two modules cannot be read, tested or
    moved apart, and it is an ImportError the day the import is lifted to the top of the file.  ``if
    TYPE_CHECKING:`` imports count too: no circle at run time, but two modules leaning on each other all the
    same (the shared type belongs below both), and ``typing.get_type_hints`` fails on such a hint.
    """
    graph = import_graph()
    for module, imported in KNOWN_CYCLES:
        graph[module] = graph[module] - {imported}
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_known_cycles_are_current():
    graph = import_graph()
    for (module, imported), reason in KNOWN_CYCLES.items():
        assert reason and imported in graph[module] and _reaches(graph, imported, module), (
            f"{module} → {imported} closes no circle now: remove it from KNOWN_CYCLES"
        )


def test_the_cycle_check_sees_imports_at_any_depth():
    known = {"p", "p.a", "p.b", "p.c", "p.d"}
    source = (
        "from p import b, name_in_p\n"
        "from . import c\n"
        "if TYPE_CHECKING:\n"
        "    import p.d\n"
        "def f():\n"
        "    from p.a import x\n"
    )
    assert module_imports(source, "p.a", False, known) == {"p", "p.b", "p.c", "p.d"}
    assert module_imports("from p.a import x\nimport os\n", "p.b", False, known) == {"p.a"}
    assert module_imports("from .a import x\n", "p", True, known) == {"p.a"}
    hidden = "class K:\n    def m(self):\n        from .a import x\n"  # an import in a method
    assert module_imports(hidden, "p.b", False, known) == {"p.a"}
    graph = {"p.a": module_imports("import p.b\n", "p.a", False, known), "p.b": {"p.a"}}
    assert import_cycles(graph) == [["p.a", "p.b", "p.a"]]
    graph = {"p.a": {"p.b"}, "p.b": {"p.c", "p.a"}, "p.c": {"p.a"}, "p": {"p.a"}}
    assert import_cycles(graph) == [["p.a", "p.b", "p.a"]]
    assert import_cycles({"p.a": {"p.b"}, "p.b": set()}) == []
    assert _reaches(graph, "p.c", "p.b") and not _reaches(graph, "p.a", "p")


# --- facts flow one way: which room may import which ----------------------------------------------------

# The rooms, bottom up, in three layers (docs/layout.md).  A room may import the rooms listed for it, and its
# own modules; nothing else.
# - the simulator library: a folder of voice/ (``core``, ``lines``, ``speech``…) or a top-level module
#   (``errors``, ``files``, ``recording``);
# - the contract between simulator and assistant (``voice/contract/``: the policy protocol, turn tuning,
#   access rules), on ``errors`` alone, which both the library and the server import;
# - the assistant (``server``, and the test assistants in ``server.assistants``), on the library and the
#   contract;
# - the application (``voice/app/``: ``app.run``, ``app.report``, ``app.live``, ``app.cli``,
#   ``app.benchmarks``) above both, the only layer that may import the server; ``api`` is
#   ``voice/__init__.py`` (the lazy Python API over the application).
# ``text`` is Chinese text as the judges hear it (script, numerals, phrase matching): below the dialogue
# schema (a reference must satisfy its annotations) and the metrics (the checklist judge) alike.
LIBRARY = {
    "errors", "contract", "core", "files", "recording", "text", "dialogues", "llm", "speech", "lines",
    "react", "metrics",
}  # fmt: skip
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "contract": {"errors"},
    "core": {"errors", "contract"},
    "files": {"errors", "core"},
    "recording": {"errors", "core", "files"},
    "text": {"errors"},
    "dialogues": {"errors", "contract", "text"},
    "llm": {"errors", "files"},
    "speech": {"errors", "contract", "core", "files", "text", "dialogues"},
    "lines": {"errors", "contract", "core"},
    "react": {"errors", "contract", "core", "files", "text", "dialogues", "llm", "speech"},
    "metrics": {"errors", "contract", "core", "files", "recording", "text", "dialogues", "llm", "speech"},
    # the server imports what it serves with, never the application
    "server": {"errors", "contract", "core", "files", "text", "dialogues", "llm", "speech", "lines"},
    # the test assistants sit on the built-in's room for its SIP gateway (server/sip_gateway.py, ``--sip``)
    "server.assistants": {
        "errors", "contract", "core", "files", "text", "dialogues", "speech", "lines", "server",
    },
    "app.run": LIBRARY,
    "app.report": LIBRARY | {"app.run"},
    "app.live": LIBRARY | {"app.run", "app.report"},
    "api": LIBRARY | {"app.run", "app.report"},
    "app.cli": LIBRARY | {"app.run", "app.report", "app.live", "server", "server.assistants"},
    # a benchmark measures both sides: the one room that may import everything
    "app.benchmarks": LIBRARY | {
        "app.run", "app.report", "app.live", "app.cli", "server", "server.assistants",
    },
}  # fmt: skip
# the layers, for the check that nothing below the application names it or the server
APPLICATION = {r for r in ALLOWED if r.startswith("app.")} | {"api"}
ASSISTANT = {"server", "server.assistants"}

# Arrows that still run back up: (module, what it imports) → why, and what removes it.  An entry whose
# import is gone fails ``test_the_known_back_arrows_are_current``: delete it then.
KNOWN_BACK_ARROWS: dict[tuple[str, str], str] = {}


def room(module: str) -> str | None:
    """The room of a CallSim module: its folder (``voice.app.run.driver`` → ``run``), or a top-level module's
    own
    name (``voice.app.cli`` → ``cli``); None for anything else."""
    parts = module.split(".")
    if parts[0] == "server":
        return "server.assistants" if parts[1:2] == ["assistants"] else "server"
    if parts[0] != "voice":
        return None
    if parts[1:2] == ["app"]:  # a folder of voice/app/, or ``app.cli``: the modules at its top (the entry)
        folder = parts[2] if len(parts) > 2 else ""
        return f"app.{folder}" if folder and (VOICE / "app" / folder).is_dir() else "app.cli"
    return "api" if len(parts) == 1 else parts[1]


def resolved_imports(path: Path, known: set[str]) -> set[str]:
    """Every CallSim module ``path`` imports, anywhere in it (:func:`import_targets`)."""
    return {n for n in imports(path, known) if room(n) is not None}


def back_arrows(path: Path, known: set[str]) -> list[str]:
    """What ``path`` imports from a room its own room may not import."""
    own = room(module_name(path))
    assert own in ALLOWED, f"{rel(path)} is in room {own!r}, which ALLOWED does not place: add it there"
    return sorted(
        name
        for name in resolved_imports(path, known)
        if (other := room(name)) != own and other not in ALLOWED[own]
    )


@pytest.mark.parametrize("path", ALL_MODULES, ids=rel)
def test_imports_point_down_the_rooms(path):
    arrows = [n for n in back_arrows(path, KNOWN_MODULES) if (rel(path), n) not in KNOWN_BACK_ARROWS]
    assert not arrows, (
        f"{rel(path)} ({room(module_name(path))}) imports {arrows}: an arrow back up (see ALLOWED in"
        " tests/test_architecture.py); move the shared piece down to a room both may import"
    )


def test_the_known_back_arrows_are_current():
    for (path, name), reason in KNOWN_BACK_ARROWS.items():
        assert reason and name in back_arrows(ROOT / path, KNOWN_MODULES), (
            f"{path} no longer imports {name}: remove it from KNOWN_BACK_ARROWS"
        )


def test_the_table_keeps_the_three_layers():
    """Nothing below the application may import it; the library and the contract never import the assistant;
    the contract imports nothing but the exception root; the assistant sees the contract."""
    for own, allowed in ALLOWED.items():
        if own not in APPLICATION:
            assert not allowed & APPLICATION, f"{own} may import the application: {allowed & APPLICATION}"
        if own in LIBRARY:
            assert not allowed & ASSISTANT, f"{own} (the library) may import the assistant"
    assert ALLOWED["contract"] == {"errors"}
    assert all("contract" in ALLOWED[r] for r in ASSISTANT)


def test_the_direction_check_resolves_from_imports_and_places_every_room():
    assert room("voice.app.run.driver") == "app.run" and room("voice.dialogues.annotations") == "dialogues"
    assert room("server.policy.rules") == "server" and room("voice") == "api" and room("numpy") is None
    assert room("voice.text.matching") == "text" and "text" in ALLOWED["dialogues"] & ALLOWED["metrics"]
    every = set(ALLOWED) | {r for allowed in ALLOWED.values() for r in allowed}
    assert every == set(ALLOWED), "a room that ALLOWED names but does not place"
    lower = {r: {o for o in allowed if o != r} for r, allowed in ALLOWED.items()}
    assert not import_cycles(lower), "ALLOWED must be an order: no two rooms may import each other"


# --- a module's private names are its own ---------------------------------------------------------------

# Modules that still use another module's private names → why, and what removes it (``xfail(strict=True)``).
KNOWN_PRIVATE: dict[str, str] = {}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def private_uses(source: str, name: str, is_package: bool, known: set[str]) -> list[str]:
    """The private names (``_x``, not dunders) of other CallSim modules that module ``name`` uses: ``from m
    import _x`` anywhere in it, and ``m._x`` on a name an import bound to a module of ``known``."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(source)
    aliases = _aliases(tree)  # local name → what an import bound it to
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and room(base := _absolute(node, package)) is not None:
            found |= {f"{base}.{a.name}" for a in node.names if _private(a.name)}
        elif isinstance(node, ast.Attribute) and _private(node.attr) and _root(node) in aliases:
            owner = _dotted(node.value, aliases)  # a module, or a name in one
            found |= {f"{owner}.{node.attr}"} if owner in known else set()
    return sorted(found)


@pytest.mark.parametrize("path", cases(ALL_MODULES, KNOWN_PRIVATE))
def test_no_module_uses_another_modules_private_names(path):
    source, name = path.read_text(encoding="utf-8"), module_name(path)
    found = private_uses(source, name, path.name == "__init__.py", KNOWN_MODULES)
    assert not found, (
        f"{rel(path)} uses {found}: a private name is its module's own; make it public there (documented,"
        " tested) or move what both need where both may import it"
    )


def test_the_private_check_sees_from_imports_and_module_attributes():
    known = {"voice", "voice.a", "voice.b"}
    source = "import os, voice.b\nfrom voice import b as bee\nfrom os import _exit\n"
    source += "def f(obj):\n    from voice.a import _x, y, __all__\n"  # a from-import in a function too
    source += "    return voice.b._z, bee._w, obj._v, y._u, os._exit\n"
    assert private_uses(source, "voice.c", False, known) == ["voice.a._x", "voice.b._w", "voice.b._z"]


# --- no module over 400 lines ------------------------------------------------------------------------------

MAX_LINES = 400
KNOWN_LONG: dict[str, str] = {}


@pytest.mark.parametrize("path", cases(ALL_MODULES, KNOWN_LONG))
def test_no_module_is_over_400_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{rel(path)} has {n} lines (at most {MAX_LINES}): split it"


# --- the tree: rooms, and tests that mirror the modules ---------------------------------------------------

# The modules left at the top are the entry point and the shared leaves, each a room of its own: ``__init__``
# (the lazy Python API), ``cli`` (``callsim``: the entry point, the one room besides the benchmarks that
# sees the server), ``errors`` (the one exception root, below everything), ``files`` (atomic writes, WAV,
# the cache root) and ``recording`` (a call on disk, written by ``run`` and read by ``metrics``, ``report``
# and the benchmarks; on ``files``, below all of them: ``core`` stays free of I/O).
TOP_LEVEL = {"__init__", "errors", "files", "recording"}

# Modules without a tests/<room>/test_<module>.py of their own, and where they are exercised instead.
UNMIRRORED = {
    # the public API's lazy exports (a package __init__ with functions)
    "voice/__init__.py": "tests/test_api.py (every export, docs/api.md, the example test run for real)",
    # benchmark helpers: tested in tests/app/benchmarks/test_capacity.py (split once capacity's rework lands)
    "voice/app/benchmarks/plans.py": "tests/app/benchmarks/test_capacity.py",
    "voice/app/benchmarks/sysstats.py": "tests/app/benchmarks/test_capacity.py",
    # the line interface and its in-memory double: used by every line's and the driver's tests
    "voice/lines/line.py": "tests/lines/*, tests/app/run/test_driver.py",
    "voice/lines/memory.py": "tests/app/run/test_driver.py, tests/app/run/test_runner.py, tests/lines/*",
    # part of the HTML report, checked through the rendered page
    "voice/app/report/audio.py": "tests/app/report/test_html.py (recordings embedded as Ogg Opus)",
    # the shared websocket serving of the test assistants: exercised by both assistants' own tests
    "server/assistants/serving.py": "tests/server/assistants/test_echo.py, test_reference.py",
    # a re-export of voice/recording.py for voice/app/report/ and voice/metrics/scoring/ until they import it
    # a re-export of voice/app/run/speed_index.py for voice/app/report/machine.py until it imports it
    # the TTS registry (make_tts) in the package's __init__
    "voice/speech/tts/__init__.py": "tests/speech/tts/test_engine.py",
    # the server's entry point and settings, its turn and policy processors (tests/server is being
    # reorganised elsewhere: mirror them there)
    "server/__main__.py": "tests/app/test_cli.py (callsim serve), voice/app/run/launch.py's tests",
}


def mirror(path: Path) -> Path:
    """``voice/<room>/x.py`` → ``tests/<room>/test_x.py``; ``server/…/x.py`` → ``tests/server/…/test_x.py``"""
    parts = path.relative_to(ROOT).parts
    folder = parts[1:-1] if parts[0] == "voice" else parts[:-1]
    return TESTS.joinpath(*folder, f"test_{path.stem}.py")


def needs_mirror(path: Path) -> bool:
    """Every module, except a package ``__init__`` that defines nothing (docstring, imports, constants)."""
    if path.name != "__init__.py":
        return True
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in tree.body)


def test_voice_keeps_its_modules_in_rooms():
    found = {p.stem for p in VOICE.glob("*.py")}
    assert found <= TOP_LEVEL, f"move {sorted(found - TOP_LEVEL)} into a room (voice/<room>/)"


@pytest.mark.parametrize("path", [p for p in ALL_MODULES if needs_mirror(p)], ids=rel)
def test_every_module_has_a_mirroring_test_file(path):
    if rel(path) in UNMIRRORED:
        return
    assert mirror(path).exists(), (
        f"{rel(path)} has no {rel(mirror(path))}: add one, or list the module in UNMIRRORED with where it is "
        "tested"
    )


def test_the_known_offenders_and_the_allow_list_are_current():
    for path in [*KNOWN_LAUNCHES, *KNOWN_LONG, *KNOWN_PRIVATE, *UNMIRRORED]:
        assert (ROOT / path).is_file(), f"{path} is gone: remove it from this file's lists"
    for path in UNMIRRORED:
        assert not mirror(ROOT / path).exists(), f"{path} is mirrored now: remove it from UNMIRRORED"
