"""A call core shown with the controls of its caller: what the driver and a companion hold of a call.

A person's call (:class:`~voice.core.live.LiveCallCore`) and a reactive caller's
(:class:`~voice.core.reactive.ReactiveCallCore`) are no call cores of their own kind: each builds one
:class:`~voice.core.call.CallCore` with its caller's behaviour and shows it through a :class:`CallFront`,
with that caller's controls added (the person's audio, the reactive caller's turns).  The driver plays any
:class:`CallMachine`: a bare core or such a front.
"""

from __future__ import annotations

from typing import Protocol

from voice.core.call import CallCore, CallOutcome, LineInput, Tick
from voice.core.caller import CallerPlan
from voice.core.eventlog import EventLog
from voice.core.events import CallEvent


class CallMachine(Protocol):
    """What the driver (:mod:`voice.app.run.driver`) needs of a call: it feeds it, ticks it, reads it."""

    @property
    def log(self) -> EventLog: ...
    @property
    def done(self) -> bool: ...
    @property
    def outcome(self) -> CallOutcome | None: ...
    @property
    def events(self) -> list[CallEvent]: ...
    def receive(self, item: LineInput, at: int) -> None: ...
    def tick(self) -> Tick: ...


class CallFront:
    """A :class:`CallMachine` that forwards to the core it holds (``call``), for a caller with controls."""

    def __init__(self, call: CallCore) -> None:
        self.call = call

    @property
    def plan(self) -> CallerPlan:
        return self.call.plan

    @property
    def log(self) -> EventLog:
        return self.call.log

    @property
    def now(self) -> int:
        """Start of the next frame to produce (:attr:`CallCore.now`)."""
        return self.call.now

    @property
    def done(self) -> bool:
        return self.call.done

    @property
    def outcome(self) -> CallOutcome | None:
        return self.call.outcome

    @property
    def events(self) -> list[CallEvent]:
        return self.call.events

    def receive(self, item: LineInput, at: int) -> None:
        self.call.receive(item, at)

    def tick(self) -> Tick:
        return self.call.tick()

    def note(self, event: CallEvent) -> None:
        """Log what a companion of the call did (:meth:`CallCore.note`)."""
        self.call.note(event)
