"""The reactive caller in a live call: watches the core's requests, hears, decides, speaks, reports its goal.

A :class:`ReactiveSession` rides along :func:`voice.run.driver.run_call`.  After every frame the driver
calls :meth:`ReactiveSession.after_tick`; when the core raises a request the session starts one task —
transcribe the heard replies, ask the :class:`~voice.react.brain.CallerBrain`, synthesize the turn — and
when it is done hands the move to the core, which places it on the call's timeline (late turns are logged
as the simulator's delay).  The call keeps streaming meanwhile: no frame ever waits for the model.

``wait_in_place`` is for virtual clocks: the driver then waits for the decision before the next frame,
so generation takes no call time and a call is frame-exact and repeatable in tests.  On a real clock it must
stay off.

When the call ends without the caller having judged its goal (the assistant hung up, a turn limit, a
failure), :meth:`ReactiveSession.finish` asks the model once more, after the call, for its verdict.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from voice.core import events as ev
from voice.core.audio import SAMPLE_RATE, Pcm, ms_to_samples
from voice.core.caller import CallerPlan, CallerTiming, PlannedTurn, caller_rng
from voice.core.reactive import CallerMove, HangUp, ReactiveCallCore, ReplyCues, Say, TurnRequest, Wait
from voice.errors import CallSimError
from voice.react.brain import CallerBrain, Decided
from voice.react.hearing import HeardLine, heard_so_far
from voice.react.prompt import Situation
from voice.speech.asr import ASREngine
from voice.speech.caller_plan import plan_turn, speak
from voice.speech.tts.base import TTSEngine


class ReactiveSession:
    """One reactive caller for one call.  ``tts_lock``/``asr_lock`` guard engines shared by other calls."""

    def __init__(
        self,
        brain: CallerBrain,
        tts: TTSEngine,
        ears: ASREngine,
        timing: CallerTiming,
        *,
        tts_lock: asyncio.Lock | None = None,
        asr_lock: asyncio.Lock | None = None,
        wait_in_place: bool = False,
    ) -> None:
        self.brain, self.tts, self.ears, self.timing = brain, tts, ears, timing
        self.wait_in_place = wait_in_place
        self._tts_lock, self._asr_lock = tts_lock or asyncio.Lock(), asr_lock or asyncio.Lock()
        self._rng = caller_rng(brain.dialogue.id, timing.seed)
        self._texts: dict[tuple[int, int], str] = {}  # transcripts of heard spans
        self._task: asyncio.Task[tuple[CallerMove, ev.CallerDecided, ev.GoalReported | None]] | None = None
        self._asked: TurnRequest | None = None
        self.decisions: list[Decided] = []
        self.core: ReactiveCallCore | None = None

    async def start(self, max_turns: int) -> ReactiveCallCore:
        """Plan the call (the first turn is decided now, before dialling) and make its core."""
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
            move, decided, _ = await self._decide([], Situation("first", 0), 0)
            log.append(decided)
            if not isinstance(move, Say):
                move = await self._say(
                    self.brain.fallback(Situation("first", 0), "the first move must be a turn"), 0
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
        """Supply a finished decision; start one for a new request (and, ``wait_in_place``, finish it)."""
        core = self.started()
        if self._task is not None and self._task.done():
            self._supply(core)
        req = core.request
        if req is None or self._task is not None or req == self._asked:
            return
        self._asked = req
        snapshot = [e for e in core.events if not isinstance(e, ev.AudioReceived)]
        audio = np.array(heard(), dtype=np.int16)  # a copy: the channel grows while the task runs
        situation = Situation(
            req.reason, req.turn, talking_s=(req.at - (req.reply_onset or req.at)) / SAMPLE_RATE
        )
        self._task = asyncio.ensure_future(self._hear_and_decide(snapshot, audio, core.now, situation))
        if self.wait_in_place:
            await asyncio.wait([self._task])
            self._supply(core)

    def started(self) -> ReactiveCallCore:
        """The call's core (:meth:`start` makes it, before the call)."""
        if self.core is None:
            raise RuntimeError("ReactiveSession.start() makes the core before the call")
        return self.core

    def _supply(self, core: ReactiveCallCore) -> None:
        assert self._task is not None
        move, decided, goal = self._task.result()
        self._task = None
        at = core.now
        core.note(dataclasses.replace(decided, t=at))
        if goal is not None:
            core.note(dataclasses.replace(goal, t=at))
        core.supply(move, at)

    async def _hear_and_decide(
        self, events: Sequence[ev.CallEvent], audio: Pcm, now: int, situation: Situation
    ) -> tuple[CallerMove, ev.CallerDecided, ev.GoalReported | None]:
        """The move for a request; an engine that fails (ASR, TTS) makes the caller hang up, saying why."""
        spoken = sum(1 for e in events if isinstance(e, ev.CallerSpoke))
        try:
            heard = await self._hear(events, audio, now)
            return await self._decide(heard, situation, spoken)
        except CallSimError as exc:
            why = f"the caller's own engines failed: {exc}"
            logged = ev.CallerDecided(0, situation.turn, "hang_up", "fallback_hangup", reason=why)
            return HangUp(why), logged, None

    async def _hear(self, events: Sequence[ev.CallEvent], audio: Pcm, now: int) -> list[HeardLine]:
        def transcribe(start: int, end: int) -> str:
            if (start, end) not in self._texts:
                self._texts[start, end] = self.ears.transcribe(audio[start:end]) if end > start else ""
            return self._texts[start, end]

        async with self._asr_lock:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, heard_so_far, events, audio, now, transcribe)

    async def _decide(
        self, heard: list[HeardLine], situation: Situation, spoken: int
    ) -> tuple[CallerMove, ev.CallerDecided, ev.GoalReported | None]:
        decided = await self.brain.decide(heard, situation)
        self.decisions.append(decided)
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
            return Wait(), logged, None
        if d.action == "hang_up":
            goal = ev.GoalReported(0, d.goal, d.reason, spoken) if d.goal else None
            why = f"goal {d.goal}: {d.reason}" if d.goal else d.reason or "the caller hung up"
            return HangUp(why), logged, goal
        return await self._say(decided, situation.turn), logged, None

    async def _say(self, decided: Decided, index: int) -> Say:
        d = decided.decision
        assert d.turn is not None
        async with self._tts_lock:
            loop = asyncio.get_running_loop()
            turn, bc_audio = await loop.run_in_executor(None, self._synthesize, d, index)
        cues = ReplyCues(
            backchannel_text=d.backchannel.text if d.backchannel else None,
            backchannel_audio=bc_audio,
            backchannel_at=ms_to_samples(d.backchannel.at_ms) if d.backchannel else None,
            interrupt_after=ms_to_samples(d.interrupt_after_ms)
            if d.interrupt_after_ms is not None
            else self._persona_interrupt(),
        )
        return Say(turn, cues)

    def _synthesize(self, d: Any, index: int) -> tuple[PlannedTurn, Pcm | None]:
        turn = plan_turn(index, -1, d.turn, self.tts, self.timing, self._rng)
        if turn.think_source == "random":
            turn = dataclasses.replace(turn, think=int(turn.think * self.brain.persona.think_scale))
        bc = speak(self.tts, d.backchannel.text) if d.backchannel else None
        return turn, bc

    def _persona_interrupt(self) -> int | None:
        ms = self.brain.persona.interrupt_after_ms
        return ms_to_samples(ms) if ms is not None else None

    # --- after the call -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Drop a decision still in the making (its thread, if any, finishes on its own and is ignored)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def finish(self, heard: Pcm) -> None:
        """Ask for the caller's verdict on its goal if it never gave one (the call ended otherwise)."""
        core = self.started()
        if any(isinstance(e, ev.GoalReported) for e in core.events):
            return
        outcome = core.outcome.reason if core.outcome is not None else "unknown"
        spoken = sum(1 for e in core.events if isinstance(e, ev.CallerSpoke))
        situation = Situation("debrief", spoken, ended_by=_ended_by(core))
        events = [e for e in core.events if not isinstance(e, ev.AudioReceived)]
        decided = await self.brain.decide(await self._hear(events, heard, core.now), situation)
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


def _ended_by(core: ReactiveCallCore) -> str:
    hung = [e for e in core.events if isinstance(e, ev.HungUp)]
    if hung and hung[-1].by == "assistant":
        return "助理挂断了电话"
    if core.outcome is not None and core.outcome.detail == "turn limit":
        return "你已经说到了轮数上限"
    if core.outcome is not None and core.outcome.failed:
        return f"通话出了问题（{core.outcome.reason}）"
    return "通话结束了"
