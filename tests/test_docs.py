"""The documentation says what the program does.

The README stands on its own (it links nothing outside the repository, the docs it names exist, its index
lists every page); ``docs/cli.md`` holds every option of every command's ``--help`` with its default and
choices, and names no option that does not exist; every ``callsim`` command line in a code block of the
README or of ``docs/`` parses with the real parser (nothing is run).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from voice.app.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
PAGES = {"README.md": README} | {f"docs/{p.name}": p.read_text(encoding="utf-8") for p in DOCS}


def test_the_readme_links_nothing_outside_the_repository() -> None:
    # pictures of the repository itself (docs/*.png) are shown; anything else is cited in docs/metrics.md
    links = re.findall(r"https?://|\]\((?!#)([^)]*)\)", README)
    outside = [
        link for link in links if not (re.fullmatch(r"docs/[\w.-]+\.png", link) and (ROOT / link).is_file())
    ]
    assert not outside, "a link: cite it in docs/metrics.md instead"
    assert "../" not in README


def test_every_doc_a_page_names_exists() -> None:
    named = set(re.findall(r"docs/[\w.-]+\.(?:md|py|png)", README))
    assert {"docs/metrics.md", "docs/results.md", "docs/api.md", "docs/example_test_my_bot.py"} <= named
    for page, text in PAGES.items():
        missing = [
            p
            for p in sorted(set(re.findall(r"docs/[\w.-]+\.(?:md|py|png)", text)))
            if not (ROOT / p).is_file()
        ]
        assert not missing, f"{page} names {missing}, which do not exist"


def test_the_readme_starts_with_the_two_commands_and_indexes_every_page() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block is not None and README.index("```bash") < README.index("\n## ")
    assert [line.split()[0] for line in first_block.group(1).splitlines()] == ["scripts/demo", "scripts/test"]
    index = README.split("## Documentation", 1)[1]
    unlisted = [f"docs/{p.name}" for p in DOCS if f"`docs/{p.name}`" not in index]
    assert not unlisted, f"the README's docs index lacks {unlisted}"
    assert len(README.splitlines()) < 200, "the README is a first page: reference material goes to docs/"


def test_ci_runs_the_readmes_test_command_with_every_layer() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block is not None and re.search(r"^scripts/test\b", first_block.group(1), re.M)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^exec scripts/test --full$", ci, re.M), ".ci/run: the README's command, --full"
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    layers = [
        '-m "not models and not full"',
        '-m "models and not full and not e2e"',
        '-m "e2e and not full"',
        "-m full",
    ]
    assert all(layer in script for layer in layers), "scripts/test: the four layers of docs/ci.md"
    assert all(layer.split(" ", 1)[1].strip('"') in PAGES["docs/ci.md"] for layer in layers)


def test_the_metric_references_are_in_the_repository_with_their_sources() -> None:
    refs = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert "docs/metrics.md" in (ROOT / "voice" / "metrics" / "rhythm.py").read_text(encoding="utf-8")
    for source in ("Stivers", "Full-Duplex-Bench v1.5", "FD-Bench", "GPT-4o System Card", "Talking Turns"):
        assert source in refs
    sources = refs.split("## Sources", 1)[1]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", refs.split("## Sources", 1)[0])}
    listed = {int(n) for n in re.findall(r"^(\d+)\. ", sources, re.M)}
    assert cited == listed, "every source cited is listed, and every source listed is cited"


# --- docs/cli.md against the parser -----------------------------------------------------------------------


def commands(
    parser: argparse.ArgumentParser, path: str = "callsim"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``callsim`` and every subcommand under it, with its parser (``callsim data``, ``callsim bench``...)."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """What ``--help`` lists under options, ``-h`` aside."""
    return [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]


def sections() -> list[tuple[set[str], list[list[str]]]]:
    """Per ``## `` section of docs/cli.md: the commands its heading names and the cells of its table rows."""
    out = []
    for part in re.split(r"^## ", CLI_DOC, flags=re.M)[1:]:
        heading, _, body = part.partition("\n")
        rows = [
            [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            for line in body.splitlines()
            if line.startswith("|") and not line.startswith("|---")
        ]
        out.append((set(re.findall(r"`(callsim(?: [a-z][a-z-]*)*)", heading)), rows))
    return out


def section_rows(path: str) -> list[list[str]]:
    """The table rows of the section for ``path`` (``callsim data`` is covered by a heading that names
    ``callsim data validate``; ``callsim`` itself only by a heading naming it alone)."""
    found = [
        rows
        for names, rows in sections()
        if path in names or (path != "callsim" and any(n.startswith(path + " ") for n in names))
    ]
    assert found, f"docs/cli.md has no section (## heading) naming `{path}`"
    return [row for rows in found for row in rows]


def option_row(rows: list[list[str]], option: str) -> list[str] | None:
    """The row whose first cell names ``option`` (``--out DIR``, ``--recordings wav\\|flac``)."""
    return next((row for row in rows if option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", row[0])), None)


def shows(cell: str, default: object) -> bool:
    """Whether ``cell`` shows ``default`` as a word (``0`` for 0.0 too; ``0`` is not found in ``2000``)."""
    forms = [str(default)]
    if isinstance(default, float) and default.is_integer():
        forms.append(str(int(default)))
    return any(re.search(rf"(?<![\w.]){re.escape(form)}(?![\w.])", cell) for form in forms)


def has_a_default(action: argparse.Action) -> bool:
    return action.default not in (None, False, "", [], argparse.SUPPRESS)


PARSER = build_parser()
COMMANDS = list(commands(PARSER))


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[path for path, _ in COMMANDS])
def test_the_cli_reference_has_every_option_with_its_default_and_choices(
    path: str, parser: argparse.ArgumentParser
) -> None:
    rows = section_rows(path)
    for action in options(parser):
        option = max(action.option_strings, key=len)
        row = option_row(rows, option)
        assert row is not None and len(row) >= 3, f"docs/cli.md, `{path}`: no row for {option}"
        if has_a_default(action):
            assert shows(row[1], action.default), (
                f"`{path} {option}`: the default {action.default!r} not shown"
            )
        for choice in action.choices or ():
            assert f"`{choice}`" in " ".join(row) or choice in row[0], f"`{path} {option}`: choice {choice}"
    for action in parser._actions:  # a positional with choices is a sub-subcommand: `callsim data validate`
        if (
            not action.option_strings
            and action.choices
            and not isinstance(action, argparse._SubParsersAction)
        ):
            named = {n for names, _ in sections() for n in names}
            assert not [c for c in action.choices if f"{path} {c}" not in named], f"`{path}`: a heading each"


def test_the_cli_reference_names_no_option_a_command_lacks() -> None:
    known = dict(COMMANDS)
    for names, rows in sections():
        if not names:
            continue
        have = {
            s
            for name in names
            for path in known
            if path == name or (name.startswith(path + " ") and path != "callsim")
            for a in options(known[path])
            for s in a.option_strings
        }
        for row in rows:
            stale = [o for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", row[0]) if o not in have]
            assert not stale, f"docs/cli.md, {sorted(names)}: {stale} is no option of these commands"


# --- every command line of the README and docs/ parses --------------------------------------------------


COMMAND = re.compile(r"(?:^|[;&|])\s*(?:\$\s+)?callsim(?:\s|$)")
FENCED = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)  # every block, so none is read from its end


def command_lines(text: str) -> Iterator[tuple[str, list[str] | None]]:
    """The ``callsim`` commands of the shell code blocks, each as its line and its argument list (None if
    the shell could not split it: a quote left open): continuation lines joined, comments dropped, split
    at ``|``, ``&&``, ``;`` and ``&``.  No line is skipped: placeholders such as ``RUN`` or ``ws://…`` are
    strings to the parser, and every number in a documented command is written as one."""
    for block in (
        body for lang, body in FENCED.findall(text) if lang in ("", "bash", "sh", "shell", "console")
    ):
        for line in re.sub(r"\\\n", " ", block).splitlines():
            if not COMMAND.search(line):  # a command, not prose or a tree that names one
                continue
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            try:
                tokens = [*lexer, ";"]
            except ValueError:
                yield line, None
                continue
            segment: list[str] = []
            for token in tokens:
                if token in ("|", "||", "&&", ";", "&"):
                    if segment[:1] == ["callsim"]:
                        yield line, segment
                    segment = []
                else:
                    segment.append(token)


DOC_COMMANDS = [(page, line, argv) for page, text in PAGES.items() for line, argv in command_lines(text)]


def test_the_docs_hold_command_lines() -> None:
    pages = {page for page, _, _ in DOC_COMMANDS}
    assert {"README.md", "docs/cli.md", "docs/talk.md", "docs/caller.md"} <= pages
    readme = [argv for page, _, argv in DOC_COMMANDS if page == "README.md" and argv]
    assert any(argv[1:3] == ["bench", "--target"] for argv in readme)


@pytest.mark.parametrize(
    ("page", "line", "argv"),
    DOC_COMMANDS,
    ids=[f"{page}: {line.strip()[:60]}" for page, line, _ in DOC_COMMANDS],
)
def test_every_command_line_in_the_docs_parses(page: str, line: str, argv: list[str] | None) -> None:
    assert argv is not None, f"{page}: {line}: a quote left open"
    redirected = [t for t in argv if set(t) <= set("<>&") and t]
    assert not redirected, f"{page}: {' '.join(argv)}: unquoted {redirected} (quote a --fail-if)"
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            build_parser().parse_args(argv[1:])
        except SystemExit as exc:
            assert exc.code == 0, f"{page}: {' '.join(argv)}: {err.getvalue().strip().splitlines()[-1:]}"


def test_the_judge_figures_the_readme_quotes_are_the_recorded_ones():
    """README quotes the checklist's blind figures; calibration.json (written by the blind benchmark) is
    the source, so a rerun that moves them must move the README too."""
    from voice.metrics.scoring.calibration import judge_label
    from voice.metrics.scoring.checklist import NAME

    figures = judge_label(NAME).split(" (")[0]
    assert "blind separation" in figures and f"`{figures}`" in " ".join(README.split()), figures
