"""Test doubles shared by the call-core, driver and measurement tests (no real engines)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from voice.core.audio import FRAME_SAMPLES, Pcm, active_bounds, ms_to_samples
from voice.core.call import AssistantAudio, AssistantControl, CallCore, LineInput
from voice.core.caller import CallerPlan, CallerTiming, PlannedTurn
from voice.core.events import CallerSpoke
from voice.lines.base import CallStart


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


@dataclass
class ScriptedAssistant:
    """A ground-truth assistant: replies exactly ``reply_ms`` after the caller's speech ends.

    It hears the caller frame by frame (energy), knows a caller turn is over after ``endpoint_ms`` of
    silence, then plays a ``reply_len_ms`` reply starting at ``speech_end + reply_ms`` (sample-exact).
    On caller speech during its reply it stops ``stop_ms`` after the caller's onset (None: never stops).
    With ``heard`` texts it sends a ``log`` of kind ``caller`` at each turn end, as its "ASR" of that turn
    (the next text each time; the last one repeats).
    """

    reply_ms: float = 400.0
    reply_len_ms: float = 1500.0
    greeting_ms: float | None = 300.0
    stop_ms: float | None = 200.0
    endpoint_ms: float = 300.0
    hangup_after_turns: int | None = None
    heard_texts: tuple[str, ...] = ()
    heard: int = 0  # samples of caller audio received
    _speech_end: int | None = None
    _in_speech: bool = False
    _onset: int | None = None
    _reply_end: int = 0
    _replies: int = 0
    pending: list[tuple[int, LineInput]] = field(default_factory=list)

    def start(self) -> None:
        if self.greeting_ms is not None:
            self._play(ms_to_samples(self.greeting_ms))

    def _play(self, at: int) -> None:
        audio = tone(self.reply_len_ms, f0=300.0)
        self._reply_end = at + len(audio)
        for k in range(0, len(audio), FRAME_SAMPLES):  # delivered in 20 ms chunks, each at its play time
            self.pending.append((at + k, AssistantAudio(audio[k : k + FRAME_SAMPLES])))

    def frame(self, pcm: Pcm) -> None:
        s = self.heard
        self.heard += len(pcm)
        b = active_bounds(pcm)
        if b is not None:
            if not self._in_speech:
                self._onset = s + b[0]
                self._in_speech = True
                if self.stop_ms is not None and self._onset < self._reply_end:
                    cut = self._onset + ms_to_samples(self.stop_ms)
                    self.pending = [(t, x) for t, x in self.pending if t < cut]
                    self.pending.append((cut, AssistantControl("clear")))
                    self._reply_end = cut
            self._speech_end = s + b[1]
        elif (
            self._in_speech
            and self._speech_end is not None
            and self.heard - self._speech_end >= ms_to_samples(self.endpoint_ms)
        ):
            self._in_speech = False
            if self.heard_texts:
                text = self.heard_texts[min(self._replies, len(self.heard_texts) - 1)]
                self.pending.append((self.heard, AssistantControl("log", {"kind": "caller", "text": text})))
            self._replies += 1
            if self.hangup_after_turns is not None and self._replies > self.hangup_after_turns:
                self.pending.append((self.heard, AssistantControl("hangup", {"reason": "done"})))
                return
            self._play(max(self._speech_end + ms_to_samples(self.reply_ms), self.heard))

    def due(self, now: int, horizon: int) -> list[tuple[int, LineInput]]:
        """Items to deliver before ``horizon`` (stamped with their exact times, never before ``now``)."""
        out = [(max(t, now), x) for t, x in self.pending if t < horizon]
        self.pending = [(t, x) for t, x in self.pending if t >= horizon]
        return out


def run_core(core: CallCore, bot: ScriptedAssistant, max_frames: int = 20_000) -> list[Pcm]:
    """Drive the core frame by frame against the scripted assistant, on virtual time."""
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


class MemoryBot:
    """Adapts :class:`ScriptedAssistant` to a :class:`~voice.lines.memory.FakeAssistant` (frame-quantised)."""

    def __init__(self, bot: ScriptedAssistant) -> None:
        self.bot = bot

    def on_start(self, start: CallStart) -> list[LineInput]:
        self.bot.start()
        return [x for _, x in self.bot.due(0, FRAME_SAMPLES)]

    def on_frame(self, pcm: Pcm) -> list[LineInput]:
        self.bot.frame(pcm)
        now = self.bot.heard
        return [x for _, x in self.bot.due(now, now + FRAME_SAMPLES)]


def caller_turn_event(
    i: int, cs_ms: float, ce_ms: float, mode: str = "after_reply", pause=None
) -> CallerSpoke:
    """A ``caller_turn`` event as the call core logs it, from times in ms (``pause``: (start, end) in ms)."""
    cs, ce = ms_to_samples(cs_ms), ms_to_samples(ce_ms)
    p = (ms_to_samples(pause[0]), ms_to_samples(pause[1])) if pause else None
    return CallerSpoke(cs, i, mode, audio_start=cs, speech_start=cs, speech_end=ce, pause=p)
