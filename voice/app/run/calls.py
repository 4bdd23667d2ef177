"""One call of a run: its settings, its target, its progress events, and how it is made and transcribed.

:mod:`voice.app.run.runner` makes many of these at once; this module is what a single call needs, so the live
``talk`` command and the runner make a call the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from voice.app.run.driver import CallTrace, record_call
from voice.app.run.jobs import CallJob
from voice.core.audio import Pcm, ms_to_samples
from voice.core.caller import CallerPlan, CallerTiming
from voice.core.clock import Clock
from voice.core.eventlog import EventSink
from voice.lines.line import CallStart, Line
from voice.metrics.measure import CallMetrics, reply_spans_ms
from voice.metrics.model.jsonio import JsonValue, as_json, as_json_object
from voice.metrics.model.provenance_record import Provenance
from voice.metrics.model.run_results import Settings
from voice.react.caller import ReactiveCaller
from voice.react.session import ReactiveSession
from voice.recording import Recording
from voice.speech.asr import ASREngine

# who called, in each recording's meta (its event log's last line): a reactive caller's model and persona,
# the caller's voice, its speaker's sex and its pace
CALLER_LABELS = ("caller", "persona", "voice", "voice_sex", "caller_speed")


@dataclass(frozen=True)
class RunSettings:
    out_dir: Path
    target: str
    tts_name: str
    timing: CallerTiming = field(default_factory=CallerTiming)
    transcribe: bool = True
    # the line and its effects, the callers' voices, the built-in's TTS... (each as written: JSON)
    extra: dict[str, JsonValue] = field(default_factory=dict)
    caller: ReactiveCaller | None = None  # None: the scripted caller
    recording: str = "wav"  # how each call's audio is stored: wav or flac (lossless; not a setting to match)
    redo: str = ""  # the command that makes CallSim's failed calls again (not a setting to match)
    provenance: Provenance | None = None  # the run's (voice.app.run.provenance), written with its results

    def fingerprint(self) -> Settings:
        """What must match for a folder's completed calls to be reused on resume.  ``tts`` only when one
        engine voiced every caller: with a population of voices (``extra["voices"]``) it voiced none."""
        fp: dict[str, JsonValue] = {"target": self.target}
        if "voices" not in self.extra:
            fp["tts"] = self.tts_name
        fp["timing"] = as_json(dataclasses.asdict(self.timing))
        fp.update(self.extra)
        if self.caller is not None:
            fp.update(as_json_object(self.caller.fingerprint()))
        return Settings(fp)

    def labels(self, job: CallJob) -> dict[str, JsonValue]:
        """A call's labels: the job's, the target, and for a reactive caller its model and persona."""
        labels: dict[str, JsonValue] = {**job.labels(), "target": self.target}
        if self.caller is not None:
            labels["caller"] = self.caller.spec
            labels["persona"] = self.caller.persona_for(job.dialogue, job.seed).name
        return labels


@dataclass(frozen=True)
class TargetRun:
    """One assistant of a run: where its calls go and how to reach it."""

    settings: RunSettings
    make_line: Callable[[], Line]
    label: str = ""  # how progress names it (default: the target)
    # For an assistant CallSim started (the built-in): why its process is gone, or None while it runs.
    crashed: Callable[[], str | None] | None = None


@dataclass(frozen=True)
class CallStatus:
    """A progress event: ``state`` is kept, calling, done or failed (``metrics`` set for the last three),
    or note: a line about a target before its calls (``detail``: what its folder held...; no ``call_id``)."""

    target: str
    call_id: str
    state: str
    metrics: CallMetrics | None = None
    detail: str = ""


async def call_once(
    job: CallJob,
    plan: CallerPlan,
    line: Line,
    clock: Clock,
    settings: RunSettings,
    caller: ReactiveSession | None = None,
    events: EventSink | None = None,
) -> tuple[Recording, CallTrace]:
    """Run one call and wrap it as a recording (not yet saved); its meta holds labels only.

    ``caller``: a reactive caller, whose core (made by its ``start``) plays instead of ``plan``.
    ``events``: where the call's records stream as they happen (:class:`~voice.recording.EventStream`).
    """
    dialogue = job.dialogue
    labels = {
        "dialogue_id": dialogue.id,
        "scenario": dialogue.scenario,
        "preset_type": dialogue.preset.type,
        "relation": dialogue.relation,
        "target": settings.target,
        "tts": settings.tts_name,
        "seed": plan.timing.seed,
        "base_seed": settings.timing.seed,
        "repeat": job.repeat,
        **({"line": settings.extra["line"]} if "line" in settings.extra else {}),
        **{k: v for k, v in settings.labels(job).items() if k in CALLER_LABELS},
    }
    start = CallStart(job.call_id, dialogue.assistant_view())
    if caller is None:
        return await record_call(plan, line, clock, start, labels, events=events)
    core = caller.started()
    return await record_call(
        core.plan, line, clock, start, labels, core=core, companion=caller, events=events
    )


def transcribe_replies(rec: Recording, metrics: CallMetrics, asr: ASREngine) -> CallMetrics:
    """Attach what the assistant said after each caller turn (its heard reply, transcribed).

    The reply's extent is :func:`~voice.metrics.measure.reply_spans_ms`: the same span a judge reads.
    """
    return with_heard_texts(metrics, [hear_clip(asr, clip) for clip in reply_clips(rec, metrics)])


def reply_clips(rec: Recording, metrics: CallMetrics) -> list[Pcm | None]:
    """Each caller turn's heard reply as audio (None: no reply), for :func:`hear_clip` one by one: the
    runner transcribes them as separate jobs, so that none holds the run's Whisper for long."""
    rate, clips = rec.sample_rate, list[Pcm | None]()
    for span in reply_spans_ms(metrics):
        if span is None:
            clips.append(None)
            continue
        lo, hi = ms_to_samples(span[0], rate), ms_to_samples(span[1], rate)
        clips.append(rec.assistant[lo : max(lo, hi)])
    return clips


def hear_clip(asr: ASREngine, clip: Pcm | None) -> str | None:
    """A reply clip's text ("" for an empty one; None for no reply)."""
    if clip is None:
        return None
    return asr.transcribe(clip) if len(clip) else ""


def with_heard_texts(metrics: CallMetrics, texts: Sequence[str | None]) -> CallMetrics:
    """``metrics`` with each turn's ``heard_text`` (None: that turn had no reply and keeps its own)."""
    turns = [
        t if text is None else dataclasses.replace(t, heard_text=text)
        for t, text in zip(metrics.turns, texts, strict=True)
    ]
    return dataclasses.replace(metrics, turns=turns)
