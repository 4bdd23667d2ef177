"""A run: many dialogues, one after another, against one assistant; resumable and written atomically.

For each dialogue: plan the caller (TTS, cached), call the assistant in real time, save the recording,
measure it, transcribe what the assistant said, and save the call's metrics.  A call whose metrics file
exists is skipped on the next run with the same settings, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.audio import ms_to_samples
from voice.call import CallCore
from voice.caller import CallerPlan, CallerTiming, plan_call
from voice.clock import Clock, MonotonicClock
from voice.dialogues import Dialogue
from voice.driver import CallTrace, run_call
from voice.errors import ConfigError, LineError
from voice.lines.base import CallStart, Line
from voice.measure import CallMetrics, TurnMetrics, assistant_segments, measure
from voice.recording import Recording, save_recording
from voice.results import call_to_json, summarize, write_json
from voice.speech.asr import ASREngine
from voice.speech.tts import TTSEngine


@dataclass(frozen=True)
class RunSettings:
    out_dir: Path
    target: str
    tts_name: str
    timing: CallerTiming = field(default_factory=CallerTiming)
    transcribe: bool = True

    def fingerprint(self) -> dict[str, Any]:
        """What must match for a folder's completed calls to be reused on resume."""
        return {"target": self.target, "tts": self.tts_name, "timing": dataclasses.asdict(self.timing)}


def check_resumable(settings: RunSettings) -> None:
    """Refuse to mix calls made with different settings in one folder."""
    run_file = settings.out_dir / "run.json"
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8")).get("settings")
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{run_file}: unreadable ({exc}); remove it or choose another --out") from exc
        if previous != settings.fingerprint():
            raise ConfigError(
                f"{settings.out_dir} holds a run made with other settings; choose another --out or remove it"
            )
    write_json(run_file, {"settings": settings.fingerprint()})


def metrics_path(out_dir: Path, call_id: str) -> Path:
    return out_dir / f"{call_id}.metrics.json"


def load_done(out_dir: Path, call_id: str) -> dict[str, Any] | None:
    path = metrics_path(out_dir, call_id)
    if not path.exists():
        return None
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, json.JSONDecodeError):
        return None


def metrics_from_json(d: dict[str, Any]) -> CallMetrics:
    """Rebuild :class:`CallMetrics` from its JSON form (for resumed runs)."""
    from voice.measure import BargeIn

    turns = []
    for t in d["turns"]:
        t = dict(t)
        if t.get("barge_in") is not None:
            t["barge_in"] = BargeIn(**t["barge_in"])
        turns.append(TurnMetrics(**t))
    fields = {f.name for f in dataclasses.fields(CallMetrics)}
    return CallMetrics(**{**{k: v for k, v in d.items() if k in fields}, "turns": turns})


async def call_once(
    dialogue: Dialogue, plan: CallerPlan, line: Line, clock: Clock, settings: RunSettings
) -> tuple[Recording, CallTrace]:
    """Run one call and wrap it as a recording (not yet saved)."""
    core = CallCore(plan)
    trace = await run_call(core, line, clock, CallStart(dialogue.id, dialogue.assistant_view()))
    meta = {
        "dialogue_id": dialogue.id,
        "scenario": dialogue.scenario,
        "preset_type": dialogue.preset.type,
        "relation": dialogue.relation,
        "target": settings.target,
        "tts": settings.tts_name,
        "seed": settings.timing.seed,
        "expects_greeting": plan.expects_greeting,
        "greeting_reference": plan.greeting_reference,
        "references": list(plan.references),
        "pacing_late_ms": {
            "p50": trace.pacing_late_ms[0],
            "p99": trace.pacing_late_ms[1],
            "max": trace.pacing_late_ms[2],
        },
    }
    rec = Recording(dialogue.id, trace.caller, trace.heard, trace.events, meta)
    return rec, trace


def transcribe_replies(rec: Recording, metrics: CallMetrics, asr: ASREngine) -> CallMetrics:
    """Attach what the assistant said after each caller turn (its heard audio, transcribed)."""
    rate = rec.sample_rate
    n = len(rec.assistant)
    segs = assistant_segments(rec.assistant)
    turns = []
    for i, t in enumerate(metrics.turns):
        if t.reply_onset_ms is None:
            turns.append(t)
            continue
        lo = ms_to_samples(t.reply_onset_ms, rate)
        hi = ms_to_samples(metrics.turns[i + 1].caller_start_ms, rate) if i + 1 < len(metrics.turns) else n
        hi = max((e for s, e in segs if lo <= s < hi), default=hi)
        turns.append(
            dataclasses.replace(t, heard_text=asr.transcribe(rec.assistant[lo:hi]) if hi > lo else "")
        )
    return dataclasses.replace(metrics, turns=turns)


async def run_dialogues(
    dialogues: Sequence[Dialogue],
    settings: RunSettings,
    make_line: Callable[[], Line],
    tts: TTSEngine,
    asr: ASREngine | None,
    *,
    clock: Clock | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> list[CallMetrics]:
    """Call every dialogue in turn; completed calls in ``out_dir`` are reused (resume)."""
    clock = clock or MonotonicClock()
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    check_resumable(settings)
    loop = asyncio.get_running_loop()
    results: list[CallMetrics] = []
    for i, dialogue in enumerate(dialogues, 1):
        done = load_done(settings.out_dir, dialogue.id)
        if done is not None:
            results.append(metrics_from_json(done))
            progress(f"[{i}/{len(dialogues)}] {dialogue.id}: done earlier, kept")
            continue
        progress(f"[{i}/{len(dialogues)}] {dialogue.id}: preparing caller audio")
        plan = await loop.run_in_executor(None, plan_call, dialogue, tts, settings.timing)
        progress(f"[{i}/{len(dialogues)}] {dialogue.id}: calling {settings.target}")
        try:
            rec, _ = await call_once(dialogue, plan, make_line(), clock, settings)
        except LineError as exc:
            # Recorded as a failed call but not saved as done, so a rerun tries it again.
            progress(f"[{i}/{len(dialogues)}] {dialogue.id}: FAILED to connect: {exc}")
            results.append(
                CallMetrics(
                    dialogue.id,
                    dialogue.id,
                    "connect_failed",
                    True,
                    0.0,
                    None,
                    caller_turns_planned=len(plan.turns),
                )
            )
            continue
        save_recording(settings.out_dir, rec)
        metrics = measure(rec)
        if asr is not None and settings.transcribe:
            metrics = await loop.run_in_executor(None, transcribe_replies, rec, metrics, asr)
        write_json(metrics_path(settings.out_dir, dialogue.id), call_to_json(metrics))
        results.append(metrics)
        progress(
            f"[{i}/{len(dialogues)}] {dialogue.id}: {metrics.outcome}, "
            f"{metrics.turns_completed}/{metrics.caller_turns_planned} turns answered"
        )
    write_json(
        settings.out_dir / "results.json",
        {
            "settings": settings.fingerprint(),
            "summary": summarize(results),
            "calls": [call_to_json(m) for m in results],
        },
    )
    return results
