"""The built-in assistant's settings, its logging set-up, the speech engines all its calls share, and the
one clock read outside the calls' pipelines (:func:`stopwatch`)."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from voice.core.access import open_without_token
from voice.core.audio import SAMPLE_RATE
from voice.errors import ConfigError
from voice.speech.tts.base import DEFAULT_TTS

if TYPE_CHECKING:  # pipecat (and its banner) only when the assistant runs: `callsim bench` checks first
    from voice.core.policy import Policy
    from voice.speech.asr import ASREngine
    from voice.speech.tts.base import TTSEngine

WARMUP_TEXT = "您好，这里是机主的智能助理，请问有什么事吗？"


TURN_MODELS = ("lexical", "silence", "smart-turn")
# The built-in's ASR prompt: a phone call, with the fillers written out, so that Whisper base writes "那个"
# and "就是" (which the lexical turn model reads) instead of dropping or mishearing them.  Caller speech
# (scripts/bench_asr_cer --speech caller, +3 s window): CER 0.176, against 0.166 with DEFAULT_PROMPT.
ASSISTANT_ASR_PROMPT = "以下是普通话的电话录音，嗯，那个，就是，然后。"

# The settings ``--set KEY=VALUE`` may change (``python -m server``, ``callsim serve``,
# ``bench --assistant-set``):
# turn-taking and the ASR's window, which is what a trade-off bench varies; the rest have flags of their own.
TUNABLE = (
    "vad_start_secs",
    "vad_stop_secs",
    "vad_confidence",
    "turn_model",
    "turn_max_silence_secs",
    "turn_grace_secs",
    "barge_in_confirm_secs",
    "barge_in_silence_secs",
    "hold_after_secs",
    "hold_release_secs",
    "hold_min_gap_secs",
    "hold_again_secs",
    "output_lead_secs",
    "asr_audio_context_s",
    "asr_prompt",
)


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


@dataclass(frozen=True)
class AssistantSettings:
    """Everything the built-in assistant can be told.  Invalid values raise :class:`ConfigError`."""

    host: str = "127.0.0.1"
    port: int = 8765  # 0 picks a free port (see AssistantServer.port)
    path: str = "/pcm"  # the raw PCM protocol (docs/protocol.md)
    twilio_path: str = "/twilio"  # Twilio Media Streams (docs/twilio.md)
    tts: str = DEFAULT_TTS
    tts_voice: str | None = None
    tts_cache: bool = True
    tts_cache_dir: Path | None = None
    asr_model_dir: Path | None = None
    asr_audio_context_s: float | None = 3.0  # Whisper's encoder sees the speech + this (None: 30 s; asr.py)
    asr_prompt: str = ASSISTANT_ASR_PROMPT  # Whisper's initial prompt ("" for none)
    vad_start_secs: float = 0.2  # speech needed before the VAD says "speaking"
    vad_stop_secs: float = 0.2  # silence needed before it says "stopped" (ends the ASR segment)
    vad_confidence: float = 0.7
    vad_min_volume: float = 0.5
    turn_model: str = "lexical"  # what ends a turn: "lexical", "silence" or "smart-turn" (server/turns.py)
    turn_max_silence_secs: float = 2.0  # lexical, smart-turn: an unfinished-sounding turn ends after this
    turn_grace_secs: float = 0.2  # lexical, silence: after the VAD stops, how long the caller may resume
    barge_in_confirm_secs: float = 0.3  # extra speech needed to interrupt (short backchannels do not)
    barge_in_silence_secs: float = 0.1  # silent this long when the confirmation is due: a backchannel
    hold_after_secs: float = 0.1  # caller speech that holds an audible reply at once (0: off; server/hold.py)
    hold_release_secs: float = 0.064  # caller silence that lets a held reply go on
    hold_min_gap_secs: float = 0.22  # ... but not before the caller has heard this much of the hold
    hold_again_secs: float = 0.4  # caller speech this soon after a release holds again at once
    output_lead_secs: float = 0.06  # audio sent ahead of the caller's playout (the rest at real time)
    turn_stop_timeout_secs: float = 3.0  # a turn whose transcript never comes is closed after this
    start_timeout_secs: float = 2.0  # no 'start' by then: use the default assistant view
    max_call_secs: int = 900
    idle_timeout_secs: float = 120.0  # a call with no speech either way for this long is dropped
    prewarm: bool = True
    send_logs: bool = True  # send transcripts and replies to CallSim as 'log' events
    policy: str = "rules"  # rules, module:callable (server.policy.plugins), openai:MODEL (server.policy.llm)
    policy_base_url: str = ""  # openai:MODEL: the server ("" → $OPENAI_BASE_URL → OpenAI)
    policy_timeout_secs: float = 10.0  # openai:MODEL: a reply that has not started by then gets the fallback
    # --- serving: who may call, how many at once, and what a socket may send (server/gate.py) ---
    token: str = field(default="", repr=False)  # required on a non-loopback bind; never logged
    allowed_origins: tuple[str, ...] = ()  # browser pages allowed besides loopback ones ("*": any)
    max_calls: int = field(default_factory=default_max_calls)  # connections at once; more get 1013
    socket_idle_secs: float = 15.0  # a socket that sends nothing this long is closed (CallSim sends 50/s)
    max_binary_bytes: int = MAX_BINARY_BYTES
    max_text_bytes: int = MAX_TEXT_BYTES
    verbose: bool = False
    configure_logging: bool = True  # install the logging handler (INFO, pipecat at WARNING) on start

    def __post_init__(self) -> None:
        problems = []
        if not 0 <= self.port <= 65535:
            problems.append(f"port {self.port} is not in 0..65535")
        for name in ("path", "twilio_path"):
            if not getattr(self, name).startswith("/"):
                problems.append(f"{name} {getattr(self, name)!r} must start with '/'")
        if self.path == self.twilio_path:
            problems.append(f"path and twilio_path are both {self.path!r}")
        for name in (
            "vad_start_secs",
            "vad_stop_secs",
            "turn_grace_secs",
            "barge_in_confirm_secs",
            "barge_in_silence_secs",
            "hold_after_secs",
            "hold_release_secs",
            "hold_min_gap_secs",
            "hold_again_secs",
            "output_lead_secs",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 5.0:
                problems.append(f"{name}={value} is not in 0..5 s")
        if self.turn_model not in TURN_MODELS:
            problems.append(f"turn_model {self.turn_model!r} is not one of {', '.join(TURN_MODELS)}")
        if self.asr_audio_context_s is not None and not 0.0 <= self.asr_audio_context_s <= 30.0:
            problems.append(f"asr_audio_context_s={self.asr_audio_context_s} is not in 0..30 s (or full)")
        if not 0.1 <= self.turn_max_silence_secs <= 10.0:
            problems.append(f"turn_max_silence_secs={self.turn_max_silence_secs} is not in 0.1..10 s")
        if not 0.0 < self.vad_confidence < 1.0:
            problems.append(f"vad_confidence={self.vad_confidence} is not in (0, 1)")
        if not 0.0 <= self.vad_min_volume < 1.0:
            problems.append(f"vad_min_volume={self.vad_min_volume} is not in [0, 1)")
        for name in (
            "turn_stop_timeout_secs",
            "start_timeout_secs",
            "max_call_secs",
            "idle_timeout_secs",
            "socket_idle_secs",
            "max_calls",
        ):
            if getattr(self, name) <= 0:
                problems.append(f"{name} must be positive")
        if not 640 <= self.max_binary_bytes <= self.max_text_bytes:
            problems.append(
                f"max_binary_bytes={self.max_binary_bytes} must be at least one 20 ms frame (640) and at most"
                f" max_text_bytes={self.max_text_bytes}"
            )
        if (refused := open_without_token(self.host, self.token)) is not None:
            problems.append(refused)
        if problems:
            raise ConfigError("invalid assistant settings: " + "; ".join(problems))


def parse_overrides(pairs: Sequence[str], option: str = "--set") -> dict[str, Any]:
    """``["vad_stop_secs=0.3", "turn_model=silence"]`` → typed values for :data:`TUNABLE` settings.

    Raises :class:`ConfigError` naming ``option`` (``--set`` of ``serve``, ``--assistant-set`` of ``bench``:
    the one the user typed) and the pair for an unknown key, a missing ``=`` or a value of the wrong type;
    ranges are checked when the settings are built.
    """
    defaults = AssistantSettings()
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ConfigError(f"{option} {pair!r}: expected KEY=VALUE")
        if key not in TUNABLE:
            raise ConfigError(f"{option} {pair!r}: unknown setting {key!r} (one of {', '.join(TUNABLE)})")
        default = getattr(defaults, key)
        if key == "asr_audio_context_s" and text.strip().lower() in ("full", "none"):
            values[key] = None  # Whisper's full 30 s window
        elif isinstance(default, float):
            try:
                values[key] = float(text)
            except ValueError:
                raise ConfigError(f"{option} {pair!r}: {key} takes a number of seconds") from None
        else:
            values[key] = text.strip()
    return values


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
    logging.getLogger("pipecat").setLevel(logging.DEBUG if verbose else logging.WARNING)
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
    def load(cls, settings: AssistantSettings) -> SpeechEngines:
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


def default_policy_factory(view: Mapping[str, Any]) -> Policy:
    """The rule-based policy of ``server.policy.rules``, built from a dialogue's assistant view."""
    from server.policy.rules import RulePolicy

    policy: Policy = RulePolicy(dict(view))
    return policy
