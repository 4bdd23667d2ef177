"""A run: many calls against one or more assistants, concurrently, resumable and written atomically.

For each call: plan the caller (TTS, cached), call the assistant in real time, save the recording,
measure it, transcribe what the assistant said, and save the call's metrics — last, atomically.  A call
whose metrics file exists is skipped on the next run with the same settings, so a run killed at any point
(even ``kill -9``) resumes where it stopped: a recording without metrics is simply made again.  What a
folder keeps (and ``--retry-failed``, ``--fresh``) is :mod:`voice.run.resume`'s business.  If the process of
an assistant CallSim started (the built-in) exits, the run stops and the calls it was in are not written.

Calls run as asyncio tasks in one process, at most ``concurrency`` at a time: on the caller's side a call
is I/O-bound (20 ms frames on a socket), while the blocking work — TTS, measuring, Whisper — goes to
executor threads.  TTS and ASR engines are not known to be thread-safe, so each is used by one call at a
time; calls keep streaming meanwhile.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.core.audio import ms_to_samples
from voice.core.caller import CallerPlan, CallerTiming, plan_call
from voice.core.clock import Clock, MonotonicClock
from voice.core.eventlog import EventSink
from voice.dialogues import Dialogue
from voice.errors import AssistantCrashed, ConfigError, LineError
from voice.lines.base import CallStart, Line
from voice.metrics.measure import CallMetrics, measure, reply_spans_ms
from voice.metrics.results import RESULTS_SCHEMA, call_to_json, summarize_run, write_json
from voice.react.caller import ReactiveCaller
from voice.react.session import ReactiveSession
from voice.run.driver import CallTrace, record_call
from voice.run.jobs import CallJob, plan_jobs
from voice.run.recording import EventStream, Recording, save_recording
from voice.run.resume import dialogue_sha, metrics_path, open_folder
from voice.speech.asr import ASREngine
from voice.speech.tts.base import TTSEngine

CRASH_POLLS, CRASH_POLL_S = 40, 0.05  # how long a suspect call waits for an assistant's exit to show


@dataclass(frozen=True)
class RunSettings:
    out_dir: Path
    target: str
    tts_name: str
    timing: CallerTiming = field(default_factory=CallerTiming)
    transcribe: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # the line and its effects, the built-in's TTS...
    caller: ReactiveCaller | None = None  # None: the scripted caller
    recording: str = "wav"  # how each call's audio is stored: wav or flac (lossless; not a setting to match)

    def fingerprint(self) -> dict[str, Any]:
        """What must match for a folder's completed calls to be reused on resume."""
        fp: dict[str, Any] = {
            "target": self.target,
            "tts": self.tts_name,
            "timing": dataclasses.asdict(self.timing),
        }
        fp.update(self.extra)
        if self.caller is not None:
            fp.update(self.caller.fingerprint())
        return fp

    def labels(self, job: CallJob) -> dict[str, Any]:
        """A call's labels: the job's, the target, and for a reactive caller its model and persona."""
        labels = {**job.labels(), "target": self.target}
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
    ``events``: where the call's records stream as they happen (:class:`~voice.run.recording.EventStream`).
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
        **{k: v for k, v in settings.labels(job).items() if k in ("caller", "persona")},
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
    rate = rec.sample_rate
    turns = []
    for t, span in zip(metrics.turns, reply_spans_ms(metrics), strict=True):
        if span is None:
            turns.append(t)
            continue
        lo, hi = ms_to_samples(span[0], rate), ms_to_samples(span[1], rate)
        turns.append(
            dataclasses.replace(t, heard_text=asr.transcribe(rec.assistant[lo:hi]) if hi > lo else "")
        )
    return dataclasses.replace(metrics, turns=turns)


def _save_and_measure(
    out_dir: Path, rec: Recording, stream: EventStream | None = None, audio: str = "wav"
) -> CallMetrics:
    save_recording(out_dir, rec, stream, audio)
    return measure(rec)


async def _check_alive(run: TargetRun, job: CallJob, suspect: bool) -> None:
    """Stop the run if the target's process (the built-in assistant) has exited: the call is not kept.

    A call that failed or saw the line close (``suspect``) gives the exit up to 2 s to show: the socket
    closes as the process dies, a moment before its exit code can be read.
    """
    if run.crashed is None:
        return
    for _ in range(CRASH_POLLS if suspect else 1):
        if (reason := run.crashed()) is not None:
            raise AssistantCrashed(
                f"{reason}; the run stops, call {job.call_id} and any other unfinished one not kept"
                " (a rerun resumes and makes them)"
            )
        if suspect:
            await asyncio.sleep(CRASH_POLL_S)


def _connect_failed(job: CallJob, plan: CallerPlan, why: str) -> CallMetrics:
    """A call that never connected: counted as failed, but not saved, so a rerun tries it again."""
    planned = len(plan.turns)
    return CallMetrics(
        job.call_id,
        job.dialogue.id,
        "connect_failed",
        True,
        0.0,
        None,
        caller_turns_planned=planned,
        detail=why,
    )


class CallMaker:
    """The shared state of one :func:`run_calls`: engines, their locks, the slot semaphore, plans."""

    def __init__(
        self,
        tts: TTSEngine,
        asr: ASREngine | None,
        concurrency: int,
        new_clock: Callable[[], Clock],
        on_status: Callable[[CallStatus], None],
    ) -> None:
        self.tts, self.asr, self.new_clock, self.on_status = tts, asr, new_clock, on_status
        self.slots = asyncio.Semaphore(concurrency)
        self.tts_lock, self.asr_lock = asyncio.Lock(), asyncio.Lock()
        self._plans: dict[str, asyncio.Task[CallerPlan]] = {}  # shared by the targets of one job
        self._users: dict[str, int] = {}  # calls still to be made per job (across targets)

    def expect(self, job: CallJob) -> None:
        """Count one more call that will need the job's plan (so it is freed after the last)."""
        self._users[job.call_id] = self._users.get(job.call_id, 0) + 1

    async def plan(self, job: CallJob, timing: CallerTiming) -> CallerPlan:
        """The job's caller plan, synthesized once and shared by every target; dropped after the last."""
        task = self._plans.get(job.call_id)
        if task is None:
            task = asyncio.ensure_future(self._synthesize(job, timing))
            # a call cancelled while the plan is made (the run is stopping) leaves it behind: its error,
            # if any, is then nobody's to report, and must not surface as "exception never retrieved"
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._plans[job.call_id] = task
        try:
            return await asyncio.shield(task)
        finally:
            self._users[job.call_id] -= 1
            if self._users[job.call_id] <= 0:
                del self._plans[job.call_id]
                task.cancel()  # no call needs it any more (a no-op once it is done)

    async def _synthesize(self, job: CallJob, timing: CallerTiming) -> CallerPlan:
        async with self.tts_lock:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, plan_call, job.dialogue, self.tts, timing)

    async def _reactive(
        self, settings: RunSettings, job: CallJob, timing: CallerTiming
    ) -> ReactiveSession | None:
        """The call's reactive caller, started (its first turn decided), or None for the scripted one."""
        if settings.caller is None:
            return None
        if self.asr is None:
            raise ConfigError("a reactive caller hears through a transcriber: give the run one")
        session = settings.caller.session(
            job.dialogue, timing, self.tts, self.asr, tts_lock=self.tts_lock, asr_lock=self.asr_lock
        )
        await session.start(settings.caller.turns_for(job.dialogue))
        return session

    async def one(self, run: TargetRun, job: CallJob) -> CallMetrics:
        settings, label = run.settings, run.label or run.settings.target
        labels = settings.labels(job)
        loop = asyncio.get_running_loop()
        async with self.slots:
            timing = dataclasses.replace(settings.timing, seed=job.seed)
            caller = await self._reactive(settings, job, timing)
            plan = caller.started().plan if caller is not None else await self.plan(job, timing)
            self.on_status(CallStatus(label, job.call_id, "calling"))
            # the call's records go to disk as they happen: a chatty bot cannot fill the memory with them
            stream = EventStream(settings.out_dir, job.call_id)
            try:
                rec, _ = await call_once(
                    job, plan, run.make_line(), self.new_clock(), settings, caller, events=stream.write
                )
            except LineError as exc:
                stream.discard()
                await _check_alive(run, job, suspect=True)
                metrics = _connect_failed(job, plan, f"cannot connect: {exc}")
                self.on_status(CallStatus(label, job.call_id, "failed", metrics, metrics.detail))
                return metrics
            except BaseException:
                stream.close()  # the partial log stays, whole lines only, for a post-mortem
                raise
        metrics = await loop.run_in_executor(
            None, _save_and_measure, settings.out_dir, rec, stream, settings.recording
        )
        await _check_alive(run, job, suspect=metrics.failed or metrics.outcome == "line_closed")
        if self.asr is not None and settings.transcribe:
            async with self.asr_lock:
                metrics = await loop.run_in_executor(None, transcribe_replies, rec, metrics, self.asr)
        write_json(metrics_path(settings.out_dir, job.call_id), call_to_json(metrics, labels))
        self.on_status(CallStatus(label, job.call_id, "done", metrics))
        return metrics


@dataclass(frozen=True)
class TargetCalls:
    """One target's calls of a run (in job order) and the summary written to its ``results.json``."""

    calls: list[CallMetrics]
    summary: dict[str, Any]


def write_target_results(run: TargetRun, jobs: Sequence[CallJob], calls: list[CallMetrics]) -> TargetCalls:
    """``results.json`` of one target folder: settings, summary with breakdowns, every call."""
    labels = [run.settings.labels(j) for j in jobs]
    summary = summarize_run(calls, labels)
    write_json(
        run.settings.out_dir / "results.json",
        {
            "schema_version": RESULTS_SCHEMA,
            "kind": "target",
            "target": run.settings.target,
            "settings": run.settings.fingerprint(),
            "summary": summary,
            "calls": [call_to_json(m, lab) for m, lab in zip(calls, labels, strict=True)],
        },
    )
    return TargetCalls(calls, summary)


async def run_calls(
    runs: Sequence[TargetRun],
    jobs: Sequence[CallJob],
    tts: TTSEngine,
    asr: ASREngine | None,
    *,
    concurrency: int = 1,
    new_clock: Callable[[], Clock] = MonotonicClock,
    on_status: Callable[[CallStatus], None] = lambda _: None,
    retry_failed: bool = False,
    fresh: bool = False,
    make_call: Callable[[int, TargetRun, CallJob], Awaitable[CallMetrics]] | None = None,
) -> list[TargetCalls]:
    """Make every job's call on every target, at most ``concurrency`` at once; per target, in job order.

    Finished calls found on disk are reused (resume; failed ones made again with ``retry_failed``; none
    with ``fresh``, which deletes each target folder's earlier run first).  Targets are interleaved job by
    job, so a run cut short holds comparable calls for every target.  Each call gets its own clock from
    ``new_clock`` (virtual clocks in tests must not be shared between concurrent calls).  ``make_call``
    (target index, run, job) makes a call elsewhere instead (:mod:`voice.run.ray_runner`), which then
    bounds the concurrency and writes the call's files itself.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1 (got {concurrency})")
    keep: list[list[CallMetrics | None]] = []
    calls = [(job.call_id, dialogue_sha(job.dialogue)) for job in jobs]
    for run in runs:
        found, note = open_folder(
            run.settings.out_dir, run.settings.fingerprint(), calls, retry_failed=retry_failed, fresh=fresh
        )
        keep.append(found)
        if note:
            on_status(CallStatus(run.label or run.settings.target, "", "note", detail=note))
    state = CallMaker(tts, asr, concurrency, new_clock, on_status)
    results: list[list[Any]] = [[None] * len(jobs) for _ in runs]
    pending: list[tuple[int, int, asyncio.Task[CallMetrics]]] = []
    for j, job in enumerate(jobs):
        for r, run in enumerate(runs):
            kept = keep[r][j]
            if kept is not None:
                results[r][j] = kept
                on_status(CallStatus(run.label or run.settings.target, job.call_id, "kept", kept))
            else:
                state.expect(job)
                made = make_call(r, run, job) if make_call is not None else state.one(run, job)
                pending.append((r, j, asyncio.ensure_future(made)))
    try:
        finished = await asyncio.gather(*(t for _, _, t in pending))
    except BaseException:
        for _, _, t in pending:
            t.cancel()
        await asyncio.gather(*(t for _, _, t in pending), return_exceptions=True)
        raise
    for (r, j, _), metrics in zip(pending, finished, strict=True):
        results[r][j] = metrics
    return [write_target_results(run, jobs, calls) for run, calls in zip(runs, results, strict=True)]


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
    """One target, one call at a time, one repeat: :func:`run_calls` for scripts that want a list back."""

    def say(s: CallStatus) -> None:
        m = s.metrics
        what = s.detail or (f"{m.outcome}, {m.turns_completed}/{m.caller_turns_planned}" if m else s.state)
        progress(f"{s.target}: {s.detail}" if s.state == "note" else f"{s.call_id}: {s.state}: {what}")

    shared: Clock = clock or MonotonicClock()  # one call at a time: one clock is enough
    jobs = plan_jobs(dialogues, 1, settings.timing.seed)
    runs = [TargetRun(settings, make_line)]
    return (await run_calls(runs, jobs, tts, asr, new_clock=lambda: shared, on_status=say))[0].calls
