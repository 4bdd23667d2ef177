"""The call's event log: one frozen dataclass per kind, one unit per field, one JSON codec.

Every fact that measurement, reports and benchmarks use is logged here by the call core, as it happens,
and read back from here.  The schema, with every field's unit, is ``docs/events.md``; :func:`event_to_json`
/ :func:`event_from_json` are the only places that know the JSON form.

Units: every position and duration is in **samples** of the call's timeline (16 kHz unless the recording
says otherwise), counted from pick-up.  ``t`` is the sample at which the core learned of the fact; fields
such as ``at`` or ``speech_start`` place the fact itself, which may be earlier (a reply onset is known
once its frame is heard) or later (a scheduled turn).  Only the JSON's ``ms`` copy of ``t`` is in ms.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from voice.core.audio import samples_to_ms
from voice.errors import RecordingError


@dataclass(frozen=True)
class Event:
    """Base of every event: ``t`` is the sample at which the core learned of it."""

    kind: ClassVar[str] = ""
    t: int


# --- the call's frame -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallStarted(Event):
    """Pick-up.  What the caller is about to play."""

    kind: ClassVar[str] = "call_start"
    dialogue: str
    turns: int  # caller turns planned
    greeting: bool  # the dialogue opens with the assistant speaking
    greeting_reference: str | None = None  # the dialogue's own opening assistant line


@dataclass(frozen=True)
class BackchannelCue:
    text: str
    at: int  # samples after the reply's onset


@dataclass(frozen=True)
class TurnPlanned(Event):
    """One caller turn as planned before the call (positions inside the turn's own audio)."""

    kind: ClassVar[str] = "turn_plan"
    turn: int  # index among caller turns
    text: str
    dialogue_turn: int = -1  # index in the dialogue's turn list
    audio_samples: int = 0
    speech_start: int = 0  # first audible sample of the turn's audio
    speech_end: int = 0  # one past its last audible sample
    think: int = 0  # planned gap after the reply ends
    think_source: str = ""  # "script" (pause_before_ms) or "random"
    pause: tuple[int, int] | None = None  # [start, end) of the mid-turn pause inside the audio
    barge_in: int | None = None  # start this long after the reply's onset
    backchannel: BackchannelCue | None = None
    reference: str | None = None  # the dialogue's assistant line after this turn


@dataclass(frozen=True)
class CallEnded(Event):
    kind: ClassVar[str] = "call_end"
    reason: str  # completed, assistant_hangup, assistant_silent, assistant_error, line_closed, ...
    failed: bool
    detail: str = ""
    caller_turns_started: int = 0
    caller_turns: int = 0


# --- what the line delivered ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AudioReceived(Event):
    """Assistant audio arrived at ``arrival`` and plays from ``start`` (after what was queued)."""

    kind: ClassVar[str] = "rx"
    samples: int
    arrival: int
    start: int


@dataclass(frozen=True)
class ControlReceived(Event):
    """A control message from the assistant (``clear``, ``hangup``, ``error``, ``log``, anything else)."""

    kind: ClassVar[str] = "control"
    event: str
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlayoutCleared(Event):
    """A ``clear``: unplayed assistant audio dropped at ``t``."""

    kind: ClassVar[str] = "clear"
    dropped: int = 0


@dataclass(frozen=True)
class MarkReceived(Event):
    """A playout mark (Twilio's ``mark``): answered once the audio queued before it has played."""

    kind: ClassVar[str] = "mark"
    name: str
    due: int  # where it plays: the end of what was queued when it arrived


@dataclass(frozen=True)
class MarkPlayed(Event):
    """The caller's playout reached a mark (or a ``clear`` dropped the audio before it): it is answered."""

    kind: ClassVar[str] = "mark_played"
    name: str
    at: int  # where it was due


@dataclass(frozen=True)
class HungUp(Event):
    kind: ClassVar[str] = "hangup"
    by: str  # "caller" or "assistant"
    reason: str = ""


@dataclass(frozen=True)
class LineDropped(Event):
    """The line closed (by the assistant, the network, or a protocol violation)."""

    kind: ClassVar[str] = "line_closed"
    reason: str


# --- what the caller heard and did ------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplyStarted(Event):
    """The caller heard the assistant start speaking at ``at`` (after caller turn ``turn``; -1: none)."""

    kind: ClassVar[str] = "reply_onset"
    turn: int
    at: int


@dataclass(frozen=True)
class ReplyEnded(Event):
    """The caller took the reply as finished; ``at`` is one past its last heard speech sample."""

    kind: ClassVar[str] = "reply_end"
    turn: int
    at: int


@dataclass(frozen=True)
class ReplyMissed(Event):
    """No reply came within the response timeout."""

    kind: ClassVar[str] = "no_response"
    turn: int
    waited: int
    missed: int  # missed replies in a row


@dataclass(frozen=True)
class CallerSpoke(Event):
    """A caller turn was scheduled: its speech plays over ``[speech_start, speech_end)``."""

    kind: ClassVar[str] = "caller_turn"
    turn: int
    mode: str  # first, after_reply, after_timeout, barge_in
    audio_start: int
    speech_start: int
    speech_end: int
    pause: tuple[int, int] | None = None  # the mid-turn pause on the call's timeline
    reply_end: int | None = None  # the reply it follows (after_reply only)
    think: int | None = None  # think time planned
    gap: int | None = None  # think time taken (more than planned if the reply ended late)


@dataclass(frozen=True)
class BargedIn(Event):
    """The caller cut into the reply: its first audible sample is at ``at``."""

    kind: ClassVar[str] = "barge_in"
    turn: int
    at: int
    reply_onset: int
    offset: int  # at - reply_onset


@dataclass(frozen=True)
class BargeInSkipped(Event):
    kind: ClassVar[str] = "barge_in_skipped"
    turn: int
    reason: str


@dataclass(frozen=True)
class BackchannelSaid(Event):
    """The caller said a backchannel over ``[start, end)`` during the reply."""

    kind: ClassVar[str] = "backchannel"
    turn: int
    text: str
    start: int
    end: int
    reply_onset: int = 0


@dataclass(frozen=True)
class BackchannelSkipped(Event):
    kind: ClassVar[str] = "backchannel_skipped"
    turn: int
    reason: str


@dataclass(frozen=True)
class TurnRequested(Event):
    """The reactive caller needs its next turn; transcribing, deciding and synthesizing start now."""

    kind: ClassVar[str] = "turn_request"
    turn: int
    reason: str  # reply_ended, interrupt (the reply is still going), reply_missed
    reply_end: int | None = None  # the reply it answers (reply_ended)


@dataclass(frozen=True)
class CallerDecided(Event):
    """What the reactive caller decided for turn ``turn``, and from what (re-scoring needs no LLM)."""

    kind: ClassVar[str] = "caller_decision"
    turn: int
    action: str  # say, hang_up, wait
    source: str  # llm (asked or replayed), fallback_script, fallback_hangup
    text: str = ""
    heard: str = ""  # the assistant's last reply as the caller heard it (transcript with timing tags)
    goal: str = ""  # with hang_up: yes, partly, no (the caller's own judgement)
    reason: str = ""  # the caller's why (hang_up), or why a fallback was used
    rejected: str = ""  # why the model's answer was refused, when it was
    key: str = ""  # the LLM answer cache key (replays)


@dataclass(frozen=True)
class CallerLate(Event):
    """The caller meant to speak at ``due`` but its turn was not ready: ``late`` is the simulator's gap."""

    kind: ClassVar[str] = "caller_late"
    turn: int
    due: int
    late: int


@dataclass(frozen=True)
class GoalReported(Event):
    """Whether the caller's goal was met, in the caller's own judgement (``met``: yes, partly, no)."""

    kind: ClassVar[str] = "goal"
    met: str
    reason: str = ""
    turns: int = 0  # caller turns said until then


CallEvent: TypeAlias = (
    CallStarted
    | TurnPlanned
    | CallEnded
    | AudioReceived
    | ControlReceived
    | PlayoutCleared
    | MarkReceived
    | MarkPlayed
    | HungUp
    | LineDropped
    | ReplyStarted
    | ReplyEnded
    | ReplyMissed
    | CallerSpoke
    | BargedIn
    | BargeInSkipped
    | BackchannelSaid
    | BackchannelSkipped
    | TurnRequested
    | CallerDecided
    | CallerLate
    | GoalReported
)
"""Any event of the log."""


def assistant_log(event: Event) -> Mapping[str, Any] | None:
    """The payload of an assistant's ``log`` control message (its own account of what it did), else None."""
    if isinstance(event, ControlReceived) and event.event == "log" and isinstance(event.payload, Mapping):
        return event.payload
    return None


EVENT_TYPES: dict[str, type[Event]] = {cls.kind: cls for cls in typing.get_args(CallEvent)}


# --- the JSON codec ---------------------------------------------------------------------------------------


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
