"""The JSON form of the event log (``events.jsonl``): the one codec of :mod:`voice.core.events`.

Split from the schema so each stays small; :func:`event_to_json` / :func:`event_from_json` are the only
places that know the JSON form (``docs/events.md``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

from voice.core.audio import samples_to_ms
from voice.core.events import EVENT_TYPES, CallEvent, Event
from voice.errors import RecordingError


def event_to_json(event: Event, rate: int) -> dict[str, Any]:
    """One line of ``events.jsonl``: ``t``, its ``ms`` copy, ``kind``, then the fields (None left out)."""
    out: dict[str, Any] = {"t": event.t, "ms": round(samples_to_ms(event.t, rate), 3), "kind": event.kind}
    for f in dataclasses.fields(event):
        if f.name == "t":
            continue
        value = getattr(event, f.name)
        if value is None:
            continue
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        out[f.name] = value
    return out


def event_from_json(obj: Mapping[str, Any]) -> CallEvent:
    """Decode one line; :class:`RecordingError` names the field that is missing or of the wrong type.

    Fields unknown to this version are ignored (a newer writer may add some); an unknown kind is an error.
    """
    kind = obj.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordingError(f"unknown event kind {kind!r}")
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in obj:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise RecordingError(f"{kind}: missing field {f.name!r}")
            continue
        try:
            values[f.name] = _decode(obj[f.name], hints[f.name])
        except (TypeError, ValueError) as exc:
            raise RecordingError(f"{kind}: field {f.name!r}: {exc}") from exc
    return typing.cast(CallEvent, cls(**values))


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _decode(value: Any, hint: Any) -> Any:
    """``value`` from JSON as the type ``hint`` says, or TypeError."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _decode(value, inner)
    if hint is bool:
        if not isinstance(value, bool):
            raise TypeError(f"expected true/false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise TypeError(f"expected a whole number of samples, got {value!r}")
        return int(value)
    if hint is str:
        if not isinstance(value, str):
            raise TypeError(f"expected text, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, list | tuple) or len(value) != len(args):
            raise TypeError(f"expected a list of {len(args)}, got {value!r}")
        return tuple(_decode(v, a) for v, a in zip(value, args, strict=True))
    if origin is Mapping or hint is Mapping:
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, got {value!r}")
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, got {value!r}")
        inner = _hints(hint)
        return hint(**{f.name: _decode(value[f.name], inner[f.name]) for f in dataclasses.fields(hint)})
    raise TypeError(f"no decoder for {hint!r}")  # a schema bug, not a file's
