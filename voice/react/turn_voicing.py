"""The reactive caller's voice: a decided turn voiced first clause first, the rest while it plays (issue 26).

Voicing a whole turn before it could start put all of the TTS's time on the caller's critical path.  Here a
turn of several clauses is voiced by its first clause (:func:`voice.speech.caller_plan.plan_first_clause`):
the session hands that to the core as ``Say(more=True)``, and once the core has it :meth:`Voicing.start`
voices the rest in the background clause by clause (:func:`~voice.speech.caller_plan.rest_clauses`), each
under the run's TTS lock, taken for that clause only so other calls voice between them, and a timeout; and
:meth:`Voicing.supply` hands each clause over as soon as it is voiced
(:meth:`voice.core.reactive.ReactiveCallCore.extend`, ``more`` for all but the last), played right after
the audio before it.  So each clause has the time the clause before it plays to be voiced in; the whole
rest voiced at once often took longer than the first clause plays (four calls at once), and the caller fell
silent mid-turn (``caller_late``).
Each clause voiced as its own clip sounds as its mark's pause: each is its own synthesis pass, so its samples
are the same for the same text.  An engine that fails on a clause
(:class:`~voice.errors.CallerSpeechFailed`), or takes longer than ``timeout_s`` for it, ends the turn with
what was said, and the turn's records then hold only that; a storage error stops the run, as anywhere else.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from dataclasses import dataclass, field

import numpy as np

from voice.core.audio import Pcm, ms_to_samples
from voice.core.caller import CallerTiming, PlannedTurn
from voice.core.reactive import ReactiveCallCore, ReplyCues, Say
from voice.errors import CallerSpeechFailed
from voice.react.decision import CallerDecision
from voice.speech.caller_plan import plan_first_clause, plan_turn, rest_clauses, speak, speak_rest
from voice.speech.engine_lock import BACKGROUND, SOON, URGENT, EngineLock, Priority
from voice.speech.tts.engine import TTSEngine

Rest = tuple[str, int]  # the text still to voice and the pause before it (ms)
REST_TIMEOUT_S = 20.0  # for each clause of the rest
log = logging.getLogger(__name__)


@dataclass
class _Stream:
    """The rest of turn ``index`` being voiced: its clauses, those voiced but not yet handed over."""

    index: int
    said: str  # the text handed to the core so far
    clauses: list[Rest]
    task: asyncio.Task[None] | None = None
    voiced: list[Pcm] = field(default_factory=list)  # in order, not yet handed over
    handed: int = 0  # clauses handed over
    failed: bool = False  # a clause could not be voiced: the turn ends with what was handed over


class Voicing:
    """Voices one call's reactive turns (``think_scale``: the persona's; ``lock``: the run's TTS lock)."""

    def __init__(
        self,
        tts: TTSEngine,
        timing: CallerTiming,
        think_scale: float,
        lock: EngineLock,
        *,
        timeout_s: float = REST_TIMEOUT_S,
    ) -> None:
        self.tts, self.timing, self.think_scale, self.lock = tts, timing, think_scale, lock
        self.timeout_s = timeout_s
        self._stream: _Stream | None = None

    async def say(
        self,
        d: CallerDecision,
        index: int,
        rng: random.Random,
        interrupt_after: int | None,
        *,
        whole: bool = False,
        priority: Priority | None = None,
    ) -> tuple[Say, Rest | None]:
        """The move for decision ``d`` and what is left to voice (``whole``: all of it now, as a turn
        planned before the call must be; ``priority`` on the run's voice, default URGENT, BACKGROUND for a
        whole turn, voiced before the call)."""
        assert d.turn is not None
        level = priority if priority is not None else BACKGROUND if whole else URGENT
        turn, bc_audio, rest = await self.lock.run(level, self._synthesize, d, index, rng, whole)
        cues = ReplyCues(
            backchannel_text=d.backchannel.text if d.backchannel else None,
            backchannel_audio=bc_audio,
            backchannel_at=ms_to_samples(d.backchannel.at_ms) if d.backchannel else None,
            interrupt_after=ms_to_samples(d.interrupt_after_ms)
            if d.interrupt_after_ms is not None
            else interrupt_after,
        )
        return Say(turn, cues, more=rest is not None), rest

    def _synthesize(
        self, d: CallerDecision, index: int, rng: random.Random, whole: bool
    ) -> tuple[PlannedTurn, Pcm | None, Rest | None]:
        assert d.turn is not None
        rest: Rest | None = None
        if whole:
            turn = plan_turn(index, -1, d.turn, self.tts, self.timing, rng)
        else:
            turn, rest = plan_first_clause(index, d.turn, self.tts, self.timing, rng)
        if turn.think_source == "random":
            turn = dataclasses.replace(turn, think=int(turn.think * self.think_scale))
        bc = speak(self.tts, d.backchannel.text) if d.backchannel else None
        return turn, bc, rest

    def start(self, index: int, said: str, rest: Rest) -> None:
        """Voice the rest of turn ``index`` in the background, clause by clause (the core has its first
        clause, ``said``)."""
        self.stop()
        s = _Stream(index, said, rest_clauses(*rest))
        s.task = asyncio.ensure_future(self._voice(s))
        self._stream = s

    async def _voice(self, s: _Stream) -> None:
        for text, pause_ms in s.clauses:
            try:
                async with asyncio.timeout(self.timeout_s):
                    pcm = await self._clause(text, pause_ms)
            except (CallerSpeechFailed, TimeoutError) as exc:
                log.warning("the caller's voice failed on %r (%r): the turn ends there", text, exc)
                s.failed = True
                return
            s.voiced.append(pcm)

    async def _clause(self, text: str, pause_ms: int) -> Pcm:
        """One clause of a rest, voiced under the TTS lock, held for this clause only."""
        return await self.lock.run(SOON, speak_rest, self.tts, text, pause_ms)  # after any due first clause

    async def supply(self, core: ReactiveCallCore, *, wait: bool = False) -> None:
        """Hand the core every clause voiced since the last call, in order (``wait``: wait for the whole
        rest, as on a virtual clock, where every step must be frame-exact)."""
        s = self._stream
        if s is None or s.task is None:
            return
        if wait:
            await asyncio.wait([s.task])
        while s.voiced:
            s.said += s.clauses[s.handed][0]
            s.handed += 1
            core.extend(s.index, s.voiced.pop(0), core.now, said=s.said, more=s.handed < len(s.clauses))
        if s.task.done():
            self._stream = None
            s.task.result()  # a storage error stops the run
            if s.failed:  # nothing more: the turn ends with what was said
                core.extend(s.index, np.zeros(0, dtype=np.int16), core.now, said=s.said)

    def stop(self) -> None:
        """Drop a rest still being voiced (a clause's thread finishes on its own)."""
        if self._stream is not None and self._stream.task is not None:
            self._stream.task.cancel()
        self._stream = None
