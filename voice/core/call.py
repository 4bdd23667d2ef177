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
import enum
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, Pcm, active_bounds, ms_to_samples, shared_silence
from voice.core.caller import CallerPlan, PlannedTurn
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


class SpeechDetector(Protocol):
    """Decides whether a heard frame holds speech, and where in it (sample bounds)."""

    def active(self, frame: Pcm) -> tuple[int, int] | None: ...


class EnergyDetector:
    """Speech = a frame above ``floor_dbfs`` RMS; bounds refined to the first/last loud sample."""

    def __init__(self, floor_dbfs: float = -50.0) -> None:
        self.floor_dbfs = floor_dbfs
        # the floor as a mean square, so a frame costs one dot product (no log, no temporary arrays)
        self._floor_square = (10.0 ** (floor_dbfs / 20.0) * 32768.0) ** 2

    def active(self, frame: Pcm) -> tuple[int, int] | None:
        if not len(frame):
            return None
        x = frame.astype(np.float64)
        if float(np.dot(x, x)) < self._floor_square * len(frame):
            return None
        return active_bounds(frame) or (0, len(frame))


class _State(enum.Enum):
    AWAIT_REPLY = "await_reply"
    IN_REPLY = "in_reply"
    SPEAKING = "speaking"
    THINKING = "thinking"  # a reactive caller is making its next turn (voice.core.reactive)
    CLOSING = "closing"
    DRAINING = "draining"
    DONE = "done"


class CallCore:
    """Runs one caller plan.  Feed :meth:`receive`; call :meth:`tick` once per frame until ``done``."""

    def __init__(self, plan: CallerPlan, detector: SpeechDetector | None = None) -> None:
        self.plan = plan
        self.detector = detector or EnergyDetector()
        t = plan.timing
        self._end_of_reply = ms_to_samples(t.end_of_reply_ms)
        self._response_timeout = ms_to_samples(t.response_timeout_ms)
        self._hangup_after = ms_to_samples(t.hangup_after_ms)
        self._max_call = ms_to_samples(t.max_call_ms)
        self._drain = ms_to_samples(t.drain_ms)
        self.log = EventLog()  # capped per kind; a runner may stream it to disk (EventLog.stream_to)
        self.outcome: CallOutcome | None = None
        self._frame = 0
        self._ear = PlayoutBuffer()  # assistant audio as the caller hears it
        self._mouth = PlayoutBuffer()  # the caller's own scheduled speech
        self._marks: deque[tuple[int, str]] = deque()  # (sample where it has played, name), in that order
        self._turns: list[PlannedTurn] = list(plan.turns)  # a reactive caller appends as it goes
        self._next_turn = 0
        self._close_reason = "completed"  # what the caller says when it hangs up after the last reply
        self._missed = 0
        self._state = _State.AWAIT_REPLY if plan.expects_greeting else _State.SPEAKING
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
        self._backchannel_done = False
        self._log(
            ev.CallStarted(
                0, plan.dialogue_id, len(plan.turns), plan.expects_greeting, plan.greeting_reference
            )
        )
        for turn in plan.turns:
            self._log(turn.planned(plan.references[turn.index]))
        if not plan.expects_greeting:
            first = self._turns[0]
            self._start_turn(first, first.think, mode="first")

    # --- inputs -------------------------------------------------------------------------------------

    @property
    def now(self) -> int:
        """Start of the next frame to produce: everything before it has been rendered."""
        return self._frame * FRAME_SAMPLES

    @property
    def done(self) -> bool:
        return self._state is _State.DONE

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
                self._finish(arrival, "protocol_error", True, f"protocol_error: flood: {why}")
                return
            start = self._ear.schedule(item.pcm, arrival)
            self._log(ev.AudioReceived(arrival, len(item.pcm), at, start))
        elif isinstance(item, PlayoutMark):
            due = max(arrival, self._ear.end)
            self._marks.append((due, item.name))
            self._log(ev.MarkReceived(arrival, item.name, due))
        elif isinstance(item, AssistantControl):
            # the record may be capped (voice.core.eventlog); what the message does never is
            self._log(ev.ControlReceived(arrival, bounded_name(item.event), bounded_payload(item.payload)))
            if item.event == "clear":
                self._log(ev.PlayoutCleared(arrival, self._ear.clear(arrival)))
                # the marks of the dropped audio are answered at once, as Twilio does
                if self._marks:
                    self._marks = deque((arrival, name) for _, name in self._marks)
            elif item.event == "hangup" and self._state is not _State.DRAINING:
                self._log(ev.HungUp(arrival, "assistant", str(item.payload.get("reason", ""))))
                self._state, self._drain_since = _State.DRAINING, arrival
            elif item.event == "error":
                self._finish(arrival, "assistant_error", True, str(item.payload.get("message", "")))
        else:
            self._log(ev.LineDropped(arrival, item.reason))
            fatal = next((r for r in FATAL_LINE_REASONS if item.reason.startswith(r)), None)
            if fatal is not None:
                self._finish(arrival, fatal, True, item.reason)
            elif self._state is not _State.DRAINING:
                # The assistant closed the line: the caller still hears what had arrived, then the call
                # ends.  Closing instead of a hangup is a failure unless nothing was left to say.
                self._closed_early = self._upcoming() is not None or self._state is _State.SPEAKING
                self._closed_reason = item.reason
                self._state, self._drain_since = _State.DRAINING, arrival

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
                self._finish(e, "call_timeout", True, f"call exceeded {self.plan.timing.max_call_ms:.0f} ms")
        speaking = self._state is not _State.DRAINING and not self.done
        caller = self._mouth.render(s, FRAME_SAMPLES) if speaking else shared_silence(FRAME_SAMPLES)
        self._frame += 1
        hangup: str | None = None
        if self.outcome is not None and not self._hangup_reported:
            self._hangup_reported = True
            if self.outcome.reason != "line_closed":
                hangup = self.outcome.reason
        marks = self._played_marks(e) if self._marks else ()
        return Tick(frame=k, caller=caller, heard=heard, hangup=hangup, done=self.done, marks=marks)

    def _played_marks(self, e: int) -> tuple[str, ...]:
        played: list[str] = []
        while self._marks and self._marks[0][0] <= e:
            due, name = self._marks.popleft()
            self._log(ev.MarkPlayed(e, name, due))
            played.append(name)
        return tuple(played)

    def _advance(self, s: int, e: int, bounds: tuple[int, int] | None) -> None:
        st = self._state
        if st is _State.AWAIT_REPLY:
            if bounds is not None:
                self._reply_onset = s + bounds[0]
                self._missed = 0
                self._state = _State.IN_REPLY
                self._backchannel_done = False
                self._log(ev.ReplyStarted(e, self._next_turn - 1, self._reply_onset))
            elif e - self._wait_since >= self._response_timeout:
                self._missed_reply(e)
        elif st is _State.IN_REPLY:
            self._in_reply(e, bounds)
        elif st is _State.SPEAKING:
            if e >= self._speaking_until:
                self._wait_since = self._speech_end
                self._state = _State.AWAIT_REPLY
        elif st is _State.CLOSING:
            if e >= self._close_at:
                self._log(ev.HungUp(e, "caller", self._close_reason))
                self._finish(
                    e, "completed", False, "" if self._close_reason == "completed" else self._close_reason
                )
        elif st is _State.DRAINING and (self._ear.pending(e) == 0 or e - self._drain_since >= self._drain):
            if self._closed_reason is None:
                self._finish(e, "assistant_hangup", False)
            else:
                self._finish(e, "line_closed", self._closed_early, self._closed_reason)

    def _in_reply(self, e: int, bounds: tuple[int, int] | None) -> None:
        turn = self._upcoming()
        if self._during_reply(e, turn):
            return
        if bounds is None and e - self._last_speech >= self._end_of_reply:
            reply_end = self._last_speech
            self._log(ev.ReplyEnded(e, self._next_turn - 1, reply_end))
            if turn is None:
                self._no_turn_after_reply(e, reply_end)
                return
            if turn.barge_in is not None:
                self._log(ev.BargeInSkipped(e, turn.index, "reply ended before the barge-in point"))
            self._start_turn(
                turn, turn.think, mode="after_reply", at=max(reply_end + turn.think, e), after=reply_end
            )

    def _during_reply(self, e: int, turn: PlannedTurn | None) -> bool:
        """The scripted cues during a reply: a barge-in (then True: the turn has begun), a backchannel."""
        if turn is not None and turn.barge_in is not None:
            # the cue places the caller's first audible sample, not the start of its (padded) audio
            at = self._reply_onset + turn.barge_in - turn.speech_start
            if at < e:
                start = max(at, self.now)
                onset = start + turn.speech_start
                self._log(ev.BargedIn(e, turn.index, onset, self._reply_onset, onset - self._reply_onset))
                self._start_turn(turn, 0, mode="barge_in", at=start)
                return True
        if turn is not None and turn.backchannel_at is not None and turn.backchannel_audio is not None:
            self._backchannel(
                e, turn.index, turn.backchannel_text or "", turn.backchannel_audio, turn.backchannel_at
            )
        return False

    def _backchannel(self, e: int, index: int, text: str, audio: Pcm, offset: int) -> None:
        """Say ``audio`` (its first audible sample) ``offset`` after the reply's onset, once per reply."""
        if self._backchannel_done:
            return
        b = active_bounds(audio) or (0, len(audio))
        at = self._reply_onset + offset - b[0]
        if at < e:
            self._backchannel_done = True
            start = max(at, self.now)
            if self._last_speech >= self.now - self._end_of_reply // 2:
                begin = self._mouth.schedule(audio, start)
                self._log(ev.BackchannelSaid(e, index, text, begin + b[0], begin + b[1], self._reply_onset))
            else:
                self._log(ev.BackchannelSkipped(e, index, "reply already ended"))

    def _no_turn_after_reply(self, e: int, reply_end: int) -> None:
        """The reply ended and the caller has nothing more to say: it hangs up a moment later."""
        self._state, self._close_at = _State.CLOSING, max(reply_end + self._hangup_after, e)

    def _no_turn_after_timeout(self, e: int) -> None:
        """The last reply never came: the caller gives up."""
        self._log(ev.HungUp(e, "caller", "no final reply"))
        self._finish(e, "completed", False, "the last reply never came")

    def _missed_reply(self, e: int) -> None:
        self._missed += 1
        self._log(ev.ReplyMissed(e, self._next_turn - 1, e - self._wait_since, self._missed))
        if self._missed >= self.plan.timing.max_missed_replies:
            self._finish(e, "assistant_silent", True, f"{self._missed} replies in a row never came")
            return
        turn = self._upcoming()
        if turn is None:
            self._no_turn_after_timeout(e)
            return
        self._start_turn(turn, 0, mode="after_timeout", at=e)

    def _upcoming(self) -> PlannedTurn | None:
        return self._turns[self._next_turn] if self._next_turn < len(self._turns) else None

    def _start_turn(
        self, turn: PlannedTurn, think: int, *, mode: str, at: int | None = None, after: int | None = None
    ) -> None:
        """Schedule ``turn``'s audio at ``at`` (or ``think`` after pick-up); ``after`` is the reply's end."""
        start = self._mouth.schedule(turn.audio, at if at is not None else think)
        self._speaking_until = start + len(turn.audio)
        self._speech_end = start + turn.speech_end
        pause = (start + turn.pause[0], start + turn.pause[1]) if turn.pause is not None else None
        spoke = ev.CallerSpoke(
            start, turn.index, mode, start, start + turn.speech_start, self._speech_end, pause
        )
        if after is not None:  # the think time actually taken: more than planned if the reply ended late
            spoke = dataclasses.replace(spoke, reply_end=after, think=think, gap=start - after)
        self._log(spoke)
        self._next_turn = turn.index + 1
        self._state = _State.SPEAKING

    def _finish(self, at: int, reason: str, failed: bool, detail: str = "") -> None:
        if self.done:
            return
        self.outcome = CallOutcome(reason, failed, detail)
        if capped := self.log.capped():
            self._log(ev.RecordsCapped(at, capped))
        self._log(ev.CallEnded(at, reason, failed, detail, self._next_turn, len(self._turns)))
        self._state = _State.DONE

    def note(self, event: CallEvent) -> None:
        """Log what a companion of the core did (the reactive caller's decisions), in time order."""
        self._log(event)

    @property
    def events(self) -> list[CallEvent]:
        """The records kept in memory so far (every one, unless the log streams to disk: then not ``rx``)."""
        return self.log.events

    def _log(self, event: CallEvent) -> None:
        self.log.append(event)
