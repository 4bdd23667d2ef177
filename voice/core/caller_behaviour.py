"""What differs between callers, given to the one call core as an object rather than by subclassing it.

A scripted caller, a person (:mod:`voice.core.live`) and a caller that decides as it goes
(:mod:`voice.core.reactive`) hear the assistant alike, through the same :class:`~voice.core.call.CallCore`.
They differ in what they do during a reply, after it, when no reply came, after each frame and as the call
ends: a :class:`CallerBehaviour` the core calls at those points.  It acts through a
:class:`CallView`, the narrow public face the core shows it (so no behaviour reaches into the core's
private state, and the core's own bookkeeping can change without breaking one).
:class:`ScriptedBehaviour`, the default, plays the cues of a :class:`~voice.core.caller.CallerPlan`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Protocol

from voice.core import events as ev
from voice.core.audio import Pcm, active_bounds
from voice.core.caller import PlannedTurn


class CallState(enum.Enum):
    """Where the caller's side of the call stands (what the core does with the next frame)."""

    AWAIT_REPLY = "await_reply"
    IN_REPLY = "in_reply"
    SPEAKING = "speaking"
    THINKING = "thinking"  # a caller that decides as it goes is making its next turn (voice.core.reactive)
    CLOSING = "closing"
    DRAINING = "draining"
    DONE = "done"


class CallView(Protocol):
    """What a caller behaviour may see and do of its call core (:class:`~voice.core.call.CallCore`, where
    each is documented).  Positions are samples on the call's timeline."""

    @property
    def now(self) -> int: ...  # start of the next frame to produce
    @property
    def done(self) -> bool: ...
    @property
    def state(self) -> CallState: ...
    @property
    def last_reply_onset(self) -> int: ...  # where the last reply heard began
    @property
    def last_assistant_sound(self) -> int: ...  # one past the last heard assistant speech (-1: none yet)
    @property
    def end_of_reply(self) -> int: ...  # the silence after which a reply has ended
    @property
    def hangup_after(self) -> int: ...  # how long after the last reply the caller hangs up
    @property
    def turns(self) -> Sequence[PlannedTurn]: ...
    @property
    def upcoming(self) -> PlannedTurn | None: ...  # the caller's next planned turn

    def note(self, event: ev.CallEvent) -> None: ...
    def finish(self, at: int, reason: str, failed: bool, detail: str = "") -> None: ...
    def start_turn(
        self,
        turn: PlannedTurn,
        think: int,
        *,
        mode: str,
        at: int | None = None,
        after: int | None = None,
        hold: bool = False,
    ) -> ev.CallerSpoke: ...
    def schedule(self, pcm: Pcm, at: int) -> int: ...
    def set_turn_end(self, until: int | None, speech_end: int | None = None) -> None: ...
    def add_turn(self, turn: PlannedTurn) -> None: ...
    def turn_taken(self, index: int) -> None: ...
    def await_reply(self, since: int) -> None: ...
    def think(self) -> None: ...
    def hang_up_at(self, at: int, reason: str) -> None: ...


class CallerBehaviour(Protocol):
    """The caller's own decisions, called by the core at the points where callers differ (``e``: the end
    of the frame being produced)."""

    def during_reply(self, call: CallView, e: int, turn: PlannedTurn | None) -> bool:
        """Each frame of a reply, with the caller's next planned turn: True once that turn has begun."""
        ...

    def after_reply(self, call: CallView, e: int, reply_end: int, turn: PlannedTurn | None) -> None:
        """The reply ended at ``reply_end``; ``turn`` is the caller's next planned turn."""
        ...

    def after_timeout(self, call: CallView, e: int, turn: PlannedTurn | None) -> None:
        """No reply came in time (and the call goes on); ``turn`` is the caller's next planned turn."""
        ...

    def after_frame(self, call: CallView, start: int, caller: Pcm) -> None:
        """Frame ``[start, start + len(caller))`` was produced; ``caller`` is what the caller sent in it."""
        ...

    def finishing(self, call: CallView, at: int) -> None:
        """The call ends at ``at`` (before its outcome is logged): put what is held on the record."""
        ...


class ScriptedBehaviour:
    """The caller of a :class:`~voice.core.caller.CallerPlan`: every turn and cue is known before the call.
    One per call (it remembers the reply it backchannelled in)."""

    def __init__(self) -> None:
        self._backchannel_in: int | None = None  # the onset of the reply a backchannel was due in

    def backchannel(self, call: CallView, e: int, index: int, text: str, audio: Pcm, offset: int) -> None:
        """Say ``audio`` (its first audible sample) ``offset`` after the reply's onset, once per reply; not
        if the reply has ended by then."""
        onset = call.last_reply_onset
        if self._backchannel_in == onset:  # replies begin at distinct samples
            return
        b = active_bounds(audio) or (0, len(audio))
        at = onset + offset - b[0]
        if at < e:
            self._backchannel_in = onset
            if call.last_assistant_sound >= call.now - call.end_of_reply // 2:
                begin = call.schedule(audio, at)
                call.note(ev.BackchannelSaid(e, index, text, begin + b[0], begin + b[1], onset))
            else:
                call.note(ev.BackchannelSkipped(e, index, "reply already ended"))

    def during_reply(self, call: CallView, e: int, turn: PlannedTurn | None) -> bool:
        """The scripted cues during a reply: a barge-in (then True: the turn has begun), a backchannel."""
        if turn is not None and turn.barge_in is not None:
            # the cue places the caller's first audible sample, not the start of its (padded) audio
            onset = call.last_reply_onset
            at = onset + turn.barge_in - turn.speech_start
            if at < e:
                start = max(at, call.now)
                said = start + turn.speech_start
                call.note(ev.BargedIn(e, turn.index, said, onset, said - onset))
                call.start_turn(turn, 0, mode="barge_in", at=start)
                return True
        if turn is not None and turn.backchannel_at is not None and turn.backchannel_audio is not None:
            self.backchannel(
                call, e, turn.index, turn.backchannel_text or "", turn.backchannel_audio, turn.backchannel_at
            )
        return False

    def after_reply(self, call: CallView, e: int, reply_end: int, turn: PlannedTurn | None) -> None:
        """The next turn, its think time after the reply; nothing more to say: hang up a moment later."""
        if turn is None:
            call.hang_up_at(max(reply_end + call.hangup_after, e), "completed")
            return
        if turn.barge_in is not None:
            call.note(ev.BargeInSkipped(e, turn.index, "reply ended before the barge-in point"))
        call.start_turn(
            turn, turn.think, mode="after_reply", at=max(reply_end + turn.think, e), after=reply_end
        )

    def after_timeout(self, call: CallView, e: int, turn: PlannedTurn | None) -> None:
        """The next turn at once; if the last reply never came, the caller gives up."""
        if turn is None:
            call.note(ev.HungUp(e, "caller", "no final reply"))
            call.finish(e, "completed", False, "the last reply never came")
            return
        call.start_turn(turn, 0, mode="after_timeout", at=e)

    def after_frame(self, call: CallView, start: int, caller: Pcm) -> None:
        """Nothing: the script already holds every turn."""

    def finishing(self, call: CallView, at: int) -> None:
        """Nothing is held back from the record."""
