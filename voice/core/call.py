"""The I/O-free call core: the caller's side of one call as a state machine on a sample timeline.

The driver feeds it what arrives from the line (:meth:`CallCore.receive`, stamped with the arrival sample)
and asks it, once per 20 ms frame, for the next :class:`Tick`: the caller audio to send for that frame,
what the caller heard during it (the played-out assistant audio), and whether to hang up.  The core never
reads a clock, sleeps, or touches a socket, so a whole call runs frame-exact on a virtual clock in tests.

Tick ``k`` covers samples ``[k*320, (k+1)*320)`` and is issued when that interval has passed, so arrivals
stamped inside it are heard inside it.  The caller decides causally from what it has heard so far, but can
place its own speech at any sample of the current or a later frame, so barge-ins are sample-exact.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm, ms_to_samples, shared_silence
from voice.core.caller import CallerPlan, PlannedTurn
from voice.core.caller_behaviour import CallerBehaviour, CallState, ScriptedBehaviour
from voice.core.detector import EnergyDetector, SpeechDetector
from voice.core.eventlog import EventLog, bounded_name, bounded_payload
from voice.core.events import CallEvent
from voice.core.playout import PlayoutBuffer

# --- what the line delivers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AssistantAudio:
    pcm: Pcm


@dataclass(frozen=True)
class AssistantControl:
    """A control message from the assistant: ``clear``, ``hangup``, ``error``, ``log`` or anything else."""

    event: str
    payload: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class PlayoutMark:
    """The assistant asks to be told when the audio it sent before this has played (Twilio's ``mark``).

    The core reports ``name`` in :attr:`Tick.marks` of the frame in which that audio ends, or in which a
    ``clear`` drops it (answered at once, as Twilio does), and logs ``mark_played``.
    """

    name: str


@dataclass(frozen=True)
class LineClosed:
    reason: str


LineInput = AssistantAudio | AssistantControl | PlayoutMark | LineClosed

# A line's closing reason that begins with one of these ends the call at once with it as the outcome: a
# protocol violation, or a media path that never carried a packet (a SIP or WebRTC line's ``no_media``).
FATAL_LINE_REASONS = ("protocol_error", "no_media")
MAX_QUEUED_S = 60  # assistant audio queued ahead of playout beyond this is a flood (a protocol error)


@dataclass(frozen=True)
class Tick:
    """The core's answer for one frame."""

    frame: int
    caller: Pcm  # send this to the assistant
    heard: Pcm  # what the caller heard during the same 20 ms
    hangup: str | None = None  # the caller hangs up after sending this frame (reason)
    done: bool = False  # the call is over; no more ticks
    marks: tuple[str, ...] = ()  # names of the PlayoutMarks played out by the end of this frame, in order


@dataclass(frozen=True)
class CallOutcome:
    # completed, assistant_hangup, assistant_silent, assistant_error, line_closed, protocol_error, no_media,
    # call_timeout
    reason: str
    failed: bool
    detail: str = ""


_HOLD = 1 << 62  # "still speaking": the caller's turn lasts until it is told where it ends


class CallCore:
    """Runs one caller plan.  Feed :meth:`receive`; call :meth:`tick` once per frame until ``done``.

    ``behaviour`` (by default the plan's script) decides what differs between callers: what it may see and
    do is "the view of a behaviour" below (:class:`voice.core.caller_behaviour.CallView`)."""

    def __init__(
        self,
        plan: CallerPlan,
        detector: SpeechDetector | None = None,
        behaviour: CallerBehaviour | None = None,
    ) -> None:
        self.plan = plan
        self.detector = detector or EnergyDetector()
        self.behaviour: CallerBehaviour = behaviour or ScriptedBehaviour()
        t = plan.timing
        self.end_of_reply = ms_to_samples(t.end_of_reply_ms)  # a reply has ended after this much silence
        self._response_timeout = ms_to_samples(t.response_timeout_ms)
        self.hangup_after = ms_to_samples(t.hangup_after_ms)  # the caller hangs up this long after the reply
        self._max_call = ms_to_samples(t.max_call_ms)
        self._drain = ms_to_samples(t.drain_ms)
        self.log = EventLog()  # capped per kind; a runner may stream it to disk (EventLog.stream_to)
        self.outcome: CallOutcome | None = None
        self._frame = 0
        self._ear = PlayoutBuffer()  # assistant audio as the caller hears it
        self._mouth = PlayoutBuffer()  # the caller's own scheduled speech
        self._marks: deque[tuple[int, str]] = deque()  # (sample where it has played, name), in that order
        self._turns: list[PlannedTurn] = list(plan.turns)  # a caller that decides as it goes appends
        self._next_turn = 0
        self._close_reason = "completed"  # what the caller says when it hangs up after the last reply
        self._missed = 0
        self._state = CallState.AWAIT_REPLY if plan.expects_greeting else CallState.SPEAKING
        self._wait_since = 0
        self._reply_onset = 0
        self._last_speech = -1  # one past the last heard assistant speech sample
        self._speaking_until = 0  # end of the caller's current turn audio
        self._speech_end = 0  # last audible sample of the caller's current turn
        self._hangup_reported = False
        self._closed_reason: str | None = None  # the line closed without a hangup event
        self._closed_early = False
        self._close_at = 0
        self._drain_since = 0
        self.note(
            ev.CallStarted(
                0, plan.dialogue_id, len(plan.turns), plan.expects_greeting, plan.greeting_reference
            )
        )
        for turn in plan.turns:
            self.note(turn.planned(plan.references[turn.index]))
        if not plan.expects_greeting:
            first = self._turns[0]
            self.start_turn(first, first.think, mode="first")

    # --- inputs -------------------------------------------------------------------------------------

    @property
    def now(self) -> int:
        """Start of the next frame to produce: everything before it has been rendered."""
        return self._frame * FRAME_SAMPLES

    @property
    def done(self) -> bool:
        return self._state is CallState.DONE

    def receive(self, item: LineInput, at: int) -> None:
        """Take what the line delivered at sample ``at`` (never placed before what was already heard)."""
        if self.done:
            return
        arrival = max(at, self.now)
        if isinstance(item, AssistantAudio):
            queued = max(arrival, self._ear.end) + len(item.pcm) - arrival
            if queued > MAX_QUEUED_S * SAMPLE_RATE:
                why = (
                    f"{queued / SAMPLE_RATE:.1f} s of audio queued ahead of playout (cap {MAX_QUEUED_S:g} s)"
                )
                self.finish(arrival, "protocol_error", True, f"protocol_error: flood: {why}")
                return
            start = self._ear.schedule(item.pcm, arrival)
            self.note(ev.AudioReceived(arrival, len(item.pcm), at, start))
        elif isinstance(item, PlayoutMark):
            due = max(arrival, self._ear.end)
            self._marks.append((due, item.name))
            self.note(ev.MarkReceived(arrival, item.name, due))
        elif isinstance(item, AssistantControl):
            # the record may be capped (voice.core.eventlog); what the message does never is
            self.note(ev.ControlReceived(arrival, bounded_name(item.event), bounded_payload(item.payload)))
            if item.event == "clear":
                self.note(ev.PlayoutCleared(arrival, self._ear.clear(arrival)))
                # the marks of the dropped audio are answered at once, as Twilio does
                if self._marks:
                    self._marks = deque((arrival, name) for _, name in self._marks)
            elif item.event == "hangup" and self._state is not CallState.DRAINING:
                self.note(ev.HungUp(arrival, "assistant", str(item.payload.get("reason", ""))))
                self._state, self._drain_since = CallState.DRAINING, arrival
            elif item.event == "error":
                self.finish(arrival, "assistant_error", True, str(item.payload.get("message", "")))
        else:
            self.note(ev.LineDropped(arrival, item.reason))
            fatal = next((r for r in FATAL_LINE_REASONS if item.reason.startswith(r)), None)
            if fatal is not None:
                self.finish(arrival, fatal, True, item.reason)
            elif self._state is not CallState.DRAINING:
                # The assistant closed the line: the caller still hears what had arrived, then the call
                # ends.  Closing instead of a hangup is a failure unless nothing was left to say.
                self._closed_early = self.upcoming is not None or self._state is CallState.SPEAKING
                self._closed_reason = item.reason
                self._state, self._drain_since = CallState.DRAINING, arrival

    # --- the frame clock ----------------------------------------------------------------------------

    def tick(self) -> Tick:
        """Produce frame ``k``: what was heard during it, what the caller says during it."""
        k = self._frame
        s, e = k * FRAME_SAMPLES, (k + 1) * FRAME_SAMPLES
        heard = self._ear.render(s, FRAME_SAMPLES)
        if not self.done:
            bounds = self.detector.active(heard)
            if bounds is not None:
                self._last_speech = s + bounds[1]
            self._advance(s, e, bounds)
            if e >= self._max_call and not self.done:
                self.finish(e, "call_timeout", True, f"call exceeded {self.plan.timing.max_call_ms:.0f} ms")
        speaking = self._state is not CallState.DRAINING and not self.done
        caller = self._mouth.render(s, FRAME_SAMPLES) if speaking else shared_silence(FRAME_SAMPLES)
        self._frame += 1
        hangup: str | None = None
        if self.outcome is not None and not self._hangup_reported:
            self._hangup_reported = True
            if self.outcome.reason != "line_closed":
                hangup = self.outcome.reason
        marks = self._played_marks(e) if self._marks else ()
        tick = Tick(frame=k, caller=caller, heard=heard, hangup=hangup, done=self.done, marks=marks)
        self.behaviour.after_frame(self, s, caller)
        return tick

    def _played_marks(self, e: int) -> tuple[str, ...]:
        played: list[str] = []
        while self._marks and self._marks[0][0] <= e:
            due, name = self._marks.popleft()
            self.note(ev.MarkPlayed(e, name, due))
            played.append(name)
        return tuple(played)

    def _advance(self, s: int, e: int, bounds: tuple[int, int] | None) -> None:
        st = self._state
        if st is CallState.AWAIT_REPLY:
            if bounds is not None:
                self._reply_onset = s + bounds[0]
                self._missed = 0
                self._state = CallState.IN_REPLY
                self.note(ev.ReplyStarted(e, self._next_turn - 1, self._reply_onset))
            elif e - self._wait_since >= self._response_timeout:
                self._missed_reply(e)
        elif st is CallState.IN_REPLY:
            self._in_reply(e, bounds)
        elif st is CallState.SPEAKING:
            if e >= self._speaking_until:
                self._wait_since = self._speech_end
                self._state = CallState.AWAIT_REPLY
        elif st is CallState.CLOSING:
            if e >= self._close_at:
                self.note(ev.HungUp(e, "caller", self._close_reason))
                self.finish(
                    e, "completed", False, "" if self._close_reason == "completed" else self._close_reason
                )
        elif st is CallState.DRAINING and (self._ear.pending(e) == 0 or e - self._drain_since >= self._drain):
            if self._closed_reason is None:
                self.finish(e, "assistant_hangup", False)
            else:
                self.finish(e, "line_closed", self._closed_early, self._closed_reason)

    def _in_reply(self, e: int, bounds: tuple[int, int] | None) -> None:
        turn = self.upcoming
        if self.behaviour.during_reply(self, e, turn):
            return
        if bounds is None and e - self._last_speech >= self.end_of_reply:
            reply_end = self._last_speech
            self.note(ev.ReplyEnded(e, self._next_turn - 1, reply_end))
            self.behaviour.after_reply(self, e, reply_end, turn)

    def _missed_reply(self, e: int) -> None:
        self._missed += 1
        self.note(ev.ReplyMissed(e, self._next_turn - 1, e - self._wait_since, self._missed))
        if self._missed >= self.plan.timing.max_missed_replies:
            self.finish(e, "assistant_silent", True, f"{self._missed} replies in a row never came")
            return
        self.behaviour.after_timeout(self, e, self.upcoming)

    # --- the record and the end ---------------------------------------------------------------------

    def note(self, event: CallEvent) -> None:
        """Log an event of the call, in time order: the core's own, its behaviour's, or what a companion of
        the core did (a reactive caller's decisions)."""
        self.log.append(event)

    @property
    def events(self) -> list[CallEvent]:
        """The records kept in memory so far (every one, unless the log streams to disk: then not ``rx``)."""
        return self.log.events

    def finish(self, at: int, reason: str, failed: bool, detail: str = "") -> None:
        """End the call at ``at`` with this outcome, once (the behaviour first logs what it held back)."""
        if self.done:
            return
        self.behaviour.finishing(self, at)
        self.outcome = CallOutcome(reason, failed, detail)
        if capped := self.log.capped():
            self.note(ev.RecordsCapped(at, capped))
        self.note(ev.CallEnded(at, reason, failed, detail, self._next_turn, len(self._turns)))
        self._state = CallState.DONE

    # --- the view of a behaviour (voice.core.caller_behaviour.CallView) -------------------------------------

    @property
    def state(self) -> CallState:
        return self._state

    @property
    def last_reply_onset(self) -> int:
        """Where the last reply heard began (0 before any)."""
        return self._reply_onset

    @property
    def last_assistant_sound(self) -> int:
        """One past the last sample in which the assistant was heard (-1: never yet)."""
        return self._last_speech

    @property
    def turns(self) -> Sequence[PlannedTurn]:
        """The caller's turns: the plan's, and those added during the call (:meth:`add_turn`)."""
        return self._turns

    @property
    def upcoming(self) -> PlannedTurn | None:
        """The caller's next turn, if it is known."""
        return self._turns[self._next_turn] if self._next_turn < len(self._turns) else None

    def add_turn(self, turn: PlannedTurn) -> None:
        """A turn decided during the call (index ``len(turns)``), to be started with :meth:`start_turn`."""
        self._turns.append(turn)

    def start_turn(
        self,
        turn: PlannedTurn,
        think: int,
        *,
        mode: str,
        at: int | None = None,
        after: int | None = None,
        hold: bool = False,
    ) -> ev.CallerSpoke:
        """Schedule ``turn``'s audio at ``at`` (or ``think`` after pick-up); ``after`` is the reply's end.
        Its ``caller_turn`` record is returned, and logged unless ``hold`` (logged once the rest is in)."""
        start = self._mouth.schedule(turn.audio, at if at is not None else think)
        self._speaking_until = start + len(turn.audio)
        self._speech_end = start + turn.speech_end
        pause = (start + turn.pause[0], start + turn.pause[1]) if turn.pause is not None else None
        spoke = ev.CallerSpoke(
            start, turn.index, mode, start, start + turn.speech_start, self._speech_end, pause
        )
        if after is not None:  # the think time actually taken: more than planned if the reply ended late
            spoke = dataclasses.replace(spoke, reply_end=after, think=think, gap=start - after)
        if not hold:
            self.note(spoke)
        self._next_turn = turn.index + 1
        self._state = CallState.SPEAKING
        return spoke

    def set_turn_end(self, until: int | None, speech_end: int | None = None) -> None:
        """The current turn's audio ends at ``until`` (None: the caller keeps the turn until told, its rest
        is still coming); ``speech_end`` moves its last audible sample (the reply is awaited from there)."""
        self._speaking_until = _HOLD if until is None else until
        if speech_end is not None:
            self._speech_end = speech_end

    def schedule(self, pcm: Pcm, at: int) -> int:
        """Caller audio from sample ``at`` (not before :attr:`now`, nor over what is scheduled); its start."""
        return self._mouth.schedule(pcm, max(at, self.now))

    def turn_taken(self, index: int) -> None:
        """Turn ``index`` was said outside :meth:`start_turn` (a person's): the next reply answers it."""
        self._next_turn = index + 1

    def await_reply(self, since: int) -> None:
        """The caller waits for a reply, counted from ``since`` (for the response timeout)."""
        self._state, self._wait_since = CallState.AWAIT_REPLY, since

    def think(self) -> None:
        """The caller is making its next turn: it hears and sends silence until :meth:`start_turn`."""
        self._state = CallState.THINKING

    def hang_up_at(self, at: int, reason: str) -> None:
        """The caller hangs up at sample ``at``, saying ``reason`` ("completed": nothing was left to say)."""
        self._state, self._close_at, self._close_reason = CallState.CLOSING, at, reason
