"""``callsim bench --config callsim.toml``: a run described in a file, for a CI and for whoever runs it again.

The README's CI example took ten flags; a file holds them once, reviewed like code.  The file is TOML (read
with the standard library's :mod:`tomllib`), one table per concern, each key an option of ``bench``/``run``
spelled as its flag without the dashes (``wait-for-target = 60`` is ``--wait-for-target 60``), less the
table's own name where the flag starts with it (``[caller] persona``, ``max-turns``; ``[caller] kind`` is
``--caller`` and ``[dialogues] file`` ``--dialogues``): :data:`TABLES` is the whole mapping, and
``docs/config.md`` shows it.

The file only supplies defaults: the command line wins, option by option (a list option given on the
command line replaces the file's list).  Every value goes through the very checks a flag goes through
(:mod:`voice.app.run.checks`, before the first call); a value refused there names its line in the file
(:func:`located`).  What the file cannot mean is refused while it is read, every problem at once, as
``callsim.toml:LINE: table.key: reason`` with the nearest known name (exit 2, as a bad flag): an unknown
table or key (``wait_for_target``: did you mean ``wait-for-target``?), a key in the wrong table, a value of
the wrong kind.  The options a run was made with (file and flags resolved) are written into its folder as
``settings.toml`` (:mod:`voice.app.run.settings_file`), which ``--config`` reads back.

A few keys set what no flag may (:data:`FILE_ONLY`): a SIP target's credentials, since a flag's value is in
``ps`` for anyone on the machine.  Each sets the attribute of its own name (``sip-user``: ``args.sip_user``),
under the command line's flags as any key; ``sip-password`` must be a ``${VAR}`` reference, read from the
environment when the options are checked (a password written in the file is refused, naming its line).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from voice.app.run.usage import subcommand
from voice.errors import ConfigError, nearest

# table → key → the option of ``bench``/``run`` it sets; every option but --config and --help is here
TABLES: dict[str, dict[str, str]] = {
    "assistant": {  # the assistant under test and how it is reached
        "target": "--target",
        "header": "--header",
        "request-data": "--request-data",  # WebRTC targets: extra keys of the offer's request_data
        "ice-server": "--ice-server",  # WebRTC targets: STUN/TURN servers
        "jitter-buffer-ms": "--jitter-buffer-ms",  # SIP targets: the line's jitter buffer
        "wait-for-target": "--wait-for-target",
        "policy": "--policy",  # the built-in assistant's own settings
        "set": "--assistant-set",
        "tts": "--assistant-tts",
    },
    "dialogues": {  # which calls are made
        "file": "--dialogues",
        "ids": "--ids",
        "scenario": "--scenario",
        "preset": "--preset",
        "relation": "--relation",
        "limit": "--limit",
        "all": "--all",
        "repeats": "--repeats",
    },
    "caller": {  # who calls, with which voice and timing
        "kind": "--caller",
        "persona": "--persona",
        "max-turns": "--caller-max-turns",
        "base-url": "--caller-base-url",
        "tts": "--tts",
        "voices": "--voices",
        "speed": "--caller-speed",
        "seed": "--seed",
    },
    "line": {  # the phone network between them
        "band-limit": "--band-limit",
        "jitter-ms": "--jitter-ms",
        "loss": "--loss",
        "noise-snr-db": "--noise-snr-db",
        "caller-gain-db": "--caller-gain-db",
    },
    "scoring": {  # how the replies are heard and judged
        "transcriber": "--transcriber",
        "no-transcribe": "--no-transcribe",
        "judge": "--judge",
        "annotations": "--annotations",
    },
    "gates": {  # the verdict a CI reads from the exit code
        "max-failed": "--max-failed",
        "fail-if": "--fail-if",
    },
    "output": {  # what is written where
        "out": "--out",
        "junit": "--junit",
        "no-report": "--no-report",
        "audio": "--audio",
        "recordings": "--recordings",
        "no-speed-index": "--no-speed-index",
    },
    "run": {  # how the calls are spread and resumed
        "concurrency": "--concurrency",
        "ray": "--ray",
        "ray-workers": "--ray-workers",
        "retry-failed": "--retry-failed",
    },
}
# table → the keys that set what no flag sets (module docstring): each sets the attribute of its name
FILE_ONLY: dict[str, tuple[str, ...]] = {
    "assistant": ("sip-user", "sip-password"),  # SIP targets: digest credentials (else CALLSIM_SIP_USER/...)
}
# the options a file cannot set: --fresh deletes the run folder's calls, so a file that set it would make the
# rerun CallSim advises ("a rerun resumes") delete the run instead; it is given for one invocation only
NOT_IN_FILE = ("--config", "--help", "--fresh")
REDACTED = "***"  # what settings.toml writes for a secret (voice/app/run/settings_file.py)
_TOML_ERROR = re.compile(r"^(?P<what>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)$")
_TABLE_LINE = re.compile(r"\[\s*(?P<name>[A-Za-z0-9_.-]+)\s*\]")
_KEY_LINE = re.compile(r"(?P<name>[A-Za-z0-9_.-]+)\s*=")
_OPTION = re.compile(r"--[a-z][a-z0-9-]*")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # an environment variable's reference
# A file's value as the parsed flag's would be: a switch's, a number, a string, a repeatable option's list
OptionValue: TypeAlias = bool | int | float | str | list[str]


def dest(option: str) -> str:
    """The attribute an option sets on the parsed arguments (argparse's: ``--max-failed`` → max_failed)."""
    return option.lstrip("-").replace("-", "_")


def table_keys(table: str) -> list[str]:
    """Every key of ``table``: its flags', then those no flag sets."""
    return [*TABLES.get(table, {}), *FILE_ONLY.get(table, ())]


def where_is(option: str) -> str:
    """``table.key`` of an option (``--limit`` → ``dialogues.limit``)."""
    return next(f"{t}.{k}" for t, keys in TABLES.items() for k, o in keys.items() if o == option)


@dataclass(frozen=True)
class ConfigFile:
    """A read and checked file: each option's value, and where in the file it was set."""

    path: Path
    values: dict[str, OptionValue]  # option (``--limit``, a FILE_ONLY key as is) → value as the parsed flag's
    places: dict[str, str]  # option (or FILE_ONLY key) → ``callsim.toml:7: dialogues.limit``


def describe(value: object) -> str:
    """A TOML value's kind, in TOML's words (never a Python type name)."""
    kinds: tuple[tuple[type, str], ...] = ((bool, "true/false"), (int, "a whole number"), (float, "a number"))
    kinds += ((str, "a string"), (list, "a list"), (dict, "a table"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "a date or time")


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line of each table header and key, by its path (``("dialogues", "limit")``): :mod:`tomllib` keeps
    no positions, so they are found again in the text (a key inside a multi-line string may be missed or
    misplaced; a message then goes without its line)."""
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if (header := _TABLE_LINE.match(stripped)) is not None:
            table = tuple(header["name"].split("."))
            found.setdefault(table, number)
        elif (key := _KEY_LINE.match(stripped)) is not None:
            found.setdefault((*table, *key["name"].split(".")), number)
    return found


def read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """The parsed file and its text; a :class:`ConfigError` naming the file (and line) if it cannot be."""
    try:
        text = path.read_bytes().decode("utf-8-sig")  # a BOM (Windows editors) is not TOML
    except FileNotFoundError as exc:
        raise ConfigError(f"--config {path}: no such file (`callsim init` writes a starter)") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"--config {path}: is a folder; name the TOML file") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from exc
    except OSError as exc:
        raise ConfigError(f"--config {path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        said = str(exc)
        if (at := _TOML_ERROR.match(said)) is not None:
            what = at["what"][:1].lower() + at["what"][1:]
            raise ConfigError(f"{path}:{at['line']}: not valid TOML: {what} (column {at['column']})") from exc
        raise ConfigError(f"{path}: not valid TOML: {said}") from exc


def load_config(path: Path, parser: argparse.ArgumentParser) -> ConfigFile:
    """Read ``path`` and check it against the options of ``parser`` (``bench``'s or ``run``'s).

    Raises :class:`ConfigError` listing every problem, one a line, each as ``FILE:LINE: table.key: reason``.
    """
    doc, text = read_toml(path)
    lines = key_lines(text)
    actions = parser._option_string_actions
    values: dict[str, OptionValue] = {}
    places: dict[str, str] = {}
    problems: list[str] = []

    def at(*names: str) -> str:
        line = lines.get(names)
        return f"{path}:{line}" if line is not None else str(path)

    for table, body in doc.items():
        if table not in TABLES:
            problems.append(_unknown_table(table, body, at(table)))
        elif not isinstance(body, dict):
            flag = f" (--{table} is {where_is('--' + table)})" if table in ("caller", "dialogues") else ""
            problems.append(f"{at(table)}: {table}: a table ([{table}] and its keys below it){flag}")
        else:
            for key, value in body.items():
                place = f"{at(table, key)}: {table}.{key}"
                option = TABLES[table].get(key)
                if key == "fresh":
                    problems.append(
                        f"{place}: --fresh deletes the earlier calls: give it on the command line, for one"
                        " run (in a file, every rerun would delete the run instead of resuming it)"
                    )
                    continue
                if REDACTED in str(value):
                    problems.append(
                        f"{place}: holds {REDACTED!r}, a secret redacted when settings.toml was written: put"
                        " it in an environment variable and write ${VAR}"
                    )
                    continue
                if option is None and key in FILE_ONLY.get(table, ()):
                    try:
                        values[key] = file_only_value(key, value)
                    except ConfigError as exc:
                        problems.append(f"{place}: {exc}")
                    places[key] = place
                    continue
                if option is None:
                    problems.append(f"{place}: {_unknown_key(table, key)}")
                    continue
                try:
                    values[option] = convert(value, actions[option])
                except ConfigError as exc:
                    problems.append(f"{place}: {exc}")
                places[option] = place
    if problems:
        raise ConfigError("\n".join(problems))
    return ConfigFile(path, values, places)


def file_only_value(key: str, value: object) -> str:
    """A value of :data:`FILE_ONLY`'s keys, checked: a string, and for ``sip-password`` one ``${VAR}``
    reference (the password itself is never in the file, nor in a message)."""
    if not isinstance(value, str):
        raise ConfigError(f"takes a string ({key}), not {describe(value)}")
    if not value.strip():
        raise ConfigError("takes a string that is not empty (leave the key out for none)")
    if key == "sip-password" and VARIABLE.fullmatch(value.strip()) is None:
        raise ConfigError(
            "a password written in the file: put it in an environment variable and write sip-password ="
            ' "${VAR}" (or leave the key out: CALLSIM_SIP_PASSWORD is read from the environment)'
        )
    return value.strip()


def _unknown_table(name: str, body: object, place: str) -> str:
    if not isinstance(body, dict):  # a key outside any table
        flags = {o: f"{t}.{k}" for t, keys in TABLES.items() for k, o in keys.items()}
        if home := [f"{t}.{name}" for t, keys in FILE_ONLY.items() if name in keys]:
            return f"{place}: {name}: every key goes in its table: {name} is {home[0]}"
        key = name if f"--{name}" in flags else nearest(name, [o[2:] for o in flags])
        if key is not None:
            return f"{place}: {name}: every key goes in its table: --{key} is {flags['--' + key]}"
        return f"{place}: {name}: unknown key, outside any table (the tables: {', '.join(TABLES)})"
    guess = nearest(name, TABLES)
    hint = f"did you mean [{guess}]? " if guess else ""
    return f"{place}: [{name}]: unknown table ({hint}the tables: {', '.join(TABLES)})"


def _unknown_key(table: str, key: str) -> str:
    if (flag := f"--{key}") in {o for keys in TABLES.values() for o in keys.values()}:
        return f"unknown key: {flag} is {where_is(flag)}"  # a flag's name, in the wrong table or spelled so
    if home := [f"[{t}]" for t in TABLES if key in table_keys(t)]:
        return f"unknown key: {key} belongs in {' or '.join(home)}"
    guess = nearest(key, table_keys(table))
    hint = f"did you mean {guess}? " if guess else ""
    return f"unknown key ({hint}[{table}] takes {', '.join(table_keys(table))})"


def convert(value: object, action: argparse.Action) -> OptionValue:
    """A TOML value as the flag's parsed value would be; :class:`ConfigError` if it cannot be one."""
    flag = action.option_strings[0]
    if action.nargs == 0:  # --all, --no-report... (store_true)
        if not isinstance(value, bool):
            raise ConfigError(f"takes true or false ({flag}), not {describe(value)}")
        return value
    if isinstance(action, argparse._AppendAction):  # repeatable: a list, or one value
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str) for v in items):
            raise ConfigError(f"takes a string or a list of strings ({flag}), not {describe(value)}")
        return list(items)
    if action.type is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"takes a whole number ({flag}), not {describe(value)}")
        return value
    if action.type is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"takes a number ({flag}), not {describe(value)}")
        return float(value)
    if action.choices is not None and list(action.choices) == ["on", "off"] and isinstance(value, bool):
        value = "on" if value else "off"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"takes a string ({flag}), not {describe(value)}")
    text = str(value)  # max-failed = 2 is "2"
    if action.choices is not None and text not in action.choices:
        guess = nearest(text, [str(c) for c in action.choices])
        hint = f"; did you mean {guess!r}?" if guess else ""
        choices = ", ".join(str(c) for c in action.choices)
        raise ConfigError(f"{text!r}: choose one of {choices} ({flag}){hint}")
    return text


def apply_config(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with the ``--config`` file's values under the command line's: parsed again, the file's
    values as the subcommand's defaults, so exactly the options typed on the command line win.

    ``args.argv`` is the command line; the result keeps it, and ``config_places`` (option → where the
    file set it) for the options whose value is the file's.
    """
    sub = subcommand(parser, args.argv)
    if sub is None:  # (every parser with --config is a subcommand's)
        raise ConfigError("--config: for callsim bench and callsim run")
    loaded = load_config(Path(args.config), sub)
    lists = {o: v for o, v in loaded.values.items() if isinstance(v, list)}
    sub.set_defaults(**{dest(o): v for o, v in loaded.values.items() if o not in lists})
    merged = parser.parse_args(args.argv)
    for option, value in lists.items():  # argparse would append the typed ones to a list default
        if not getattr(merged, dest(option)):
            setattr(merged, dest(option), value)
    merged.argv = args.argv
    merged.config_places = {
        o: loaded.places[o] for o, v in loaded.values.items() if getattr(merged, dest(o)) == v
    }
    if merged.fresh and merged.retry_failed:  # argparse's own exclusion sees the command line only
        given = [loaded.places.get(o, o) for o in ("--fresh", "--retry-failed")]
        raise ConfigError(f"--fresh and --retry-failed: choose one ({', '.join(given)})")
    return merged


def place_of(message: str, places: Mapping[str, str]) -> str | None:
    """Where the file set the first option (or :data:`FILE_ONLY` key) a refusal names, if the file set one."""
    keys = [k for ks in FILE_ONLY.values() for k in ks if re.search(rf"(?<![\w-]){k}(?![\w-])", message)]
    return next((places[o] for o in [*_OPTION.findall(message), *keys] if o in places), None)


@contextlib.contextmanager
def located(args: argparse.Namespace) -> Iterator[None]:
    """Checks run inside it name the file's line when the value they refuse came from ``--config``:
    ``callsim.toml:7: dialogues.limit: --limit -2: takes a whole number from 1``."""
    try:
        yield
    except ConfigError as exc:
        place = place_of(str(exc), getattr(args, "config_places", {}))
        if place is None:
            raise
        raise ConfigError(f"{place}: {exc}") from exc
