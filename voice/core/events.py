"""The call's event log: one frozen dataclass per kind, one unit per field.

Every fact that measurement, reports and benchmarks use is logged here by the call core, as it happens,
and read back from here.  The schema, with every field's unit, is ``docs/events.md``;
:mod:`voice.core.event_json` is the only place that knows the JSON form.

Units: every position and duration is in **samples** of the call's timeline (16 kHz unless the recording
says otherwise), counted from pick-up.  ``t`` is the sample at which the core learned of the fact; fields
such as ``at`` or ``speech_start`` place the fact itself, which may be earlier (a reply onset is known
once its frame is heard) or later (a scheduled turn).  Only the JSON's ``ms`` copy of ``t`` is in ms.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias, TypedDict


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


class CapCount(TypedDict):
    """One capped kind's records: how many the call made, how many the log kept."""

    received: int
    kept: int


@dataclass(frozen=True)
class RecordsCapped(Event):
    """The assistant sent more of some kinds of record than a call keeps (``voice.core.eventlog``).

    ``counts`` maps each capped kind (``control:<event>``, ``clear``, ``mark``, ``mark_played``) to
    ``{"received": n, "kept": k}``: the first ``k`` are in the log, the other ``n - k`` were counted only.
    Logged once, just before ``call_end``, only when something was dropped.
    """

    kind: ClassVar[str] = "capped"
    counts: Mapping[str, CapCount] = field(default_factory=dict)


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
class CallerEarly(Event):
    """A decision the caller made early, at a pause of the reply, before it was sure the reply had ended:
    ``kept`` when the reply had in fact ended there (its answer was used), else thrown away (issue 26)."""

    kind: ClassVar[str] = "caller_early"
    turn: int
    reply_end: int  # the reply's end it guessed
    kept: bool


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
    | RecordsCapped
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
    | CallerEarly
    | GoalReported
)
"""Any event of the log."""


def assistant_log(event: Event) -> Mapping[str, Any] | None:
    """The payload of an assistant's ``log`` control message (its own account of what it did), else None."""
    if isinstance(event, ControlReceived) and event.event == "log" and isinstance(event.payload, Mapping):
        return event.payload
    return None


EVENT_TYPES: dict[str, type[Event]] = {cls.kind: cls for cls in typing.get_args(CallEvent)}
