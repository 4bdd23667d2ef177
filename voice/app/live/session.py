"""A person as the caller during one call: microphone in, speaker out, the call shown as it happens.

:class:`LiveCaller` rides along the driver's frames (it is a :class:`~voice.app.run.driver.CallCompanion`): a
task reads the microphone and feeds each 20 ms into the :class:`~voice.core.live.LiveCallCore`; after each
frame what the caller heard goes to the speaker; the core's new events become lines on screen (each of the
person's turns with its transcript, each reply with its latency, each interruption with how long the
assistant took to stop).  When the microphone is a file that runs out, the caller hangs up after the reply
to its last words.  At the end each turn's transcript joins the event log (``turn_plan``), so the report
shows what the person said.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from voice.app.live.ports import Microphone, Speaker
from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, Pcm, ms_to_samples, samples_to_ms
from voice.core.live import LiveCallCore
from voice.metrics.measure import YIELD_SILENCE_MS, assistant_segments, merge_segments
from voice.speech.asr import ASREngine

Say = Callable[[str], None]


@dataclass(frozen=True)
class Notice:
    """What a screen may show of the call besides its lines (a web page's figures); ``kind`` says which
    fields it carries: ``turn`` (turn, secs, cut_in), ``stop`` (ms: None while still talking),
    ``backchannel``, ``latency`` (ms), ``assistant`` (text; turn None) and ``transcript`` (turn, text)."""

    kind: str
    turn: int | None = None
    secs: float | None = None
    cut_in: bool = False
    ms: int | None = None
    text: str = ""


Notify = Callable[[Notice], None]


class LiveCaller:
    """The companion of a live call: ``say`` prints a line (the terminal, a web page, a test's list)."""

    def __init__(
        self,
        core: LiveCallCore,
        mic: Microphone,
        speaker: Speaker,
        *,
        asr: ASREngine | None = None,
        say: Say = print,
        notify: Notify | None = None,
        echo_gate_ms: float | None = None,
    ) -> None:
        self.core, self.mic, self.speaker, self.asr, self.say = core, mic, speaker, asr, say
        self.notify = notify or (lambda _: None)
        # without headphones the microphone hears the speaker: mute it while (and this long after) the
        # assistant is heard; the person can then neither cut in nor backchannel
        self._gate = ms_to_samples(echo_gate_ms) if echo_gate_ms is not None else None
        self._reader: asyncio.Task[None] | None = None
        self._seen = 0  # events already shown
        self._played = 0  # heard samples already given to the speaker
        self._texts: dict[int, asyncio.Future[str]] = {}  # turn → its transcript (being made)
        self._reply_to: int | None = None  # the end of the utterance whose reply is awaited (a sample)
        self._onset: int | None = None  # the last reply's onset
        self._reply_told = False  # the assistant said (in a log) what it says, since the last reply ended
        self._heard_texts: list[asyncio.Future[str]] = []  # transcripts of replies it did not tell

    async def start(self) -> None:
        await self.mic.start()
        await self.speaker.start()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while not self.core.done:
            frame = await self.mic.read()
            if frame is None:
                self.core.hang_up_after_reply(self.core.now)
                return
            heard = self.core.last_assistant_sound
            if self._gate is not None and heard >= 0 and self.core.now - heard <= self._gate:
                frame = np.zeros_like(frame)
            self.core.feed(frame, self.core.now)

    # --- CallCompanion ------------------------------------------------------------------------------

    async def after_tick(self, heard: Callable[[], Pcm]) -> None:
        track = heard()
        if len(track) > self._played:
            self.speaker.play(track[self._played :])
            self._played = len(track)
        events = self.core.events
        for e in events[self._seen :]:
            self._show(e, track)
        self._seen = len(events)

    def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()

    async def finish(self, heard: Pcm) -> None:
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if len(heard) > self._played:  # the last frame: the driver stops before its after_tick
            self.speaker.play(heard[self._played :])
            self._played = len(heard)
        await self.mic.stop()
        await self.speaker.stop()
        for e in self.core.events[self._seen :]:
            self._show(e, heard)
        for heard_text in self._heard_texts:
            with contextlib.suppress(Exception):  # shown when ready, or not at all: it is not kept
                await heard_text
        for turn, text in sorted(self._texts.items()):
            words = await text
            utt = self.core.utterances[turn]
            self.core.note(ev.TurnPlanned(utt.end, turn, words, speech_start=utt.start, speech_end=utt.end))

    # --- what is shown ------------------------------------------------------------------------------

    def _show(self, e: ev.CallEvent, heard: Pcm) -> None:
        if isinstance(e, ev.CallerSpoke):
            secs = samples_to_ms(e.speech_end - e.speech_start) / 1000
            cut = " (cutting in)" if e.mode == "barge_in" else ""
            self.say(f"you{cut}: {secs:.1f} s of speech")
            self.notify(Notice("turn", turn=e.turn, secs=round(secs, 2), cut_in=bool(cut)))
            if e.mode == "barge_in":
                stop = stop_latency_ms(heard, e.speech_start)
                told = "had not stopped yet" if stop is None else f"stopped {stop:.0f} ms after you cut in"
                self.say(f"assistant: {told}")
                self.notify(Notice("stop", ms=None if stop is None else round(stop)))
            self._texts[e.turn] = self._transcribe(e.turn)
            self._reply_to = e.speech_end
            # the reply may have begun before the utterance was known to be over (its silence ran on)
            if self._onset is not None and self._onset >= e.speech_end:
                self._show_latency(self._onset)
        elif isinstance(e, ev.BackchannelSaid):
            self.say("you: (a backchannel)")
            self.notify(Notice("backchannel"))
        elif isinstance(e, ev.ReplyStarted):
            self._onset = e.at
            if self._reply_to is not None:
                self._show_latency(e.at)
            elif not self.core.speaking:
                self.say("assistant: speaking")
        elif isinstance(e, ev.ControlReceived):
            log = ev.assistant_log(e)
            text = log.get("text") if log is not None else None
            if log is not None and isinstance(text, str) and text:
                if log.get("kind") in ("reply", "greeting"):
                    self._reply_told = True
                    self.say(f"assistant says: {text}")
                    self.notify(Notice("assistant", text=text))
                elif log.get("kind") == "caller":
                    self.say(f"assistant heard: {text}")
        elif isinstance(e, ev.ReplyEnded):
            # an assistant that does not say what it says (no log since the last reply): as heard
            if not self._reply_told and self._onset is not None:
                audio = heard[self._onset : e.at]
                self._heard_texts.append(self._background(audio, "assistant said (as heard)"))
            self._reply_told = False
        elif isinstance(e, ev.HungUp):
            self.say(f"{e.by} hung up" + (f" ({e.reason})" if e.reason else ""))
        elif isinstance(e, ev.CallEnded) and e.failed:
            self.say(f"call failed: {e.reason} {e.detail}".rstrip())

    def _show_latency(self, onset: int) -> None:
        assert self._reply_to is not None
        latency = samples_to_ms(onset - self._reply_to)
        self.say(f"assistant: speaking, {latency:.0f} ms after you stopped")
        self.notify(Notice("latency", ms=round(latency)))
        self._reply_to = None

    def _transcribe(self, turn: int) -> asyncio.Future[str]:
        """The utterance's transcript, made in a worker thread (never on the frame loop)."""
        utt = self.core.utterances[turn]
        audio = self.core.caller_audio(utt.start, utt.end + FRAME_SAMPLES)
        return self._background(audio, "you said", turn=turn)

    def _background(self, audio: Pcm, label: str, *, turn: int | None = None) -> asyncio.Future[str]:
        """``audio``'s transcript, made in a worker thread and shown as ``label: text`` when it is ready."""
        loop = asyncio.get_running_loop()
        if self.asr is None:
            done: asyncio.Future[str] = loop.create_future()
            done.set_result("")
            return done
        future = loop.run_in_executor(None, self.asr.transcribe, audio)

        def show(f: asyncio.Future[str]) -> None:
            if not f.cancelled() and f.exception() is None and f.result():
                self.say(f"{label}: {f.result()}")
                kind = "transcript" if turn is not None else "assistant"
                self.notify(Notice(kind, turn=turn, text=f.result()))

        future.add_done_callback(show)
        return future


def stop_latency_ms(heard: Pcm, at: int) -> float | None:
    """How long after sample ``at`` the assistant's speech run covering it ended, as the barge-in metric
    measures it (``voice/metrics/measure.py``); 0 if it was silent, None if it is still talking."""
    rate = 16000
    lo = max(0, at - 5 * rate)
    runs = merge_segments(assistant_segments(heard[lo:]), ms_to_samples(YIELD_SILENCE_MS))
    for s, e in runs:
        if s + lo <= at < e + lo:
            return None if e + lo >= len(heard) else samples_to_ms(e + lo - at)
    return 0.0
