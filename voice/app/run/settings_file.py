"""``settings.toml`` in a run's folder: the options the run was made with, as a file ``--config`` reads back.

``results.json`` records what a run measured and the settings a resume must match; its ``provenance``
keeps the command line, which with ``--config callsim.toml`` says nothing of the file's content (edited since,
perhaps).  This file is the run's *input*: every option of ``bench``/``run`` resolved from the file and the
command line, in the tables of :mod:`voice.app.run.config_file`, so ``callsim bench --config
recordings/bench/settings.toml`` makes the run again (it resumes).  Left out: options that were not set
(TOML has no null; an empty list sets nothing), and ``--fresh``/``--retry-failed``, which are about one
invocation (a rerun from this file must never delete the run it describes).  Secrets are not written: a
target's URL credentials are ``***`` (as everywhere), a header's value is kept only when it is nothing but
``${VAR}`` references (after an optional scheme such as ``Bearer``), else ``***``; ``sip-password`` (which
the config file takes as a ``${VAR}`` reference only) likewise.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

from voice.app.run.config_file import FILE_ONLY, TABLES, VARIABLE, dest
from voice.files import atomic_write_bytes
from voice.lines.redact import MASK, redact_text
from voice.lines.webrtc_settings import shown_ice_server

SETTINGS_FILE = "settings.toml"
PER_INVOCATION = ("--fresh", "--retry-failed")
_TEMPLATE_ONLY = re.compile(r"(?:[A-Za-z]+ )?(?:\$\{[A-Za-z_][A-Za-z0-9_]*\})+")
_HEADER = (
    "# The options this run was made with (docs/config.md): --config and the command line, resolved.\n"
    "# `callsim {command} --config {path}` makes it again (and resumes it); secrets are shown as ***.\n"
)


def toml_value(value: object) -> str:
    """A value as TOML writes it (strings as JSON writes them: every JSON escape is a TOML one)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def shown_header(text: str) -> str:
    """A ``--header`` as written: its value only if it holds no secret itself (``Bearer ${TOKEN}``)."""
    name, colon, value = text.partition(":")
    if colon and _TEMPLATE_ONLY.fullmatch(value.strip()):
        return f"{name.strip()}: {value.strip()}"
    return f"{name.strip()}: {MASK}" if colon else MASK


def shown(option: str, value: object) -> object:
    """``value`` of ``option`` as it may be written (credentials hidden)."""
    if option == "--header" and isinstance(value, list):
        return [shown_header(v) for v in value]
    if option == "--ice-server" and isinstance(value, list):
        return [shown_ice_server(v) for v in value]
    if option == "sip-password" and isinstance(value, str):
        return value if VARIABLE.fullmatch(value.strip()) else MASK
    if option in ("--target", "--caller-base-url"):
        return [redact_text(v) for v in value] if isinstance(value, list) else redact_text(str(value))
    return value


def settings_toml(args: argparse.Namespace) -> str:
    """The resolved options of ``args`` as the text of a ``--config`` file."""
    folder = Path(args.out) / SETTINGS_FILE
    lines = [_HEADER.format(command=getattr(args, "command", None) or "bench", path=folder)]
    for table, keys in TABLES.items():
        rows = [
            f"{key} = {toml_value(shown(option, value))}"
            for key, option in keys.items()
            if option not in PER_INVOCATION and (value := getattr(args, dest(option), None)) not in (None, [])
        ]
        rows += [  # the keys no flag sets (the SIP credentials), from the config file
            f"{key} = {toml_value(shown(key, value))}"
            for key in FILE_ONLY.get(table, ())
            if (value := getattr(args, dest(key), None)) not in (None, [])
        ]
        if rows:
            lines.append(f"[{table}]\n" + "\n".join(rows) + "\n")
    return "\n".join(lines)


def write_settings(args: argparse.Namespace) -> Path:
    """Write :func:`settings_toml` into the run's folder (``--out``), atomically; its path."""
    path = Path(args.out) / SETTINGS_FILE
    atomic_write_bytes(path, settings_toml(args).encode("utf-8"))
    return path
