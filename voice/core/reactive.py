"""The call core for a caller that decides as it goes (an LLM over what it heard), still I/O-free.

A scripted caller knows every turn before the call; a reactive one makes each turn when it is needed: after
the reply it answers has ended, when it decides to cut into a reply that goes on too long, or when no reply
came.  :class:`ReactiveCallCore` then raises a :class:`TurnRequest` (logged as ``turn_request``) and keeps
the call going (hearing, sending silence) until a companion — :mod:`voice.react.session`, which transcribes,
asks the model and synthesizes — answers with :meth:`ReactiveCallCore.supply`.  The caller's side is a
behaviour the one call core is given (:class:`ReactiveBehaviour`); :class:`ReactiveCallCore` is the core
built with it.

Timing stays honest: a turn is said at ``reply end + think`` as a scripted one would be; if it was not ready
by then it is said the moment it is, and ``caller_late`` records by how much, so the gap is the
simulator's, never the assistant's (no assistant metric starts before the caller's speech ends).  A barge-in
or backchannel is placed on an exact sample, like a scripted one.

A turn may be supplied by its first clause (``Say(more=True)``), so it starts once that is voiced, and the
rest follows through :meth:`ReactiveCallCore.extend`, clause by clause (``more=True`` for all but the last
piece), each played right after what was already scheduled.  The turn's ``turn_plan`` and ``caller_turn``
records wait for the last piece, so they hold the whole turn (its speech end, on which the assistant's
latency starts); a piece that came after the audio before it had played leaves a gap in the caller's speech,
logged as ``caller_late`` and as the turn's mid-turn ``pause``, never hidden.  ``pause`` holds one gap: the
longest, if several pieces were late (every one is a ``caller_late`` inside the turn, and the metrics count
each as the caller's silence: :mod:`voice.metrics.measure`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from voice.core import events as ev
from voice.core.audio import Pcm, active_bounds
from voice.core.call import CallCore
from voice.core.caller import CallerPlan, PlannedTurn
from voice.core.caller_behaviour import CallState, CallView, ScriptedBehaviour
from voice.core.detector import SpeechDetector
from voice.core.front import CallFront


@dataclass(frozen=True)
class ReplyCues:
    """What the caller will do during the assistant's next reply (samples after its onset)."""

    backchannel_text: str | None = None
    backchannel_audio: Pcm | None = None
    backchannel_at: int | None = None
    interrupt_after: int | None = None  # still talking this long after its onset: the caller cuts in


@dataclass(frozen=True)
class Say:
    """The caller's next turn (``turn.index`` is the requested one) and its cues for the reply to it."""

    turn: PlannedTurn
    cues: ReplyCues = ReplyCues()
    more: bool = False  # ``turn.audio`` is its first clause: the rest comes by ReactiveCallCore.extend


@dataclass
class _Streaming:
    """A turn supplied by its first clause: its records, held until the rest is in, and where it ends."""

    turn: int
    planned: ev.TurnPlanned
    start: int = 0  # where its audio begins
    end: int = 0  # one past the last scheduled sample of its audio
    spoke: ev.CallerSpoke | None = None


@dataclass(frozen=True)
class HangUp:
    """The caller ends the call (its goal reached or abandoned, or a turn limit): ``reason`` says which."""

    reason: str


@dataclass(frozen=True)
class Wait:
    """Asked whether to cut in, the caller lets the reply go on."""


CallerMove = Say | HangUp | Wait


@dataclass(frozen=True)
class TurnRequest:
    """The caller needs turn ``turn``: ``reason`` is reply_ended, interrupt or reply_missed."""

    turn: int
    reason: str
    at: int  # the sample at which the need arose
    reply_onset: int | None  # the reply being answered or cut into (None: none came)
    reply_end: int | None = None  # reply_ended: where it ended


def _longest(old: tuple[int, int] | None, gap: tuple[int, int]) -> tuple[int, int]:
    """The turn's mid-turn pause: one gap only, so the longest of them."""
    return old if old is not None and old[1] - old[0] >= gap[1] - gap[0] else gap


class ReactiveBehaviour:
    """A caller that makes each turn when it is needed (a
    :class:`~voice.core.caller_behaviour.CallerBehaviour`): it raises a :class:`TurnRequest` and the turn
    comes through :meth:`supply` (and :meth:`extend`).

    A turn planned before the call keeps its scripted cues.  ``first_cues`` apply to the first reply; at
    ``max_turns`` caller turns the caller hangs up after the next reply ("turn limit").
    """

    def __init__(self, max_turns: int, first_cues: ReplyCues = ReplyCues()) -> None:
        self.max_turns = max_turns
        self._script = ScriptedBehaviour()  # for turns planned before the call, and to place backchannels
        self._cues = first_cues
        self.request: TurnRequest | None = None  # the turn the caller is waiting for
        self._asked_interrupt = False  # one interrupt question per reply
        self._streaming: _Streaming | None = None

    # --- the caller's controls ----------------------------------------------------------------------

    def guess(self, call: CallView, quiet: int) -> TurnRequest | None:
        """The request the call will raise if the reply it hears has ended, once it has been quiet
        ``quiet`` samples (less than the end-of-reply silence); None when no such request is coming."""
        if call.done or call.state is not CallState.IN_REPLY or self.request is not None:
            return None
        index, heard = len(call.turns), call.last_assistant_sound
        if index >= self.max_turns or call.upcoming is not None or call.now - heard < quiet:
            return None
        return TurnRequest(index, "reply_ended", call.now, call.last_reply_onset, heard)

    def supply(self, call: CallView, move: CallerMove, at: int) -> None:
        """Answer the pending request with ``move``, ready at sample ``at`` (at least the next frame)."""
        req = self.request
        if req is None or call.done:
            return
        self.request = None
        ready = max(at, call.now)
        if isinstance(move, Wait):
            if req.reason != "interrupt":  # the reply ended while the caller made up its mind: ask again
                self.request = req
                call.note(ev.TurnRequested(ready, req.turn, req.reason, req.reply_end))
            return  # the reply simply goes on
        if isinstance(move, HangUp):
            self._hang_up(call, req, move.reason, ready)
            return
        turn = move.turn
        if turn.index != req.turn:
            raise ValueError(f"supplied turn {turn.index}, but turn {req.turn} was requested")
        call.add_turn(turn)
        planned = dataclasses.replace(turn.planned(None), t=ready)
        if move.more:
            self._streaming = _Streaming(turn.index, planned)  # logged with the rest (extend)
        else:
            call.note(planned)
        self._cues, self._asked_interrupt = move.cues, False
        hold = move.more  # its caller_turn record waits for the rest, whose speech end is the turn's
        if req.reason == "interrupt" and call.state is CallState.IN_REPLY:
            onset, reply = ready + turn.speech_start, call.last_reply_onset
            call.note(ev.BargedIn(ready, turn.index, onset, reply, onset - reply))
            spoke = call.start_turn(turn, 0, mode="barge_in", at=ready, hold=hold)
        elif req.reply_end is not None:
            # as a scripted turn: ``think`` after the reply's end, but not before the end was noticed
            due = max(req.reply_end + turn.think, req.at)
            if ready > due:
                call.note(ev.CallerLate(ready, turn.index, due, ready - due))
            spoke = call.start_turn(
                turn, turn.think, mode="after_reply", at=max(due, ready), after=req.reply_end, hold=hold
            )
        else:
            spoke = call.start_turn(turn, 0, mode="after_timeout", at=ready, hold=hold)
        if (s := self._streaming) is not None:  # the caller keeps the turn until its rest is in
            s.start, s.end, s.spoke = spoke.audio_start, spoke.audio_start + len(turn.audio), spoke
            call.set_turn_end(None)

    def extend(
        self, call: CallView, index: int, pcm: Pcm, at: int, *, said: str | None = None, more: bool = False
    ) -> None:
        """The next piece of turn ``index``, ready at sample ``at`` (:meth:`ReactiveCallCore.extend`)."""
        s = self._streaming
        if s is None or s.turn != index:
            return
        if said is not None:  # the records say what was said, should the call end before the rest comes
            s.planned = dataclasses.replace(s.planned, text=said)
        bounds = active_bounds(pcm) if len(pcm) else None
        if bounds is None or call.done:
            call.set_turn_end(s.end)
            self._flush(call)
            return
        start = call.schedule(pcm, at)
        late = start > s.end
        if late:  # this piece was not ready when the audio before it ended: the simulator's gap
            call.note(ev.CallerLate(start, index, s.end, start - s.end))
        s.end, speech_end = start + len(pcm), start + bounds[1]
        call.set_turn_end(None, speech_end)  # still held: the reply is awaited from the new speech end
        s.planned = dataclasses.replace(
            s.planned, audio_samples=s.end - s.start, speech_end=speech_end - s.start
        )
        if (spoke := s.spoke) is not None:
            pause = _longest(spoke.pause, (spoke.speech_end, start + bounds[0])) if late else spoke.pause
            s.spoke = dataclasses.replace(spoke, speech_end=speech_end, pause=pause)
        if more:
            return  # the caller keeps the turn for the next piece
        call.set_turn_end(s.end)
        self._flush(call)

    def _flush(self, call: CallView) -> None:
        """Log a streamed turn's held records (as they stand: the call may end before its rest is in)."""
        s, self._streaming = self._streaming, None
        if s is not None:
            call.note(s.planned)
            if s.spoke is not None:
                call.note(s.spoke)

    # --- CallerBehaviour ----------------------------------------------------------------------------

    def during_reply(self, call: CallView, e: int, turn: PlannedTurn | None) -> bool:
        """A planned turn's scripted cues; else this reply's cues: a backchannel, a question to cut in."""
        if turn is not None:
            return self._script.during_reply(call, e, turn)
        cues, index = self._cues, len(call.turns)
        if cues.backchannel_audio is not None and cues.backchannel_at is not None:
            self._script.backchannel(
                call, e, index, cues.backchannel_text or "", cues.backchannel_audio, cues.backchannel_at
            )
        limit = cues.interrupt_after
        if limit is not None and not self._asked_interrupt and e - call.last_reply_onset >= limit:
            self._asked_interrupt = True
            self._ask(call, e, "interrupt", None)
        return False

    def after_reply(self, call: CallView, e: int, reply_end: int, turn: PlannedTurn | None) -> None:
        """A planned turn as scripted; else the caller asks for its next turn (or hangs up at the limit)."""
        if turn is not None:
            self._script.after_reply(call, e, reply_end, turn)
            return
        req = self.request
        if req is not None and req.reason == "interrupt":  # the reply ended before the caller cut in
            call.note(ev.BargeInSkipped(e, req.turn, "reply ended before the caller was ready to cut in"))
            self.request = TurnRequest(req.turn, "reply_ended", req.at, call.last_reply_onset, reply_end)
            call.think()
            return
        self._ask(call, e, "reply_ended", reply_end)

    def after_timeout(self, call: CallView, e: int, turn: PlannedTurn | None) -> None:
        """A planned turn as scripted; else the caller asks for its next turn."""
        if turn is not None:
            self._script.after_timeout(call, e, turn)
            return
        self._ask(call, e, "reply_missed", None)

    def after_frame(self, call: CallView, start: int, caller: Pcm) -> None:
        """Nothing: the caller's moves come through :meth:`supply`."""

    def finishing(self, call: CallView, at: int) -> None:
        """A turn still streaming is logged as it stands."""
        if self._streaming is not None:
            call.set_turn_end(self._streaming.end)
            self._flush(call)

    # --- helpers --------------------------------------------------------------------------------------

    def _ask(self, call: CallView, e: int, reason: str, reply_end: int | None) -> None:
        index = len(call.turns)
        if index >= self.max_turns and reason != "interrupt":
            self._hang_up(call, TurnRequest(index, reason, e, None, reply_end), "turn limit", e)
            return
        if index >= self.max_turns:
            return
        onset = call.last_reply_onset if reason != "reply_missed" else None
        self.request = TurnRequest(index, reason, e, onset, reply_end)
        call.note(ev.TurnRequested(e, index, reason, reply_end))
        if reason != "interrupt":
            call.think()

    def _hang_up(self, call: CallView, req: TurnRequest, reason: str, ready: int) -> None:
        if req.reply_end is None:  # mid-reply or after a missed one: at once
            call.note(ev.HungUp(ready, "caller", reason))
            call.finish(ready, "completed", False, reason)
            return
        call.hang_up_at(max(req.reply_end + call.hangup_after, ready), reason)


class ReactiveCallCore(CallFront):
    """A :class:`~voice.core.call.CallCore` whose caller decides as it goes (:class:`ReactiveBehaviour`):
    its turns after the first come one at a time through :meth:`supply`.

    ``plan.turns`` holds what is known before the call: the first turn when the caller speaks first, else
    nothing.  ``first_cues`` apply to the first reply (the greeting or the answer to the first turn).  At
    ``max_turns`` caller turns the caller hangs up after the next reply ("turn limit").
    """

    def __init__(
        self,
        plan: CallerPlan,
        *,
        max_turns: int,
        first_cues: ReplyCues = ReplyCues(),
        detector: SpeechDetector | None = None,
    ) -> None:
        self.behaviour = ReactiveBehaviour(max_turns, first_cues)
        super().__init__(CallCore(plan, detector, self.behaviour))

    @property
    def max_turns(self) -> int:
        return self.behaviour.max_turns

    @property
    def request(self) -> TurnRequest | None:
        """The turn the caller is waiting for, or None."""
        return None if self.done else self.behaviour.request

    @property
    def reply_onset(self) -> int | None:
        """Where the reply being heard began (None: none is being heard)."""
        in_reply = self.call.state is CallState.IN_REPLY and not self.done
        return self.call.last_reply_onset if in_reply else None

    def guess(self, quiet: int) -> TurnRequest | None:
        """The request this core will raise if the reply it hears has ended, once it has been quiet
        ``quiet`` samples (less than the end-of-reply silence); None when no such request is coming.

        For a companion that decides early (issue 26): if the request that comes is this one (the same
        turn, reply onset and end: nothing more was heard), the decision made for the guess is its decision.
        """
        return self.behaviour.guess(self.call, quiet)

    def supply(self, move: CallerMove, at: int) -> None:
        """Answer the pending request with ``move``, ready at sample ``at`` (at least the next frame)."""
        self.behaviour.supply(self.call, move, at)

    def extend(self, index: int, pcm: Pcm, at: int, *, said: str | None = None, more: bool = False) -> None:
        """The next piece of turn ``index`` (supplied by its first clause), ready at sample ``at``: played
        right after what was scheduled for the turn, or at once if that has played (the gap is logged as
        ``caller_late`` and, if the longest so far, as the turn's mid-turn pause: the simulator's, never the
        assistant's).  ``more``: another piece follows, and the caller keeps the turn until it comes; else
        the turn ends with this one.  Empty: the turn ends with what was scheduled.  ``said`` (the text said
        with this piece) replaces the turn's text in its records, which then say what the caller really said
        if the turn or the call ends here."""
        self.behaviour.extend(self.call, index, pcm, at, said=said, more=more)
