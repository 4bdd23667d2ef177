"""The call core for a caller who is a person: their voice is fed in as it is captured, still I/O-free.

A scripted caller knows where each of its turns starts and ends; a person does not tell.  The
:class:`LiveCallCore` takes the microphone's audio as it arrives (:meth:`LiveCallCore.feed`), sends it on as
the caller's channel, and finds the person's turns in it with a speech detector: an utterance ends after
``end_of_turn_ms`` of silence and is logged as a ``caller_turn`` with its exact first and last audible
samples, so every metric of :mod:`voice.metrics.measure` applies unchanged.  An utterance that starts while
the assistant is talking and is short (``backchannel_max_ms``) is a backchannel; a longer one is a turn that
cut in (the metrics find the barge-in from the audio, as for any turn that begins over the assistant).

Everything on the assistant's side (playout, ``clear``, marks, hang-ups, floods) is the
:class:`~voice.core.call.CallCore`'s; the person's side is a behaviour it is given (:class:`PersonBehaviour`),
and :class:`LiveCallCore` is the core built with it.  The person ends the call with
:meth:`LiveCallCore.hang_up` (now) or :meth:`LiveCallCore.hang_up_after_reply` (the end of a played file:
after the reply to what was said, as a scripted caller does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, Pcm, ms_to_samples
from voice.core.call import CallCore
from voice.core.caller import CallerPlan, CallerTiming, PlannedTurn
from voice.core.caller_behaviour import CallState, CallView
from voice.core.detector import EnergyDetector, SpeechDetector
from voice.core.front import CallFront

LIVE_DIALOGUE = "live"


@dataclass(frozen=True)
class LiveTiming:
    """How a person's turns are found in their audio, and how long a live call may last (milliseconds)."""

    end_of_turn_ms: float = 700.0  # silence after which the person's utterance has ended
    min_speech_ms: float = 120.0  # shorter sounds (a click, a cough) are no utterance
    backchannel_max_ms: float = 600.0  # a short utterance over the assistant's speech is a backchannel
    audible_gap_ms: float = 300.0  # the assistant counts as talking this long after its last sound
    last_reply_wait_ms: float = 8000.0  # after hang_up_after_reply, wait this long at most for a reply
    max_call_ms: float = 600_000.0


@dataclass(frozen=True)
class Utterance:
    """One utterance of the person, on the call's timeline (samples)."""

    turn: int
    start: int
    end: int
    over_reply: bool  # it began while the assistant was talking


class PersonBehaviour:
    """What a person does on a call (a :class:`~voice.core.caller_behaviour.CallerBehaviour`): they speak
    when they like, so their turns, backchannels and barge-ins are found in the audio they sent
    (:meth:`after_frame`).

    ``caller_detector`` decides which frames of the person's audio hold speech (by default an energy gate at
    -45 dBFS, above a quiet room's microphone noise).
    """

    def __init__(self, timing: LiveTiming, caller_detector: SpeechDetector | None = None) -> None:
        self._caller_detector = caller_detector or EnergyDetector(floor_dbfs=-45.0)
        self._end_of_turn = ms_to_samples(timing.end_of_turn_ms)
        self._min_speech = ms_to_samples(timing.min_speech_ms)
        self._backchannel_max = ms_to_samples(timing.backchannel_max_ms)
        self._audible_gap = ms_to_samples(timing.audible_gap_ms)
        self._last_reply_wait = ms_to_samples(timing.last_reply_wait_ms)
        self.utterances: list[Utterance] = []
        self._utt: tuple[int, int, bool, int] | None = None  # start, last audible sample, over reply, onset
        self._closing_since: int | None = None  # hang_up_after_reply was asked at this sample
        self._fed_until = 0  # one past the person's audio fed so far
        self._sent: list[Pcm] = []  # the caller channel so far, frame by frame (for transcripts)

    # --- the person's controls ----------------------------------------------------------------------

    def feed(self, call: CallView, pcm: Pcm, at: int) -> None:
        """The person's audio, captured and arriving at sample ``at``: it is sent from there on."""
        if not call.done and len(pcm):
            self._fed_until = call.schedule(pcm, at) + len(pcm)

    def hang_up(self, call: CallView, at: int, reason: str) -> None:
        """The person hangs up now (what they were saying is cut)."""
        if call.done:
            return
        self._close_utterance(call, max(at, call.now), force=True)
        call.note(ev.HungUp(max(at, call.now), "caller", reason))
        call.finish(max(at, call.now), "completed", False, reason)

    def hang_up_after_reply(self, call: CallView, at: int) -> None:
        """The person has said everything (fed so far): hang up once the reply to it has ended (or none
        came in time)."""
        if self._closing_since is None and not call.done:
            self._closing_since = max(at, call.now, self._fed_until)

    @property
    def speaking(self) -> bool:
        """The person's current utterance has begun and not yet ended."""
        return self._utt is not None

    def caller_audio(self, start: int, end: int) -> Pcm:
        """What the caller channel carried over ``[start, end)`` (for an utterance's transcript)."""
        first, last = start // FRAME_SAMPLES, -(-end // FRAME_SAMPLES)
        frames = self._sent[first:last]
        if not frames:
            return np.zeros(0, np.int16)
        joined = np.concatenate(frames)
        return joined[start - first * FRAME_SAMPLES : end - first * FRAME_SAMPLES]

    # --- CallerBehaviour ----------------------------------------------------------------------------

    def during_reply(self, call: CallView, e: int, turn: PlannedTurn | None) -> bool:
        """No scripted cues: the person barges in and backchannels by speaking."""
        return False

    def after_reply(self, call: CallView, e: int, reply_end: int, turn: PlannedTurn | None) -> None:
        """The person speaks when they like (a live plan holds no turns)."""
        call.await_reply(reply_end)

    def after_timeout(self, call: CallView, e: int, turn: PlannedTurn | None) -> None:
        """A person may stay silent: the wait simply starts again."""
        call.await_reply(e)

    def after_frame(self, call: CallView, start: int, caller: Pcm) -> None:
        """Keep what was sent; find the person's utterances in it; hang up when it is time."""
        self._sent.append(caller)
        if not call.done:
            self._follow_caller(call, start, caller)
            self._maybe_close(call, start + FRAME_SAMPLES)

    def finishing(self, call: CallView, at: int) -> None:
        """Nothing is held back: each utterance is logged as it ends."""

    # --- helpers ------------------------------------------------------------------------------------

    def _follow_caller(self, call: CallView, s: int, caller: Pcm) -> None:
        bounds = self._caller_detector.active(caller)
        e = s + len(caller)
        if bounds is not None:
            if self._utt is None:
                start = s + bounds[0]
                talking = self._assistant_talking(call, start)
                self._utt = (start, s + bounds[1], talking, call.last_reply_onset)
            else:
                self._utt = (self._utt[0], s + bounds[1], self._utt[2], self._utt[3])
        elif self._utt is not None and e - self._utt[1] >= self._end_of_turn:
            self._close_utterance(call, e)

    def _assistant_talking(self, call: CallView, at: int) -> bool:
        return call.state is CallState.IN_REPLY and at - call.last_assistant_sound <= self._audible_gap

    def _close_utterance(self, call: CallView, e: int, *, force: bool = False) -> None:
        if self._utt is None:
            return
        start, end, over_reply, onset = self._utt
        self._utt = None
        if end - start < self._min_speech and not force:
            return
        turn = len(self.utterances)
        if over_reply and end - start <= self._backchannel_max:
            call.note(ev.BackchannelSaid(e, turn, "", start, end, onset))
            return
        mode = "barge_in" if over_reply else "first" if turn == 0 else "after_reply"
        call.note(ev.CallerSpoke(e, turn, mode, start, start, end))
        self.utterances.append(Utterance(turn, start, end, over_reply))
        call.turn_taken(turn)  # the assistant's next reply answers this turn
        if call.state is CallState.AWAIT_REPLY:
            call.await_reply(end)

    def _maybe_close(self, call: CallView, e: int) -> None:
        """After :meth:`hang_up_after_reply`: hang up when the reply has ended, or none came in time."""
        since = self._closing_since
        if since is None or self._utt is not None or call.state is not CallState.AWAIT_REPLY:
            return
        heard = call.last_assistant_sound
        last_reply_end = heard if heard >= 0 else 0
        if last_reply_end >= since or e - since >= self._last_reply_wait:
            why = "" if last_reply_end >= since else "the last reply never came"
            call.hang_up_at(e + call.hangup_after, why or "completed")


class LiveCallCore(CallFront):
    """A :class:`~voice.core.call.CallCore` played by a person (:class:`PersonBehaviour`), with their
    controls: their audio is fed in (:meth:`feed`) and their turns are detected in it.

    The assistant is expected to speak first (a phone assistant answers).  ``caller_detector`` hears the
    person (:class:`PersonBehaviour`); the call's own ``detector`` hears the assistant, as for a scripted
    call.
    """

    def __init__(
        self,
        *,
        dialogue_id: str = LIVE_DIALOGUE,
        timing: LiveTiming = LiveTiming(),
        caller_detector: SpeechDetector | None = None,
        detector: SpeechDetector | None = None,
    ) -> None:
        self.live = timing
        never = 10 * timing.max_call_ms  # a person may stay silent: no reply is ever "missed"
        plan = CallerPlan(
            dialogue_id=dialogue_id,
            turns=(),
            expects_greeting=True,
            references=(),
            greeting_reference=None,
            timing=CallerTiming(response_timeout_ms=never, max_call_ms=timing.max_call_ms),
        )
        self.behaviour = PersonBehaviour(timing, caller_detector)
        # awaiting the greeting; the person speaks when they like
        super().__init__(CallCore(plan, detector, self.behaviour))

    def feed(self, pcm: Pcm, at: int) -> None:
        """The person's audio, captured and arriving at sample ``at``: it is sent from there on."""
        self.behaviour.feed(self.call, pcm, at)

    def hang_up(self, at: int, reason: str = "the caller hung up") -> None:
        """The person hangs up now (what they were saying is cut)."""
        self.behaviour.hang_up(self.call, at, reason)

    def hang_up_after_reply(self, at: int) -> None:
        """The person has said everything (fed so far): hang up once the reply to it has ended (or none
        came in time)."""
        self.behaviour.hang_up_after_reply(self.call, at)

    @property
    def utterances(self) -> list[Utterance]:
        return self.behaviour.utterances

    @property
    def last_assistant_sound(self) -> int:
        """One past the last sample in which the assistant was heard (-1: never yet)."""
        return self.call.last_assistant_sound

    @property
    def speaking(self) -> bool:
        """The person's current utterance has begun and not yet ended."""
        return self.behaviour.speaking

    def caller_audio(self, start: int, end: int) -> Pcm:
        """What the caller channel carried over ``[start, end)`` (for an utterance's transcript)."""
        return self.behaviour.caller_audio(start, end)
