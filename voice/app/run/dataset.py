"""``callsim bench``: a dataset against one or more assistants, as concurrent real-time calls.

A run folder holds one subfolder per target (a slug of the target), each a resumable run of its own
(``run.json`` fingerprint, ``<call>.wav`` / ``.events.jsonl`` / ``.metrics.json``, ``results.json``), and
a run-level ``results.json`` with every target's summary.  ``callsim run`` is this with one call at a time
and a short default subset: one code path.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.app.run.assistants import open_target_runs
from voice.app.run.bench_config import BenchConfig
from voice.app.run.caller_voices import assign_voices, parse_pace, population
from voice.app.run.jobs import plan_jobs
from voice.app.run.provenance import gather
from voice.app.run.runner import CallStatus, make_calls
from voice.core.clock import Clock, MonotonicClock
from voice.dialogues import PRESET_TYPES, RELATIONS, SCENARIOS, Dialogue
from voice.errors import ConfigError, LineError, StorageError, explain
from voice.files import storage_error
from voice.lines.line import Line
from voice.lines.redact import url_tag
from voice.lines.sip_probe import options_answered
from voice.lines.sip_target import parse_sip_uri
from voice.lines.targets import BUILTIN, SIP, Target, parse_target
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.results import RESULTS_SCHEMA, write_json
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


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on a run folder: two runs writing one folder would corrupt each other.

    ``flock`` is released by the kernel when the process dies, even by ``kill -9``, so a killed run never
    leaves a stale lock behind.
    """
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".callsim.lock", "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise ConfigError(f"{folder} is in use by another callsim run") from exc
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


async def wait_for_targets(targets: Sequence[Target], timeout_s: float, poll_s: float = 0.2) -> None:
    """Wait until every target accepts a TCP connection (CI starting the bot and the bench together); a SIP
    target over UDP, until it answers an OPTIONS.

    Polls each target's host and port until it connects or ``timeout_s`` (for all of them) has passed; then
    a :class:`LineError` naming the target and the last refusal.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    for target in targets:
        host, port = target.address()
        if target.protocol == SIP and parse_sip_uri(target.url).transport == "UDP":  # no connection: OPTIONS
            if not await options_answered(parse_sip_uri(target.url), max(0.05, deadline - loop.time())):
                raise LineError(
                    f"--wait-for-target: {target} did not answer SIP OPTIONS within {timeout_s:g} s"
                )
            continue
        while True:
            try:
                left = max(0.05, deadline - loop.time())
                _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), left)
                writer.close()
                break
            except (OSError, TimeoutError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if loop.time() >= deadline:
                raise LineError(
                    f"--wait-for-target: {target} did not accept a connection within {timeout_s:g} s"
                    f" (last try: {last})"
                )
            await asyncio.sleep(min(poll_s, max(0.0, deadline - loop.time())))


@dataclass(frozen=True)
class TargetResult:
    target: str
    slug: str
    calls: list[CallMetrics]
    summary: dict[str, Any] = field(default_factory=dict)  # as in the target's ``results.json``


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
        voices = population(config.voices)
        jobs = assign_voices(jobs, voices, parse_pace(config.caller_speed), config.seed)
    remote = [t for t in targets if t.protocol != BUILTIN and str(t) not in (line_factories or {})]
    if config.provenance is None:  # the CLI gathers it first, to say so; code that calls this gets it here
        config = dataclasses.replace(config, provenance=gather(speed_index=config.speed_index))
    with folder_lock(config.out):
        if config.wait_for_target is not None:  # before --fresh deletes anything
            await wait_for_targets(remote, config.wait_for_target)
        if config.fresh:  # first the run's summary and report, which describe the calls about to go
            for name in ("results.json", "report.html", "report.md"):
                (config.out / name).unlink(missing_ok=True)
        nodes: list[dict[str, Any]] = []
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
        run_doc: dict[str, Any] = {
            "schema_version": RESULTS_SCHEMA,
            "kind": "run",
            "dialogues": config.source,
            "calls_per_target": len(jobs),
            "repeats": config.repeats,
            "seed": config.seed,
            "concurrency": concurrency,
            "tts": config.tts,
            **({"voices": config.voices, "caller_speed": config.caller_speed} if config.voices else {}),
            "caller": config.caller.spec if config.caller is not None else "scripted",
            "provenance": config.provenance,
            **({"partial": partial} if (partial := outcome.partial()) is not None else {}),
            "targets": [
                {"target": str(t), "folder": s, "summary": r.summary}
                for t, s, r in zip(targets, slugs, outcome.targets, strict=True)
            ],
            **({"ray": config.ray, "nodes": nodes} if config.ray is not None else {}),
        }
        if outcome.stop is None:
            write_json(config.out / "results.json", run_doc)
        elif not outcome.unwritten:  # a stopped run: its summary if the disk takes it, else the error says so
            try:
                write_json(config.out / "results.json", run_doc)
            except (StorageError, OSError) as exc:
                outcome = dataclasses.replace(outcome, unwritten=explain(storage_error(exc) or exc))
        outcome.raise_if_stopped()
        results = outcome.targets
    return [
        TargetResult(str(t), s, r.calls, r.summary) for t, s, r in zip(targets, slugs, results, strict=True)
    ]
