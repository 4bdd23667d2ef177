"""The built-in assistant's settings, its logging set-up, the speech engines all its calls share, and the
one clock read outside the calls' pipelines (:func:`stopwatch`).

The settings are four frozen groups, each checked when built and each handed only to what reads it:
:class:`ServingSettings` (the app and the gate), :class:`SpeechSettings` (the engines),
:class:`~voice.contract.tuning.TurnSettings` (the pipeline's turn-taking and hold, defined below both sides
because ``--set`` enters on either) and :class:`PolicySettings` (what it says).  ``--set KEY=VALUE`` is
parsed once where it enters (:func:`voice.contract.tuning.parse_tuning`) and applied by
:meth:`AssistantSettings.tuned`.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from voice.contract.access import open_without_token
from voice.contract.tuning import (
    ASR_CONTEXT_S,
    ASSISTANT_ASR_PROMPT,
    Tuning,
    TurnSettings,
    asr_context_problem,
)
from voice.core.audio import SAMPLE_RATE
from voice.errors import ConfigError
from voice.speech.tts.engine import DEFAULT_TTS

if TYPE_CHECKING:  # pipecat (and its banner) only when the assistant runs: `callsim bench` checks first
    from voice.contract.policy import AssistantView, Policy
    from voice.speech.asr import ASREngine
    from voice.speech.tts.engine import TTSEngine

T = TypeVar("T")
WARMUP_TEXT = "您好，这里是机主的智能助理，请问有什么事吗？"

# A 20 ms frame is 640 bytes at 16 kHz (1,920 at 48 kHz): a binary message over this is not a frame, and
# taking it as audio would make the call's timeline jump (2 MB is 65 s).  Control events are a few hundred
# bytes; a ``start`` with its dialogue a few KB.
MAX_BINARY_BYTES = 8 * 1024
MAX_TEXT_BYTES = 64 * 1024


def default_max_calls(cpus: int | None = None) -> int:
    """Concurrent calls the built-in takes when not told: 4 per CPU, 8..64.

    Each call runs its own VAD and shares one Whisper and one TTS thread; past a few calls per CPU the
    replies queue behind each other and the measured latency is the server's queue, not the assistant.
    """
    return min(64, max(8, 4 * (cpus or os.cpu_count() or 1)))


def _refuse(problems: list[str]) -> None:
    if problems:
        raise ConfigError("invalid assistant settings: " + "; ".join(problems))


@dataclass(frozen=True)
class ServingSettings:
    """Where the built-in listens, who may call, how many at once, what a socket may send and how long a
    call may last (server/gate.py, server/app.py)."""

    host: str = "127.0.0.1"
    port: int = 8765  # 0 picks a free port (see AssistantServer.port)
    path: str = "/pcm"  # the raw PCM protocol (docs/protocol.md)
    twilio_path: str = "/twilio"  # Twilio Media Streams (docs/twilio.md)
    webrtc_path: str = "/api/offer"  # WebRTC offers, as pipecat's runner takes them (server/webrtc_route.py)
    token: str = field(default="", repr=False)  # required on a non-loopback bind; never logged
    allowed_origins: tuple[str, ...] = ()  # browser pages allowed besides loopback ones ("*": any)
    max_calls: int = field(default_factory=default_max_calls)  # connections at once; more get 1013
    socket_idle_secs: float = 15.0  # a socket that sends nothing this long is closed (CallSim sends 50/s)
    max_binary_bytes: int = MAX_BINARY_BYTES
    max_text_bytes: int = MAX_TEXT_BYTES
    max_call_secs: int = 900
    idle_timeout_secs: float = 120.0  # a call with no speech either way for this long is dropped
    sip_port: int | None = None  # a SIP gateway in front of the /pcm route on this UDP port (0: any)

    def __post_init__(self) -> None:
        problems = []
        if not 0 <= self.port <= 65535:
            problems.append(f"port {self.port} is not in 0..65535")
        if self.sip_port is not None and not 0 <= self.sip_port <= 65535:
            problems.append(f"sip_port {self.sip_port} is not in 0..65535")
        routes = {"path": self.path, "twilio_path": self.twilio_path, "webrtc_path": self.webrtc_path}
        for name, value in routes.items():
            if not value.startswith("/"):
                problems.append(f"{name} {value!r} must start with '/'")
        for (a, x), (b, y) in itertools.combinations(routes.items(), 2):
            if x == y:
                problems.append(f"{a} and {b} are both {x!r}")
        positive = ("max_call_secs", "idle_timeout_secs", "socket_idle_secs", "max_calls")
        problems += [f"{name} must be positive" for name in positive if getattr(self, name) <= 0]
        if not 640 <= self.max_binary_bytes <= self.max_text_bytes:
            problems.append(
                f"max_binary_bytes={self.max_binary_bytes} must be at least one 20 ms frame (640) and at most"
                f" max_text_bytes={self.max_text_bytes}"
            )
        if (refused := open_without_token(self.host, self.token)) is not None:
            problems.append(refused)
        _refuse(problems)


@dataclass(frozen=True)
class SpeechSettings:
    """The built-in's voice and ears: the engines every call shares (:meth:`SpeechEngines.load`)."""

    tts: str = DEFAULT_TTS
    tts_voice: str | None = None
    tts_cache: bool = True
    tts_cache_dir: Path | None = None
    asr_model_dir: Path | None = None
    asr_audio_context_s: float | None = ASR_CONTEXT_S  # Whisper sees the speech + this (None: 30 s; asr.py)
    asr_prompt: str = ASSISTANT_ASR_PROMPT  # Whisper's initial prompt ("" for none)

    def __post_init__(self) -> None:
        problem = asr_context_problem(self.asr_audio_context_s)
        _refuse([problem] if problem else [])


@dataclass(frozen=True)
class PolicySettings:
    """What the built-in says, and what it tells CallSim about it."""

    policy: str = "rules"  # rules, module:callable (server.policy.plugins), openai:MODEL (server.policy.llm)
    policy_base_url: str = ""  # openai:MODEL: the server ("" → $OPENAI_BASE_URL → OpenAI)
    policy_timeout_secs: float = 10.0  # openai:MODEL: a reply that has not started by then gets the fallback
    start_timeout_secs: float = 2.0  # no 'start' by then: use the default assistant view
    send_logs: bool = True  # send transcripts and replies to CallSim as 'log' events

    def __post_init__(self) -> None:
        names = ("policy_timeout_secs", "start_timeout_secs")
        _refuse([f"{name} must be positive" for name in names if getattr(self, name) <= 0])


class _FromServing(Generic[T]):
    """A read-only attribute of :class:`AssistantSettings` that is its serving group's of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, settings: AssistantSettings, owner: type | None = None) -> T:
        value: T = getattr(settings.serving, self.name)
        return value


@dataclass(frozen=True)
class AssistantSettings:
    """Everything the built-in assistant can be told, in its four groups.  Each group checks itself when
    built: an invalid value raises :class:`ConfigError`."""

    serving: ServingSettings = field(default_factory=ServingSettings)
    speech: SpeechSettings = field(default_factory=SpeechSettings)
    # voice/contract/tuning.py: ``--set`` changes these
    turns: TurnSettings = field(default_factory=TurnSettings)
    policy: PolicySettings = field(default_factory=PolicySettings)
    prewarm: bool = True
    verbose: bool = False
    configure_logging: bool = True  # install the logging handler (INFO, pipecat at WARNING) on start

    def tuned(self, tuning: Tuning) -> AssistantSettings:
        """These settings with the ``--set`` values of ``tuning`` (parsed and checked where they entered)."""
        speech = self.speech
        if "asr_audio_context_s" in tuning.given:
            speech = replace(speech, asr_audio_context_s=tuning.asr_audio_context_s)
        if "asr_prompt" in tuning.given:
            speech = replace(speech, asr_prompt=tuning.asr_prompt)
        return replace(self, speech=speech, turns=tuning.applied_to(self.turns))

    # The serving values server/gate.py reads by their flat names (until it reads ``settings.serving``).
    token = _FromServing[str]()
    allowed_origins = _FromServing[tuple[str, ...]]()
    max_calls = _FromServing[int]()
    socket_idle_secs = _FromServing[float]()
    max_binary_bytes = _FromServing[int]()
    max_text_bytes = _FromServing[int]()


# --- logging ---------------------------------------------------------------------------------------------

LOG_FORMAT = "%(asctime)s | %(levelname)-8s | %(name)s - %(message)s"
_handler: logging.Handler | None = None


def configure_logging(verbose: bool = False) -> None:
    """One ``logging`` handler on stderr: INFO (DEBUG if verbose), chatty pipecat at WARNING unless verbose.

    CallSim logs with the standard library, ``voice`` and ``server`` alike.  pipecat logs with loguru, whose
    own sink would print everything it says at DEBUG: :func:`_route_pipecat` replaces that sink with one
    that hands pipecat's records to ``logging`` (logger ``pipecat``), so one handler and one level rule all.
    """
    global _handler
    root = logging.getLogger()
    if _handler is not None:  # ours from an earlier call
        root.removeHandler(_handler)
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root.addHandler(_handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for chatty in ("pipecat", "httpx", "httpcore", "openai"):  # a line per request otherwise
        logging.getLogger(chatty).setLevel(logging.DEBUG if verbose else logging.WARNING)
    _route_pipecat(verbose)


def _route_pipecat(verbose: bool) -> None:
    """pipecat's loguru records into ``logging`` (the edge where the third-party logger is translated).

    loguru's level numbers are the standard library's (DEBUG 10 … CRITICAL 50; its TRACE is 5, SUCCESS 25).
    """
    from loguru import logger as pipecat_logger  # pipecat's dependency, not ours: only its records come here

    def forward(message: Any) -> None:
        record = message.record
        exc = record["exception"]
        logging.getLogger(record["name"] or "pipecat").log(
            record["level"].no, record["message"], exc_info=tuple(exc) if exc else None
        )

    pipecat_logger.remove()
    pipecat_logger.add(forward, level="DEBUG" if verbose else "INFO", format="{message}")


# --- durations outside a pipeline -------------------------------------------------------------------------


def stopwatch() -> Callable[[], float]:
    """Start timing now; the function returned gives the seconds since.

    For durations outside any call's pipeline: loading and warming the engines at start-up, a call's length
    in the server log, the start-up deadline.  Inside a pipeline nothing reads a clock to measure: the stage
    observer (:mod:`server.stage_observer`) times frames on the pipeline's clock.
    """
    started = time.monotonic()
    return lambda: time.monotonic() - started


# --- engines -----------------------------------------------------------------------------------------------


class SpeechEngines:
    """The TTS and ASR engines every call shares, each with its own one-thread executor."""

    def __init__(self, tts: TTSEngine, asr: ASREngine) -> None:
        self.tts = tts
        self.asr = asr
        self.tts_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="callsim-tts")
        self.asr_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="callsim-asr")
        self.warmup_secs: dict[str, float] = {}

    @classmethod
    def load(cls, settings: SpeechSettings) -> SpeechEngines:
        """Build the engines named in ``settings`` (blocking; engine errors are CallSimErrors)."""
        from voice.speech.asr import WhisperASR
        from voice.speech.tts import make_tts

        tts = make_tts(
            settings.tts, voice=settings.tts_voice, cache_dir=settings.tts_cache_dir, cache=settings.tts_cache
        )
        asr = WhisperASR(
            settings.asr_model_dir,
            audio_context_s=settings.asr_audio_context_s,
            initial_prompt=settings.asr_prompt or None,
        )
        return cls(tts, asr)

    def warm_up(self) -> dict[str, float]:
        """Load the models now (blocking) so the first call is not slow; returns seconds per stage."""
        elapsed = stopwatch()
        engine = getattr(self.tts, "engine", self.tts)  # behind a disk cache a warm-up would be a hit
        _maybe_load(engine)
        speech = engine.synthesize(WARMUP_TEXT)
        self.warmup_secs["tts"] = elapsed()
        elapsed = stopwatch()
        _maybe_load(self.asr)
        self.asr.transcribe(speech if len(speech) else np.zeros(SAMPLE_RATE // 2, dtype=np.int16))
        self.warmup_secs["asr"] = elapsed()
        elapsed = stopwatch()
        from pipecat.audio.vad.silero import SileroVADAnalyzer

        SileroVADAnalyzer()  # loads onnxruntime once; every call builds its own (stateful) analyzer
        self.warmup_secs["vad"] = elapsed()
        return dict(self.warmup_secs)

    def close(self) -> None:
        """Stop the executors (running jobs finish in the background)."""
        self.tts_executor.shutdown(wait=False, cancel_futures=True)
        self.asr_executor.shutdown(wait=False, cancel_futures=True)


def _maybe_load(engine: object) -> None:
    load = getattr(engine, "load", None)
    if callable(load):
        load()


def default_policy_factory(view: AssistantView) -> Policy:
    """The rule-based policy of ``server.policy.rules``, built from a dialogue's assistant view."""
    from server.policy.rules import RulePolicy

    policy: Policy = RulePolicy(dict(view))
    return policy
