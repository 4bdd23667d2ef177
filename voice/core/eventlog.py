"""The call core's event log: every record kind a bot can multiply is capped and counted, and the log can
be streamed to a sink (the call's ``events.jsonl``) as the call runs.

A bot decides how many ``clear``, ``log``, mark or unknown messages it sends; each became a record held
in memory until the call was saved, so a chatty bot could grow a call to gigabytes (a probe: tiny unknown
events for 30 s, 2.85 GB).  Here the first :data:`MAX_RECORDS_PER_KIND` records of each such kind are
kept and the rest only counted; the counts go into the log once, as ``capped``
(:class:`~voice.core.events.RecordsCapped`), just before ``call_end``.  Only the *record* is dropped: the
core still acts on every message (a ``clear`` still drops the unplayed audio), so what the caller hears,
and so every measurement, is the same as without the cap.  A ``log`` or unknown event's payload is cut to
:data:`MAX_PAYLOAD_CHARS` characters of JSON, with a marker, for the same reason.

I/O-free like the core: the sink is a callable that a runner points at a file
(:class:`voice.recording.EventStream`).  Once streaming, the per-frame ``rx`` records (one per audio
message, the bulk of a log) are no longer also kept in memory: nothing measured from memory reads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from voice.core import events as ev
from voice.core.events import CallEvent

MAX_RECORDS_PER_KIND = 1000  # records of one capped kind kept per call; more are counted only
MAX_PAYLOAD_CHARS = 4096  # a control event's payload, as JSON, beyond which it is cut
MAX_EVENT_NAME_CHARS = 200  # an event name a bot made up, as recorded
CONTROL_EVENTS = ("clear", "hangup", "error", "log")  # the protocol's own; any other is "unknown"
TRUNCATED = "truncated"  # the key of a cut payload: {"truncated": "<first chars of its JSON>…", "chars": n}

EventSink = Callable[[CallEvent], None]


def capped_kind(event: CallEvent) -> str | None:
    """The capped kind ``event`` counts against, or None for a record the core makes at its own pace."""
    if isinstance(event, ev.ControlReceived):
        return f"control:{event.event if event.event in CONTROL_EVENTS else 'unknown'}"
    if isinstance(event, ev.PlayoutCleared):
        return "clear"
    if isinstance(event, ev.MarkReceived):
        return "mark"
    if isinstance(event, ev.MarkPlayed):
        return "mark_played"
    return None


def bounded_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` as recorded: itself if its JSON is short, else its JSON's start behind a marker."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    if len(text) <= MAX_PAYLOAD_CHARS:
        return dict(payload)
    return {TRUNCATED: text[:MAX_PAYLOAD_CHARS] + "…", "chars": len(text)}


def bounded_name(name: str) -> str:
    """An event name as recorded (a bot's made-up one may be any length)."""
    return name if len(name) <= MAX_EVENT_NAME_CHARS else name[:MAX_EVENT_NAME_CHARS] + "…"


class EventLog:
    """The records of one call, in order: capped per kind, optionally streamed to a sink."""

    def __init__(self, cap: int = MAX_RECORDS_PER_KIND) -> None:
        self.cap = cap
        self.events: list[CallEvent] = []  # what is kept in memory (all kept records, unless streaming)
        self._received: dict[str, int] = {}  # per capped kind, how many the call made
        self._sink: EventSink | None = None
        self._keep_audio = True

    def append(self, event: CallEvent) -> None:
        """Record ``event``, unless it is one more of a kind already at its cap (then it is counted)."""
        kind = capped_kind(event)
        if kind is not None:
            n = self._received[kind] = self._received.get(kind, 0) + 1
            if n > self.cap:
                return
        if self._sink is not None:
            self._sink(event)
            if not self._keep_audio and isinstance(event, ev.AudioReceived):
                return
        self.events.append(event)

    def stream_to(self, sink: EventSink) -> None:
        """Send every record so far, then each new one, to ``sink``; stop keeping ``rx`` ones in memory."""
        for event in self.events:
            sink(event)
        self.events = [e for e in self.events if not isinstance(e, ev.AudioReceived)]
        self._sink, self._keep_audio = sink, False

    def capped(self) -> dict[str, ev.CapCount]:
        """The kinds that went over the cap: ``{kind: {"received": n, "kept": cap}}``."""
        return {
            kind: {"received": n, "kept": self.cap}
            for kind, n in sorted(self._received.items())
            if n > self.cap
        }
