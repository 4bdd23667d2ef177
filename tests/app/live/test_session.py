"""A live caller rides along the driver: microphone in, speaker out, the call shown, transcripts logged."""

from __future__ import annotations

import asyncio

import numpy as np

from tests.fakes import tone
from voice.app.live.ports import MemoryMicrophone, MemorySpeaker
from voice.app.live.session import LiveCaller
from voice.app.run.driver import run_call
from voice.core import events as ev
from voice.core.audio import FRAME_SAMPLES, Pcm, ms_to_samples, silence
from voice.core.call import AssistantAudio, AssistantControl, LineInput
from voice.core.clock import VirtualClock
from voice.core.live import LiveCallCore
from voice.lines.line import CallStart
from voice.lines.memory import MemoryLine
from voice.metrics.measure import measure
from voice.speech.asr import MemoryASR


class Answers:
    """Greets, then answers each caller utterance 300 ms after it ends (and logs what it says)."""

    def __init__(self) -> None:
        self.talking, self.quiet = False, 0

    def on_start(self, start: CallStart) -> list[LineInput]:
        return [AssistantAudio(tone(400)), AssistantControl("log", {"kind": "greeting", "text": "您好"})]

    def on_frame(self, pcm: Pcm) -> list[LineInput]:
        if np.abs(pcm).max() > 1000:
            self.talking, self.quiet = True, 0
            return []
        self.quiet += 1
        if self.talking and self.quiet == 15:
            self.talking = False
            return [AssistantAudio(tone(600)), AssistantControl("log", {"kind": "reply", "text": "好的"})]
        return []


async def test_a_live_call_is_heard_shown_transcribed_and_measured():
    mic_audio = np.concatenate([silence(ms_to_samples(1000)), tone(1200), silence(ms_to_samples(200))])
    core = LiveCallCore()
    speaker, shown = MemorySpeaker(), []
    caller = LiveCaller(
        core, MemoryMicrophone(mic_audio), speaker, asr=MemoryASR(["喂，你好"]), say=shown.append
    )
    await caller.start()
    trace = await run_call(core, MemoryLine(Answers()), VirtualClock(), CallStart("c"), companion=caller)
    assert np.array_equal(speaker.played, trace.heard)  # everything heard went to the speaker
    assert "you: 1.2 s of speech" in shown and "you said: 喂，你好" in shown
    assert "assistant says: 您好" in shown and "assistant says: 好的" in shown
    assert any(line.startswith("assistant: speaking, ") and "ms after you stopped" in line for line in shown)
    plans = [e for e in trace.events if isinstance(e, ev.TurnPlanned)]
    assert [(p.turn, p.text) for p in plans] == [(0, "喂，你好")]
    assert trace.outcome.reason == "completed" and not trace.outcome.failed
    metrics = measure(trace.recording("c", {}))
    assert metrics.turns[0].text == "喂，你好" and metrics.turns[0].latency_ms is not None
    assert 300 <= metrics.turns[0].latency_ms <= 340  # 15 quiet frames, then the next frame


class Yields:
    """Greets for 3 s, and clears the rest of the greeting 100 ms into any caller speech."""

    def __init__(self) -> None:
        self.loud = 0

    def on_start(self, start: CallStart) -> list[LineInput]:
        return [AssistantAudio(tone(3000))]

    def on_frame(self, pcm: Pcm) -> list[LineInput]:
        self.loud = self.loud + 1 if np.abs(pcm).max() > 1000 else 0
        return [AssistantControl("clear")] if self.loud == 5 else []


class PacedMicrophone(MemoryMicrophone):
    """Frame ``k`` only once the call has reached it, as a real microphone delivers it."""

    def __init__(self, pcm: Pcm, core: LiveCallCore) -> None:
        super().__init__(pcm)
        self.core, self.k = core, 0

    async def read(self) -> Pcm | None:
        while self.core.now < self.k * FRAME_SAMPLES and not self.core.done:
            await asyncio.sleep(0)
        self.k += 1
        return await super().read()


async def run_live(mic_audio: Pcm, bot: object, **options: object) -> tuple[list[str], list[ev.CallEvent]]:
    core, shown = LiveCallCore(), []
    mic = PacedMicrophone(mic_audio, core)
    caller = LiveCaller(core, mic, MemorySpeaker(), say=shown.append, **options)  # type: ignore[arg-type]
    await caller.start()
    trace = await run_call(core, MemoryLine(bot), VirtualClock(), CallStart("c"), companion=caller)  # type: ignore[arg-type]
    return shown, trace.events


async def test_cutting_in_shows_how_long_the_assistant_took_to_stop():
    mic_audio = np.concatenate([silence(ms_to_samples(1000)), tone(1000), silence(ms_to_samples(200))])
    shown, _ = await run_live(mic_audio, Yields())
    assert "you (cutting in): 1.0 s of speech" in shown
    [stopped] = [line for line in shown if line.startswith("assistant: stopped ")]
    ms = float(stopped.split()[2])
    assert 100 <= ms <= 125  # 5 loud frames, then the clear plays out at the next frame


async def test_the_echo_gate_mutes_the_microphone_while_the_assistant_is_heard():
    echo = np.concatenate([silence(ms_to_samples(1000)), tone(1500), silence(ms_to_samples(200))])
    _, open_events = await run_live(echo, Yields())
    _, gated_events = await run_live(echo, Yields(), echo_gate_ms=300)
    assert any(isinstance(e, ev.CallerSpoke) for e in open_events)  # without it the echo is a barge-in
    assert not any(isinstance(e, ev.CallerSpoke | ev.BackchannelSaid) for e in gated_events)


class Untold(Answers):
    """Answers as :class:`Answers` does, but never says (in a log) what it says."""

    def on_start(self, start: CallStart) -> list[LineInput]:
        return [AssistantAudio(tone(400))]

    def on_frame(self, pcm: Pcm) -> list[LineInput]:
        return [item for item in super().on_frame(pcm) if isinstance(item, AssistantAudio)]


async def test_what_an_assistant_does_not_tell_is_shown_as_heard():
    mic_audio = np.concatenate([silence(ms_to_samples(1000)), tone(1200), silence(ms_to_samples(200))])
    core, shown = LiveCallCore(), []
    asr = MemoryASR([], default="好的")
    caller = LiveCaller(core, MemoryMicrophone(mic_audio), MemorySpeaker(), asr=asr, say=shown.append)
    await caller.start()
    await run_call(core, MemoryLine(Untold()), VirtualClock(), CallStart("c"), companion=caller)
    assert shown.count("assistant said (as heard): 好的") == 2  # the greeting and the reply
