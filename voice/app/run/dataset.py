"""``callsim bench``: a dataset against one or more assistants, as concurrent real-time calls.

A run folder holds one subfolder per target (a slug of the target), each a resumable run of its own
(``run.json`` fingerprint, ``<call>.wav`` / ``.events.jsonl`` / ``.metrics.json``, ``results.json``), and
a run-level ``results.json`` with every target's summary.  ``callsim run`` is this with one call at a time
and a short default subset: one code path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from voice.app.run.assistants import open_target_runs
from voice.app.run.bench_config import BenchConfig
from voice.app.run.caller_voices import voiced_jobs
from voice.app.run.jobs import plan_jobs
from voice.app.run.provenance import gather
from voice.app.run.run_start import clear_run_summary, folder_lock, wait_for_targets
from voice.app.run.runner import CallStatus, make_calls
from voice.core.clock import Clock, MonotonicClock
from voice.dialogues import PRESET_TYPES, RELATIONS, SCENARIOS, Dialogue
from voice.errors import ConfigError, StorageError, explain
from voice.files import storage_error
from voice.lines.line import Line
from voice.lines.redact import url_tag
from voice.lines.targets import BUILTIN, Target, parse_target
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.model.jsonio import write_json
from voice.metrics.model.run_results import NodeSummary, RunResults, TargetEntry
from voice.metrics.model.summary import Summary
from voice.speech.asr import ASREngine
from voice.speech.tts.engine import TTSEngine
from voice.speech.voices import VoiceBank

MAX_DEFAULT_CONCURRENCY = 16


def default_concurrency(targets: Sequence[Target], cpus: int | None = None) -> int:
    """How many calls at once when not told: half the CPUs with the built-in assistant, else one per CPU.

    The built-in assistant runs Whisper and TTS on this machine, so it needs half of the CPUs for itself;
    against a remote assistant the caller's side (frame pacing, measuring, transcribing) is the only local
    load.  Capped at 16 so a default run does not overload an assistant and measure its queueing instead.
    """
    n = cpus or os.cpu_count() or 1
    if any(t.protocol == BUILTIN for t in targets):
        return max(1, n // 2)
    return max(1, min(MAX_DEFAULT_CONCURRENCY, n))


def split_values(values: Sequence[str] | None) -> list[str]:
    """Repeatable options that also accept comma lists: ``--scenario a,b --scenario c`` → a, b, c."""
    return [v.strip() for item in values or () for v in item.split(",") if v.strip()]


def _check(values: Sequence[str], allowed: tuple[str, ...], option: str) -> None:
    bad = [v for v in values if v not in allowed]
    if bad:
        raise ConfigError(f"{option}: unknown value(s) {', '.join(bad)} (choose from {', '.join(allowed)})")


def coverage_order(dialogues: Sequence[Dialogue]) -> list[Dialogue]:
    """One dialogue per scenario first, rotating the preset type, so a short run covers both axes."""
    first: list[Dialogue] = []
    scenarios = list(dict.fromkeys(d.scenario for d in dialogues))
    for i, scenario in enumerate(scenarios):
        mine = [d for d in dialogues if d.scenario == scenario]
        preset = PRESET_TYPES[i % len(PRESET_TYPES)]
        first.append(next((d for d in mine if d.preset.type == preset), mine[0]))
    return first + [d for d in dialogues if d not in first]


def select_dialogues(
    dialogues: Sequence[Dialogue],
    *,
    ids: Sequence[str] = (),
    scenarios: Sequence[str] = (),
    presets: Sequence[str] = (),
    relations: Sequence[str] = (),
    limit: int | None = None,
) -> list[Dialogue]:
    """Explicit ids (in the order given), narrowed by the filters; else the filtered set, limited.

    With a limit the subset covers every scenario first (:func:`coverage_order`); without one the file's
    order is kept.  Selecting nothing is an error, not an empty run.
    """
    _check(scenarios, SCENARIOS, "--scenario")
    _check(presets, PRESET_TYPES, "--preset")
    _check(relations, RELATIONS, "--relation")
    pool = list(dialogues)
    if ids:
        by_id = {d.id: d for d in dialogues}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ConfigError(f"unknown dialogue id(s): {', '.join(missing)}")
        pool = [by_id[i] for i in dict.fromkeys(ids)]
    chosen = [
        d
        for d in pool
        if (not scenarios or d.scenario in scenarios)
        and (not presets or d.preset.type in presets)
        and (not relations or d.relation in relations)
    ]
    if limit is not None and not ids:
        chosen = coverage_order(chosen)[:limit]
    if not chosen:
        raise ConfigError("no dialogue matches the selection (ids and filters)")
    return chosen


def target_slug(target: Target) -> str:
    """A folder name for a target: ``builtin``, ``pcm-ws-127.0.0.1-8765-pcm``; long ones end in a hash.

    Made from the redacted name; a target with credentials in its URL ends in a tag of the full URL
    (:func:`~voice.lines.redact.url_tag`), so targets differing only in a token get folders of their own
    and a rerun with the same URL finds its folder (and its calls) again.
    """
    text, full = str(target), target.full_text()
    slug = re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or "target"
    if full != text:
        slug = slug[:51].rstrip("-.") + "-" + url_tag(full)
    elif len(slug) > 60:
        slug = slug[:51].rstrip("-.") + "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
    return slug


@dataclass(frozen=True)
class TargetResult:
    """One target of a finished run: its calls (in the order made) and its summary, as in its
    ``results.json``."""

    target: str
    slug: str
    calls: list[CallMetrics]
    summary: Summary


async def run_bench(
    dialogues: Sequence[Dialogue],
    config: BenchConfig,
    tts: TTSEngine | VoiceBank,
    asr: ASREngine | None,
    *,
    on_status: Callable[[CallStatus], None] = lambda _: None,
    new_clock: Callable[[], Clock] = MonotonicClock,
    line_factories: dict[str, Callable[[], Line]] | None = None,
    transcriber: str | None = "whisper",
) -> list[TargetResult]:
    """Run every selected dialogue (× repeats) on every target; write per-target and run-level results.

    ``line_factories`` (by target text) replaces how lines are opened, for tests with in-memory lines.
    The built-in assistant is started once, whichever of its routes (``builtin``, ``builtin+twilio``)
    the targets call, its output in ``assistant.<n>.log`` (one per run start); if it exits during the run,
    its calls in flight are recorded as ``assistant_crashed`` (a rerun makes them again) and the run stops
    (:class:`~voice.errors.AssistantCrashed`).  A disk that refuses a write stops it too
    (:class:`~voice.errors.StorageError`).  A stopped run writes partial ``results.json`` files if it can.
    """
    targets = [parse_target(t) for t in config.targets]
    names = [str(t) for t in targets]  # redacted: what is printed and written
    if len({t.full_text() for t in targets}) != len(targets):
        raise ConfigError("the same --target is given twice")
    slugs = [target_slug(t) for t in targets]
    if len(set(slugs)) != len(slugs):
        raise ConfigError(f"targets {', '.join(names)} map to the same folder name; give distinct targets")
    concurrency = config.concurrency or default_concurrency(targets)
    jobs = plan_jobs(dialogues, config.repeats, config.seed)
    if config.voices:
        jobs = voiced_jobs(jobs, config.voices, config.caller_speed, config.seed)
    remote = [t for t in targets if t.protocol != BUILTIN and str(t) not in (line_factories or {})]
    if config.provenance is None:  # the CLI gathers it first, to say so; code that calls this gets it here
        config = dataclasses.replace(config, provenance=gather(speed_index=config.speed_index))
    with folder_lock(config.out):
        if config.wait_for_target is not None:  # before --fresh deletes anything
            await wait_for_targets(remote, config.wait_for_target)
        if config.fresh:
            clear_run_summary(config.out)
        nodes: list[NodeSummary] = []
        if config.ray is not None:
            from voice.app.run.ray_runner import check_ray_options, run_on_ray

            check_ray_options(config, line_factories)
            outcome, nodes = await run_on_ray(
                config,
                targets,
                slugs,
                jobs,
                transcriber=transcriber if config.transcribe else None,
                default_concurrency=lambda cpus: default_concurrency(targets, cpus),
                on_status=on_status,
            )
        else:
            async with contextlib.AsyncExitStack() as stack:
                if config.caller is not None:  # its model client, once every call is done
                    stack.callback(config.caller.close)
                folders = [config.out / slug for slug in slugs]
                runs = await open_target_runs(
                    stack,
                    config,
                    targets,
                    folders,
                    log_dir=config.out,
                    labels=slugs,
                    line_factories=line_factories,
                )
                outcome = await make_calls(
                    runs,
                    jobs,
                    tts,
                    asr,
                    concurrency=concurrency,
                    new_clock=new_clock,
                    on_status=on_status,
                    retry_failed=config.retry_failed,
                    fresh=config.fresh,
                )
        run_doc = RunResults(
            dialogues=config.source,
            calls_per_target=len(jobs),
            repeats=config.repeats,
            seed=config.seed,
            concurrency=concurrency,
            tts=None if config.voices else config.tts,  # with a population, no one engine voiced the callers
            caller=config.caller.spec if config.caller is not None else "scripted",
            targets=[
                TargetEntry(str(t), s, r.summary)
                for t, s, r in zip(targets, slugs, outcome.targets, strict=True)
            ],
            voices=config.voices or None,
            caller_speed=config.caller_speed if config.voices else None,
            provenance=config.provenance,
            partial=outcome.partial(),
            ray=config.ray,
            nodes=nodes if config.ray is not None else None,
        ).to_json()
        if outcome.stop is None:
            write_json(config.out / "results.json", run_doc)
        elif not outcome.unwritten:  # a stopped run: its summary if the disk takes it, else the error says so
            try:
                write_json(config.out / "results.json", run_doc)
            except (StorageError, OSError) as exc:
                outcome = dataclasses.replace(outcome, unwritten=explain(storage_error(exc) or exc))
        outcome.raise_if_stopped()
    return [
        TargetResult(str(t), s, r.calls, summary)
        for t, s, r, summary in zip(targets, slugs, outcome.targets, outcome.summaries(), strict=True)
    ]
