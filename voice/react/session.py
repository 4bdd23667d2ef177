"""The reactive caller in a live call: watches the core's requests, hears, decides, speaks, reports its goal.

A :class:`ReactiveSession` rides along :func:`voice.app.run.driver.run_call`.  After every frame the driver
calls :meth:`ReactiveSession.after_tick`; when the core raises a request the session starts one task —
transcribe the heard replies, ask the :class:`~voice.react.brain.CallerBrain`, synthesize the turn — and
when it is done hands the move to the core, which places it on the call's timeline (late turns are logged
as the simulator's delay).  The call keeps streaming meanwhile: no frame ever waits for the model.

``wait_in_place`` is for virtual clocks: the driver then waits for the decision before the next frame,
so generation takes no call time and a call is frame-exact and repeatable in tests.  On a real clock it must
stay off.

Early (issue 26, ``early_ms``): the session hears a reply while it plays, piece by piece
(:mod:`voice.react.listening`), and at a pause after which the core would ask for a turn if the reply had
ended (:meth:`ReactiveCallCore.guess`) it decides at once, with the events plus a supposed ``ReplyEnded``:
the same chat request, cache key and answer as deciding when the request comes.  If the request that comes
is the guessed one, the guess is its decision; otherwise it is thrown away.  ``caller_early`` logs each;
:attr:`ReactiveSession.early` counts them.  The think-time generator is forked per decision and advanced
only by the one used.  Engine jobs go through the run's :class:`~voice.speech.engine_lock.EngineLock`s:
a due turn's first, a guess's and the pieces' next, work after the call last.

When the call ends without the caller having judged its goal (the assistant hung up, a turn limit, a
failure), :meth:`ReactiveSession.finish` asks the model once more, after the call, for its verdict.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Callable, Sequence

import numpy as np

from voice.core import events as ev
from voice.core.audio import SAMPLE_RATE, Pcm, ms_to_samples
from voice.core.caller import CallerPlan, CallerTiming, PlannedTurn, caller_rng
from voice.core.reactive import HangUp, ReactiveCallCore, ReplyCues, Say, TurnRequest, Wait
from voice.core.speech_pieces import Pieces, Span
from voice.errors import CallSimError
from voice.react.brain import CallerBrain, Decided
from voice.react.early import EarlyCount, Guess, Made
from voice.react.heard_so_far import HeardLine, heard_so_far
from voice.react.listening import join_texts, spans_for
from voice.react.prompt import Situation, ended_by
from voice.react.turn_voicing import Voicing
from voice.speech.asr import ASREngine
from voice.speech.engine_lock import BACKGROUND, SOON, URGENT, EngineLock, Priority, Urgency
from voice.speech.tts.engine import TTSEngine


class ReactiveSession:
    """One reactive caller for one call.  ``tts_lock``/``asr_lock`` guard engines shared by other calls: a
    turn due to be said goes first on them, pieces heard mid-reply next, work after the call last.

    ``early_ms``: hear and decide early at pauses this long (None: after the reply has ended, as before).
    """

    def __init__(
        self,
        brain: CallerBrain,
        tts: TTSEngine,
        ears: ASREngine,
        timing: CallerTiming,
        *,
        tts_lock: EngineLock | None = None,
        asr_lock: EngineLock | None = None,
        wait_in_place: bool = False,
        early_ms: float | None = None,
    ) -> None:
        self.brain, self.tts, self.ears, self.timing = brain, tts, ears, timing
        self.wait_in_place = wait_in_place
        self._asr_lock = asr_lock or EngineLock()
        self.voice = Voicing(tts, timing, brain.persona.think_scale, tts_lock or EngineLock())
        self._rng = caller_rng(brain.dialogue.id, timing.seed)
        self._texts: dict[Span, str] = {}  # transcripts of heard spans
        self._task: asyncio.Task[Made] | None = None
        self._asked: TurnRequest | None = None
        self._quiet = ms_to_samples(early_ms) if early_ms is not None else None
        self._pieces = Pieces(self._quiet) if self._quiet is not None else None
        self._hearing: set[asyncio.Task[None]] = set()  # pieces being transcribed
        self._guess: Guess | None = None
        self.early = EarlyCount()
        self.decisions: list[Decided] = []
        self.core: ReactiveCallCore | None = None

    async def start(self, max_turns: int) -> ReactiveCallCore:
        """Load the ears and the voice, plan the call (the first turn is decided now) and make its core: all
        before dialling, so that no model loads while the caller should be answering."""
        loop = asyncio.get_running_loop()
        for engine, lock in ((self.ears, self._asr_lock), (self.tts, self.voice.lock)):
            if (load := getattr(engine, "load", None)) is not None:
                await lock.run(BACKGROUND, load)
        await loop.run_in_executor(None, self.brain.client.prepare)
        plan, cues, log = await self.plan()
        self.core = ReactiveCallCore(plan, max_turns=max_turns, first_cues=cues)
        for event in log:
            self.core.note(event)
        return self.core

    # --- before the call ------------------------------------------------------------------------------

    async def plan(self) -> tuple[CallerPlan, ReplyCues, list[ev.CallEvent]]:
        """The call's plan (the first turn, when the caller speaks first), cues for the first reply, log."""
        d = self.brain.dialogue
        greeting = bool(d.turns) and d.turns[0].role == "assistant"
        turns: tuple[PlannedTurn, ...] = ()
        cues = ReplyCues(interrupt_after=self._persona_interrupt())
        log: list[ev.CallEvent] = []
        if not greeting:
            made = await self._decide([], Situation("first", 0), 0, self._fork())
            self._keep(made)
            log.append(made.logged)
            move = made.move
            if not isinstance(move, Say):
                fallback = self.brain.fallback(Situation("first", 0), "the first move must be a turn")
                move, _ = await self.voice.say(
                    fallback.decision, 0, self._rng, self._persona_interrupt(), whole=True
                )
            turns, cues = (move.turn,), move.cues
        plan = CallerPlan(
            dialogue_id=d.id,
            turns=turns,
            expects_greeting=greeting,
            references=(None,) * len(turns),
            greeting_reference=d.turns[0].text if greeting else None,
            timing=self.timing,
        )
        return plan, cues, log

    # --- during the call ------------------------------------------------------------------------------

    async def after_tick(self, heard: Callable[[], Pcm]) -> None:
        """Supply a finished decision; start one for a new request (and, ``wait_in_place``, finish it);
        hear the reply's pieces and guess at its pauses (``early_ms``)."""
        core = self.started()
        if self._pieces is not None:
            channel, onset = heard(), core.reply_onset
            if onset is not None:
                self._pieces.floor(onset)
            for span in self._pieces.feed(channel):
                if onset is not None and span[0] >= onset:  # a reply's (not the caller's own echo)
                    await self._hear_piece(span, np.array(channel[span[0] : span[1]], dtype=np.int16))
        await self.voice.supply(core)
        if self._task is not None and self._task.done():
            await self._supply(core)
        req = core.request
        if req is not None and self._task is None and req != self._asked:
            self._asked = req
            self._task = self._take_guess(core, req)
            if self._task is None:
                situation = Situation(
                    req.reason, req.turn, talking_s=(req.at - (req.reply_onset or req.at)) / SAMPLE_RATE
                )
                self._task = self._start(core, heard, situation, Urgency(URGENT))
            if self.wait_in_place:
                await asyncio.wait([self._task])
            if self._task.done():  # a kept guess is often made already: supply it now, not a frame late
                await self._supply(core)
        elif req is None and self._task is None and self._quiet is not None:
            await self._maybe_guess(core, heard)

    def _start(
        self,
        core: ReactiveCallCore,
        heard: Callable[[], Pcm],
        situation: Situation,
        urgency: Urgency,
        *extra: ev.CallEvent,
    ) -> asyncio.Task[Made]:
        """Hear and decide from the call so far (``extra``: events the guess supposes), in a task whose
        engine jobs wait at ``urgency``."""
        snapshot = [e for e in core.events if not isinstance(e, ev.AudioReceived)] + list(extra)
        audio = np.array(heard(), dtype=np.int16)  # a copy: the channel grows while the task runs
        pieces = list(self._pieces.closed) if self._pieces is not None else []
        return asyncio.ensure_future(
            self._hear_and_decide(snapshot, audio, core.now, situation, self._fork(), pieces, urgency)
        )

    async def _maybe_guess(self, core: ReactiveCallCore, heard: Callable[[], Pcm]) -> None:
        """At a pause of the reply, decide for the request that will follow if the reply has ended."""
        assert self._quiet is not None
        guess = core.guess(self._quiet)
        if guess is None:
            return
        key = (guess.turn, guess.reply_onset, guess.reply_end)
        if self._guess is not None and self._guess.key == key:
            return
        self._drop_guess(core)  # more was heard since the last guess
        assert guess.reply_end is not None
        supposed = ev.ReplyEnded(guess.at, guess.turn - 1, guess.reply_end)
        urgency = Urgency(SOON)  # speculative: a turn that is due goes first
        task = self._start(core, heard, Situation("reply_ended", guess.turn), urgency, supposed)
        self._guess = Guess(key, task, urgency)
        self.early.asked += 1
        if self.wait_in_place:
            await asyncio.wait([task])

    def _take_guess(self, core: ReactiveCallCore, req: TurnRequest) -> asyncio.Task[Made] | None:
        """The guess's task if ``req`` is the request it guessed (then logged as kept), else None."""
        guess = self._guess
        if guess is None:
            return None
        if req.reason != "reply_ended" or guess.key != (req.turn, req.reply_onset, req.reply_end):
            if req.reason != "interrupt":  # an interrupt question leaves the guess standing
                self._drop_guess(core)
            return None
        self._guess = None
        guess.urgency.level = URGENT  # the turn waits for it now
        self.early.kept += 1
        core.note(ev.CallerEarly(core.now, req.turn, req.reply_end or 0, True))
        return guess.task

    def _drop_guess(self, core: ReactiveCallCore) -> None:
        guess, self._guess = self._guess, None
        if guess is None:
            return
        guess.task.cancel()  # a thread it started finishes on its own; its answer is ignored
        self.early.wasted += 1
        if not core.done:
            core.note(ev.CallerEarly(core.now, guess.key[0], guess.key[2] or 0, False))

    async def _hear_piece(self, span: Span, audio: Pcm) -> None:
        """Transcribe a closed piece in the background (in place on a virtual clock)."""
        task = asyncio.ensure_future(self._transcribe_piece(span, audio))
        self._hearing.add(task)
        task.add_done_callback(self._hearing.discard)
        if self.wait_in_place:
            await asyncio.wait([task])

    async def _transcribe_piece(self, span: Span, audio: Pcm) -> None:
        def job() -> str | None:  # heard already (by a decision that needed it first): nothing to do
            return None if span in self._texts else self.ears.transcribe(audio)

        try:
            text = await self._asr_lock.run(SOON, job)  # after any call's turn that is due
        except CallSimError:
            return  # the reply's hearing tries again and reports it
        if text is not None:
            self._texts.setdefault(span, text)

    def started(self) -> ReactiveCallCore:
        """The call's core (:meth:`start` makes it, before the call)."""
        if self.core is None:
            raise RuntimeError("ReactiveSession.start() makes the core before the call")
        return self.core

    async def _supply(self, core: ReactiveCallCore) -> None:
        assert self._task is not None
        made = self._task.result()
        self._task = None
        self._keep(made)
        at = core.now
        core.note(dataclasses.replace(made.logged, t=at))
        if made.goal is not None:
            core.note(dataclasses.replace(made.goal, t=at))
        core.supply(made.move, at)
        if made.rest is not None and isinstance(made.move, Say):  # its first clause is in: voice the rest
            whole = made.move.turn.text
            self.voice.start(made.move.turn.index, whole[: len(whole) - len(made.rest[0])], made.rest)
            await self.voice.supply(core, wait=self.wait_in_place)

    def _fork(self) -> random.Random:
        """A copy of the think-time generator for one decision (kept by :meth:`_keep` if it is used)."""
        rng = random.Random()
        rng.setstate(self._rng.getstate())
        return rng

    def _keep(self, made: Made) -> None:
        self._rng = made.rng
        if made.decided is not None:
            self.decisions.append(made.decided)

    async def _hear_and_decide(
        self,
        events: Sequence[ev.CallEvent],
        audio: Pcm,
        now: int,
        situation: Situation,
        rng: random.Random,
        pieces: Sequence[Span],
        urgency: Urgency,
    ) -> Made:
        """The move for a request; an engine that fails (ASR, TTS) makes the caller hang up, saying why."""
        spoken = sum(1 for e in events if isinstance(e, ev.CallerSpoke))
        try:
            heard = await self._hear(events, audio, now, pieces, urgency)
            return await self._decide(heard, situation, spoken, rng, urgency)
        except CallSimError as exc:
            why = f"the caller's own engines failed: {exc}"
            logged = ev.CallerDecided(0, situation.turn, "hang_up", "fallback_hangup", reason=why)
            return Made(HangUp(why), logged, None, None, rng)

    async def _hear(
        self,
        events: Sequence[ev.CallEvent],
        audio: Pcm,
        now: int,
        pieces: Sequence[Span] = (),
        priority: Priority = URGENT,
    ) -> list[HeardLine]:
        """The conversation so far as heard (``priority``: on the run's Whisper; a turn waits for it)."""

        def piece(start: int, end: int) -> str:
            if (start, end) not in self._texts:
                self._texts[start, end] = self.ears.transcribe(audio[start:end]) if end > start else ""
            return self._texts[start, end]

        def transcribe(start: int, end: int) -> str:  # the closed pieces' texts, and what is left
            return join_texts([piece(s, e) for s, e in spans_for(pieces, start, end)])

        return await self._asr_lock.run(priority, heard_so_far, events, audio, now, transcribe)

    async def _decide(
        self,
        heard: list[HeardLine],
        situation: Situation,
        spoken: int,
        rng: random.Random,
        urgency: Priority | None = None,
    ) -> Made:
        decided = await self.brain.decide(heard, situation)
        d = decided.decision
        last = next((line for line in reversed(heard) if line.speaker == "assistant"), None)
        heard_text = last.render() if last is not None else ""
        logged = ev.CallerDecided(
            0,
            situation.turn,
            d.action,
            decided.source,
            text=d.turn.text if d.turn else "",
            heard=heard_text,
            goal=d.goal,
            reason=d.reason,
            rejected=decided.rejected,
            key=decided.key,
        )
        if d.action == "wait":
            return Made(Wait(), logged, None, decided, rng)
        if d.action == "hang_up":
            goal = ev.GoalReported(0, d.goal, d.reason, spoken) if d.goal else None
            why = f"goal {d.goal}: {d.reason}" if d.goal else d.reason or "the caller hung up"
            return Made(HangUp(why), logged, goal, decided, rng)
        first = situation.reason == "first"
        say, rest = await self.voice.say(
            d, situation.turn, rng, self._persona_interrupt(), whole=first, priority=urgency
        )
        return Made(say, logged, None, decided, rng, rest)

    def _persona_interrupt(self) -> int | None:
        ms = self.brain.persona.interrupt_after_ms
        return ms_to_samples(ms) if ms is not None else None

    # --- after the call -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Drop decisions, hearing and voicing still in the making (their threads finish on their own)."""
        self.voice.stop()
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._guess is not None:
            self._drop_guess(self.started())
        for task in list(self._hearing):
            task.cancel()

    async def finish(self, heard: Pcm) -> None:
        """Ask for the caller's verdict on its goal if it never gave one (the call ended otherwise)."""
        core = self.started()
        if any(isinstance(e, ev.GoalReported) for e in core.events):
            return
        outcome = core.outcome.reason if core.outcome is not None else "unknown"
        spoken = sum(1 for e in core.events if isinstance(e, ev.CallerSpoke))
        situation = Situation("debrief", spoken, ended_by=ended_by(core))
        events = [e for e in core.events if not isinstance(e, ev.AudioReceived)]
        pieces = list(self._pieces.closed) if self._pieces is not None else []
        lines = await self._hear(events, heard, core.now, pieces, BACKGROUND)  # the call is over
        decided = await self.brain.decide(lines, situation)
        d = decided.decision
        core.note(
            ev.CallerDecided(
                core.now,
                spoken,
                d.action,
                decided.source,
                goal=d.goal,
                reason=d.reason,
                rejected=decided.rejected,
                key=decided.key,
            )
        )
        core.note(
            ev.GoalReported(core.now, d.goal or "unknown", d.reason or f"call ended: {outcome}", spoken)
        )
