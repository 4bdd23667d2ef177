"""The JSON form of the event log (``events.jsonl``): the one codec of :mod:`voice.core.events`.

Split from the schema so each stays small; :func:`event_to_json` / :func:`event_from_json` are the only
places that know the JSON form (``docs/events.md``).  The JSON value types live here too, in the core, so
that every room that writes or reads JSON (a recording's ``meta``, a line's wire messages, the result
files through :mod:`voice.metrics.model.jsonio`) types it the same way.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from voice.core.audio import samples_to_ms
from voice.core.events import EVENT_TYPES, AudioReceived, CallEvent, Event
from voice.errors import RecordingError

JsonScalar: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = JsonScalar | Sequence["JsonValue"] | Mapping[str, "JsonValue"]
JsonObject: TypeAlias = Mapping[str, JsonValue]  # an open record (a line's description, a call's labels)


def as_json(value: object) -> JsonValue:
    """A value another part typed its own way (a ``TypedDict``, a tuple) as the JSON it is written as:
    objects and lists recursively, anything else JSON cannot hold as its ``str`` (as
    :func:`voice.metrics.model.jsonio.json_bytes` writes it), so that the bytes written do not change."""
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    return str(value)


def as_json_object(value: Mapping[str, object]) -> dict[str, JsonValue]:
    """:func:`as_json` of an object (a ``TypedDict``, say), typed as one."""
    return {str(k): as_json(v) for k, v in value.items()}


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


# --- audio arrivals as runs: one line per run of consecutive ``rx`` records -----------------------------

RX_RUN = "rx_run"
RX_RUN_MAX = 50  # records per run line at most (one second of 20 ms frames) ...
# ... and a run spans less than one second of call time, so a streamed log lags by a second or two at most


class RxRuns:
    """Packs consecutive ``rx`` records into ``rx_run`` lines with the same information.

    A call logs one :class:`~voice.core.events.AudioReceived` per 20 ms frame the assistant sends (~70 bytes
    each as a line of its own); a run line keeps each record's ``t``, ``samples``, ``arrival`` and ``start``
    as differences from the one before (``samples`` once when all are equal), about 12 bytes a frame.
    :func:`expand_rx_run` gives the records back, in order, so every reader sees what a per-record log
    holds.  Feed records in order with :meth:`add`; :meth:`take` returns the pending run line, if any.
    Where a run ends depends on the records alone (another kind, :data:`RX_RUN_MAX` records, one second of
    call time), so a log streamed as the call runs is byte for byte the log saved at once.
    """

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self._run: list[AudioReceived] = []

    def add(self, event: CallEvent) -> list[dict[str, Any]]:
        """The lines that are complete once ``event`` is known (a run ends at any other record)."""
        if isinstance(event, AudioReceived):
            run = self._run
            full = bool(run) and (len(run) >= RX_RUN_MAX or event.t - run[0].t >= self.rate)
            done = self.take() if full else []
            self._run.append(event)
            return done
        return [*self.take(), event_to_json(event, self.rate)]

    def take(self) -> list[dict[str, Any]]:
        """The pending run as one line (a lone record as its plain ``rx`` line), or nothing."""
        run, self._run = self._run, []
        if not run:
            return []
        if len(run) == 1:
            return [event_to_json(run[0], self.rate)]
        first = run[0]
        line: dict[str, Any] = {
            "t": first.t,
            "ms": round(samples_to_ms(first.t, self.rate), 3),
            "kind": RX_RUN,
            "n": len(run),
        }
        for name in ("t", "samples", "arrival", "start"):
            values = [getattr(e, name) for e in run]
            if name == "samples" and len(set(values)) == 1:
                line[name] = values[0]
            else:
                line[f"d_{name}"] = [b - a for a, b in zip([0, *values], values, strict=False)]
        return [line]


def expand_rx_run(obj: Mapping[str, Any]) -> list[AudioReceived]:
    """The ``rx`` records of one ``rx_run`` line; :class:`RecordingError` if it does not add up."""
    try:
        n = int(obj["n"])
        columns: dict[str, list[int]] = {}
        for name in ("t", "samples", "arrival", "start"):
            if name == "samples" and isinstance(obj.get("samples"), int):
                columns[name] = [obj["samples"]] * n
                continue
            deltas = obj[f"d_{name}"]
            if not isinstance(deltas, list) or len(deltas) != n:
                raise RecordingError(f"{RX_RUN}: d_{name} must list {n} numbers")
            total, values = 0, []
            for d in deltas:
                total += int(d)
                values.append(total)
            columns[name] = values
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordingError(f"{RX_RUN}: {exc}") from exc
    return [
        AudioReceived(t, samples, arrival, start)
        for t, samples, arrival, start in zip(
            columns["t"], columns["samples"], columns["arrival"], columns["start"], strict=True
        )
    ]
