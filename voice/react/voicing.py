"""The reactive caller's voice: a decided turn voiced first clause first, the rest while it plays (issue 26).

Voicing a whole turn before it could start put all of the TTS's time on the caller's critical path.  Here a
turn of several clauses is voiced by its first clause (:func:`voice.speech.caller_plan.plan_first_clause`):
the session hands that to the core as ``Say(more=True)``, and once the core has it :meth:`Voicing.start`
voices the rest in the background, under the run's TTS lock and a timeout, and :meth:`Voicing.supply`
hands it over (:meth:`voice.core.reactive.ReactiveCallCore.extend`), played right after the first clause.
The rest voiced as its own clip sounds as a comma's pause: each clause is its own synthesis pass.  An engine
that fails on the rest (:class:`~voice.errors.CallerSpeechFailed`), or takes longer than ``timeout_s``, ends
the turn with its first clause, and the turn's records then hold only what was said; a storage error stops
the run, as anywhere else.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random

import numpy as np

from voice.core.audio import Pcm, ms_to_samples
from voice.core.caller import CallerTiming, PlannedTurn
from voice.core.reactive import ReactiveCallCore, ReplyCues, Say
from voice.errors import CallerSpeechFailed
from voice.react.decision import CallerDecision
from voice.speech.caller_plan import plan_first_clause, plan_turn, speak, speak_rest
from voice.speech.engine_lock import BACKGROUND, URGENT, EngineLock
from voice.speech.tts.base import TTSEngine

Rest = tuple[str, int]  # the text still to voice and the pause before it (ms)
REST_TIMEOUT_S = 20.0
log = logging.getLogger(__name__)


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
        self._rest: tuple[int, str, asyncio.Task[Pcm]] | None = None  # turn, its first clause, the rest

    async def say(
        self,
        d: CallerDecision,
        index: int,
        rng: random.Random,
        interrupt_after: int | None,
        *,
        whole: bool = False,
    ) -> tuple[Say, Rest | None]:
        """The move for decision ``d`` and what is left to voice (``whole``: all of it now, as a turn
        planned before the call must be)."""
        assert d.turn is not None
        async with self.lock.hold(BACKGROUND if whole else URGENT):  # whole: before the call
            loop = asyncio.get_running_loop()
            turn, bc_audio, rest = await loop.run_in_executor(None, self._synthesize, d, index, rng, whole)
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
        """Voice the rest of turn ``index`` in the background (the core has its first clause, ``said``)."""
        self.stop()
        self._rest = index, said, asyncio.ensure_future(self._voice(*rest))

    async def _voice(self, text: str, pause_ms: int) -> Pcm:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout_s), self.lock:
                return await loop.run_in_executor(None, speak_rest, self.tts, text, pause_ms)
        except (CallerSpeechFailed, TimeoutError) as exc:
            log.warning(
                "the caller's voice failed on the rest of a turn (%r): it ends with its first clause", exc
            )
            return np.zeros(0, dtype=np.int16)

    async def supply(self, core: ReactiveCallCore, *, wait: bool = False) -> None:
        """Hand the core the rest once it is voiced (``wait``: wait for it, as on a virtual clock)."""
        if self._rest is None:
            return
        index, said, task = self._rest
        if wait:
            await asyncio.wait([task])
        if task.done():
            self._rest = None
            core.extend(index, task.result(), core.now, said=said)

    def stop(self) -> None:
        """Drop a rest still being voiced (its thread finishes on its own)."""
        if self._rest is not None:
            self._rest[2].cancel()
            self._rest = None
