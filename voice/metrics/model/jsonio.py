"""The JSON border of the result files: JSON values typed, read with checks, and written as CallSim has
always written them (pretty, UTF-8, Chinese kept readable), with the files' schema versions.

Every type of :mod:`voice.metrics.model` goes to JSON (``to_json``) and comes back (``from_json``) through
here, so a file's bytes have one writer and a malformed file fails in one place: a :class:`ValueError`
naming the key, which the loaders turn into a :class:`~voice.errors.RecordingError`.  Reading never
converts a number (an ``int`` stays an ``int``): a file read and written again is the same file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from voice.core.event_json import JsonObject as JsonObject  # the JSON value types, shared with the core
from voice.core.event_json import JsonScalar as JsonScalar
from voice.core.event_json import JsonValue as JsonValue
from voice.core.event_json import as_json as as_json
from voice.core.event_json import as_json_object as as_json_object
from voice.errors import RecordingError
from voice.files import atomic_write_bytes

# The versions of the files: ``results.json`` (run and target), ``<call>.metrics.json``, the scores.
# Adding a key keeps the version; removing or renaming one, or changing its unit or meaning, raises it.
RESULTS_SCHEMA = "callsim.results/1"
METRICS_SCHEMA = "callsim.metrics/1"
SCORES_SCHEMA = "callsim.scores/1"


def json_bytes(value: JsonValue) -> bytes:
    """``value`` as CallSim writes it: indented, UTF-8, Chinese as is, a newline at the end."""
    return (json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n").encode()


def write_json(path: Path, value: JsonValue) -> None:
    """Atomically write pretty JSON (UTF-8, Chinese kept readable)."""
    atomic_write_bytes(path, json_bytes(value))


def read_json(path: Path) -> JsonValue:
    """A JSON file's value; :class:`RecordingError` if it is missing or not JSON."""
    try:
        value: JsonValue = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RecordingError(f"{path}: missing") from exc
    except (OSError, ValueError, RecursionError) as exc:
        raise RecordingError(f"{path}: unreadable: {exc}") from exc
    return value


def schema_number(version: str, name: str) -> int:
    """The number in a ``schema_version`` such as ``callsim.results/1``; ValueError if not ``name``'s."""
    prefix, _, number = version.rpartition("/")
    if prefix != name or not number.isdigit():
        raise ValueError(f"schema {version!r} is not a version of {name!r}")
    return int(number)


def check_schema(doc: JsonObject, expected: str, where: object) -> None:
    """Refuse a file written for a schema this CallSim does not know (another kind, or a newer version).

    A file without ``schema_version`` predates versioning (CallSim 0.1) and is read as version 1; keys
    unknown to this version are ignored by every reader.
    """
    version = doc.get("schema_version", expected)
    name = expected.rpartition("/")[0]
    try:
        number = schema_number(str(version), name)
    except ValueError as exc:
        raise RecordingError(f"{where}: {exc}") from exc
    if number > schema_number(expected, name):
        raise RecordingError(
            f"{where}: written for {version}, newer than this CallSim reads ({expected}): upgrade CallSim"
        )


class Fields:
    """A JSON object's members read as the types a result holds; a :class:`ValueError` naming the key when
    one is missing (without a default) or of another type.  An absent or null object reads as empty."""

    def __init__(self, doc: JsonValue, where: str = "") -> None:
        if doc is None:
            doc = {}
        if not isinstance(doc, Mapping):
            raise ValueError(f"{where or 'the value'} is a JSON {type(doc).__name__}, not an object")
        self.doc: JsonObject = doc
        self.where = where

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def __contains__(self, key: str) -> bool:
        return key in self.doc

    def raw(self, key: str, default: JsonValue = None) -> JsonValue:
        return self.doc.get(key, default)

    def _need(self, key: str) -> JsonValue:
        if key not in self.doc:
            raise ValueError(f"{self._name(key)} is missing")
        return self.doc[key]

    def integer(self, key: str, default: int | None = None) -> int:
        value = self._need(key) if default is None or key in self.doc else default
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{self._name(key)} is not a whole number: {value!r}")
        return value

    def opt_integer(self, key: str) -> int | None:
        return None if self.doc.get(key) is None else self.integer(key)

    def number(self, key: str, default: float | None = None) -> float:
        """A number as written (an ``int`` stays one)."""
        value = self._need(key) if default is None or key in self.doc else default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{self._name(key)} is not a number: {value!r}")
        return value

    def opt_number(self, key: str) -> float | None:
        return None if self.doc.get(key) is None else self.number(key)

    def text(self, key: str, default: str | None = None) -> str:
        value = self._need(key) if default is None or key in self.doc else default
        if not isinstance(value, str):
            raise ValueError(f"{self._name(key)} is not a string: {value!r}")
        return value

    def opt_text(self, key: str) -> str | None:
        return None if self.doc.get(key) is None else self.text(key)

    def flag(self, key: str, default: bool | None = None) -> bool:
        value = self._need(key) if default is None or key in self.doc else default
        if not isinstance(value, bool):
            raise ValueError(f"{self._name(key)} is not true or false: {value!r}")
        return value

    def opt_flag(self, key: str) -> bool | None:
        return None if self.doc.get(key) is None else self.flag(key)

    def obj(self, key: str) -> Fields:
        """A member object (empty when absent or null)."""
        return Fields(self.doc.get(key), self._name(key))

    def opt_obj(self, key: str) -> Fields | None:
        return None if self.doc.get(key) is None else self.obj(key)

    def items(self) -> list[tuple[str, JsonValue]]:
        return list(self.doc.items())

    def objects(self) -> list[tuple[str, Fields]]:
        """Every member as an object (an object keyed by a value: ``by_scenario``, ``reasons``)."""
        return [(k, Fields(v, self._name(k))) for k, v in self.doc.items()]

    def values(self, key: str) -> list[JsonValue]:
        """A member list (empty when absent or null)."""
        value = self.doc.get(key)
        if value is None:
            return []
        if isinstance(value, str | Mapping) or not isinstance(value, Sequence):
            raise ValueError(f"{self._name(key)} is not a list: {value!r}")
        return list(value)

    def pair(self, key: str) -> tuple[float, float] | None:
        """A ``[lo, hi]`` member, numbers as written (None when absent or null)."""
        if self.doc.get(key) is None:
            return None
        items = self.values(key)
        if len(items) != 2:
            raise ValueError(f"{self._name(key)} is not a [lo, hi] pair: {items!r}")
        both = Fields({"lo": items[0], "hi": items[1]}, self._name(key))
        return both.number("lo"), both.number("hi")

    def texts(self, key: str) -> list[str]:
        out = self.values(key)
        if not all(isinstance(x, str) for x in out):
            raise ValueError(f"{self._name(key)} is not a list of strings")
        return [str(x) for x in out]

    def integers(self) -> dict[str, int]:
        """Every member, each a whole number (``rhythm_histogram``, ``verdicts``), in its order."""
        return {k: self.integer(k) for k in self.doc}

    def numbers(self) -> dict[str, float | None]:
        """Every member, each a number or null (a figures row's figures), in its order."""
        return {k: self.opt_number(k) for k in self.doc}
