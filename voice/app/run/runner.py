"""A run: many calls against one or more assistants, concurrently, resumable and written atomically.

For each call: plan the caller (TTS, cached), call the assistant in real time, save the recording,
measure it, transcribe what the assistant said, and save the call's metrics — last, atomically.  A call
whose metrics file exists is skipped on the next run with the same settings, so a run killed at any point
(even ``kill -9``) resumes where it stopped: a recording without metrics is simply made again.  What a
folder keeps (and ``--retry-failed``, ``--fresh``) is :mod:`voice.app.run.resume`'s business.

A batch never dies of one call: an exception in any step of a call is that call's recorded failure
(:mod:`voice.app.run.failures`).  Two things stop a run, the calls in flight finished and recorded first: the
disk refusing a write (every later call would fail too), and the exit of an assistant CallSim started (the
built-in), whose calls are recorded as ``assistant_crashed`` and made again by a rerun.

Calls run as asyncio tasks in one process, at most ``concurrency`` at a time: on the caller's side a call
is I/O-bound (20 ms frames on a socket), while the blocking work — TTS, measuring, Whisper — goes to
executor threads.  TTS and ASR engines are not known to be thread-safe, so each is used by one call at a
time; calls keep streaming meanwhile.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from voice.app.run.calls import (
    CallStatus,
    RunSettings,
    TargetRun,
    call_once,
    hear_clip,
    reply_clips,
    transcribe_replies,
    with_heard_texts,
)
from voice.app.run.failures import (
    CONNECT_FAILED,
    FAILED_HERE,
    SHUTDOWN_HANGUP,
    connect_detail,
    crash_error,
    crash_reason,
    crashed_call,
    error_detail,
    error_outcome,
    failed_call,
    looks_like_shutdown,
)
from voice.app.run.jobs import CallJob, plan_jobs
from voice.app.run.outcome import RunOutcome, TargetCalls, finish_run
from voice.app.run.resume import dialogue_sha, metrics_path, open_folder
from voice.core.caller import CallerPlan, CallerTiming
from voice.core.clock import Clock, MonotonicClock
from voice.dialogues import Dialogue
from voice.errors import AssistantCrashed, CallRefused, ConfigError, LineError, StorageError, explain
from voice.files import storage_error
from voice.lines.line import Line
from voice.metrics.measure import CallMetrics, measure
from voice.metrics.model.call_record import call_to_json
from voice.metrics.model.jsonio import write_json
from voice.react.session import ReactiveSession
from voice.recording import EventStream, Recording, save_recording, streamed_events
from voice.speech.asr import ASREngine
from voice.speech.caller_plan import plan_call
from voice.speech.engine_lock import BACKGROUND, EngineLock
from voice.speech.tts.engine import TTSEngine
from voice.speech.voices import VoiceBank

__all__ = [
    "CallStatus",
    "RunSettings",
    "TargetCalls",
    "TargetRun",
    "call_once",
    "make_calls",
    "run_calls",
    "run_dialogues",
    "transcribe_replies",
]

CRASH_POLLS, CRASH_POLL_S = 40, 0.05  # how long a suspect call waits for an assistant's exit to show


def _save_and_measure(
    out_dir: Path, rec: Recording, stream: EventStream | None = None, audio: str = "wav"
) -> CallMetrics:
    save_recording(out_dir, rec, stream, audio)
    return measure(rec)


class _Step:
    """Which step a call is in, so that an exception says where it broke."""

    def __init__(self) -> None:
        self.now = "starting"


class CallMaker:
    """The shared state of one :func:`make_calls`: engines, their locks, the slot semaphore, plans, and
    why the run stops (``stop``: the first disk refusal or assistant crash; later calls are not begun)."""

    def __init__(
        self,
        tts: TTSEngine | VoiceBank | None,
        asr: ASREngine | None,
        concurrency: int,
        new_clock: Callable[[], Clock],
        on_status: Callable[[CallStatus], None],
    ) -> None:
        self.voices = tts if isinstance(tts, VoiceBank) or tts is None else VoiceBank.single(tts)
        self.asr, self.new_clock, self.on_status = asr, new_clock, on_status
        self.slots = asyncio.Semaphore(concurrency)
        self.tts_lock, self.asr_lock = EngineLock(), EngineLock()  # a reactive caller's turn goes first
        self._plans: dict[str, asyncio.Task[CallerPlan]] = {}  # shared by the targets of one job
        self._users: dict[str, int] = {}  # calls still to be made per job (across targets)
        self.stop: StorageError | AssistantCrashed | None = None
        # the job after each job's (the run's order): its caller is synthesized while this one's call runs
        self.ahead: dict[str, CallJob] = {}

    def halt(self, why: StorageError | AssistantCrashed) -> None:
        """Stop beginning calls (the first reason wins); the calls in flight finish and are recorded."""
        self.stop = self.stop or why

    def expect(self, job: CallJob) -> None:
        """Count one more call that will need the job's plan (so it is freed after the last)."""
        self._users[job.call_id] = self._users.get(job.call_id, 0) + 1

    async def plan(self, job: CallJob, timing: CallerTiming) -> CallerPlan:
        """The job's caller plan, synthesized once and shared by every target; dropped after the last."""
        try:
            return await asyncio.shield(self._planning(job, timing))
        finally:
            self.release(job)

    def _planning(self, job: CallJob, timing: CallerTiming) -> asyncio.Task[CallerPlan]:
        """The task making the job's plan, begun if it was not."""
        task = self._plans.get(job.call_id)
        if task is None:
            task = asyncio.ensure_future(self._synthesize(job, timing))
            # a call cancelled while the plan is made (the run is stopping) leaves it behind: its error,
            # if any, is then nobody's to report, and must not surface as "exception never retrieved"
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._plans[job.call_id] = task
        return task

    def release(self, job: CallJob) -> None:
        """One call of the job no longer needs its plan (made, or never begun)."""
        self._users[job.call_id] -= 1
        if self._users[job.call_id] <= 0:
            self._users.pop(job.call_id)
            if (task := self._plans.pop(job.call_id, None)) is not None:
                task.cancel()  # no call needs it any more (a no-op once it is done)

    def warm(self, job: CallJob, timing: CallerTiming) -> None:
        """Begin synthesizing a job's caller while earlier calls run (its plan is then ready at its turn)."""
        if job.call_id in self._users:  # a call still to be made (not one kept from an earlier run)
            self._planning(job, timing)

    def voice(self, job: CallJob) -> TTSEngine:
        """The job's caller voice (:func:`make_calls` refuses to make calls here without engines)."""
        if self.voices is None:
            raise ConfigError("calls made in this process need a TTS engine for the caller")
        return self.voices.engine(job.voice, job.speed)

    async def _synthesize(self, job: CallJob, timing: CallerTiming) -> CallerPlan:
        return await self.tts_lock.run(BACKGROUND, plan_call, job.dialogue, self.voice(job), timing)

    async def _reactive(
        self, settings: RunSettings, job: CallJob, timing: CallerTiming
    ) -> ReactiveSession | None:
        """The call's reactive caller, started (its first turn decided), or None for the scripted one."""
        if settings.caller is None or self.asr is None:  # (a caller without one is refused up front)
            return None
        session = settings.caller.session(
            job.dialogue, timing, self.voice(job), self.asr, tts_lock=self.tts_lock, asr_lock=self.asr_lock
        )
        await session.start(settings.caller.turns_for(job.dialogue))
        return session

    async def one(self, run: TargetRun, job: CallJob) -> CallMetrics | None:
        """Make one call and record it, whatever happens in it; None if the run stopped before it began.

        An exception in any step is the call's recorded failure (``call_error``, the step and the error in
        its detail; ``caller_speech_failed`` if a caller line could not be voiced), except the disk's
        refusal, which stops the run (:class:`StorageError`) and leaves the call to a rerun.  An assistant
        crash records the call as ``assistant_crashed`` and stops the run.
        """
        label, step = run.label or run.settings.target, _Step()
        planned = len(job.dialogue.caller_turns)
        crash: str | None = None
        try:
            made = await self._make(run, job, step)
            if made is None:
                return None
            metrics, crash = made
            if metrics.outcome != CONNECT_FAILED:  # not saved: a rerun tries to connect again
                self._save(run, job, metrics)
        except Exception as exc:  # any error of one call is that call's failure, not the run's
            if (refused := storage_error(exc)) is not None:
                self.halt(refused)
                return None
            metrics = failed_call(
                job.call_id, job.dialogue.id, planned, error_outcome(exc), error_detail(step.now, exc)
            )
            try:
                self._save(run, job, metrics)
            except Exception as again:  # e.g. a file name the disk refuses: results.json has it
                if (refused := storage_error(again)) is not None:
                    self.halt(refused)
                    return None
                metrics = dataclasses.replace(
                    metrics, detail=f"{metrics.detail} (not saved: {explain(again)})"
                )
        if crash is not None:
            self.halt(crash_error(crash))
        state = "failed" if metrics.outcome in FAILED_HERE else "done"
        self.on_status(
            CallStatus(label, job.call_id, state, metrics, metrics.detail if state == "failed" else "")
        )
        return metrics

    def _save(self, run: TargetRun, job: CallJob, metrics: CallMetrics) -> None:
        labels = run.settings.labels(job)
        write_json(metrics_path(run.settings.out_dir, job.call_id), call_to_json(metrics, labels))

    async def _make(self, run: TargetRun, job: CallJob, step: _Step) -> tuple[CallMetrics, str | None] | None:
        """The call's steps: its caller, the call, the recording, the crash check, the transcripts.

        Returns the metrics and, if the watched assistant died, why; None if the run stopped first."""
        settings, label = run.settings, run.label or run.settings.target
        loop = asyncio.get_running_loop()
        async with self.slots:
            if self.stop is None and run.crashed is not None and (gone := run.crashed()) is not None:
                self.halt(crash_error(gone))  # never begin a call on an assistant already gone
            if self.stop is not None:
                self.release(job)
                return None
            timing = dataclasses.replace(settings.timing, seed=job.seed)
            step.now = "the caller's first turn" if settings.caller is not None else "the caller's speech"
            caller = await self._reactive(settings, job, timing)
            plan = caller.started().plan if caller is not None else await self.plan(job, timing)
            # a remote assistant's calls synthesize the next caller meanwhile; the built-in shares this CPU,
            # so its callers are synthesized between calls, never while one is measured
            if caller is None and run.crashed is None and (then := self.ahead.get(job.call_id)) is not None:
                self.warm(then, dataclasses.replace(settings.timing, seed=then.seed))
            self.on_status(CallStatus(label, job.call_id, "calling"))
            step.now = "the call"
            try:
                with streamed_events(settings.out_dir, job.call_id) as stream:
                    rec, _ = await call_once(
                        job, plan, run.make_line(), self.new_clock(), settings, caller, events=stream.write
                    )
            except LineError as exc:  # the call never connected: no log
                planned = len(job.dialogue.caller_turns)
                # the phone network's refusals (busy, declined, ...) are the bot's answer: recorded as such
                outcome = exc.outcome if isinstance(exc, CallRefused) else CONNECT_FAILED
                detail = str(exc) if isinstance(exc, CallRefused) else connect_detail(exc)
                metrics = failed_call(job.call_id, job.dialogue.id, planned, outcome, detail)
                crash = await crash_reason(run.crashed, True, CRASH_POLLS, CRASH_POLL_S)
                return (metrics, None) if crash is None else (crashed_call(metrics, crash), crash)
        step.now = "saving and measuring the recording"
        metrics = await loop.run_in_executor(
            None, _save_and_measure, settings.out_dir, rec, stream, settings.recording
        )
        crash = await crash_reason(run.crashed, looks_like_shutdown(metrics), CRASH_POLLS, CRASH_POLL_S)
        if crash is None and run.crashed is not None and SHUTDOWN_HANGUP in metrics.detail:
            crash = f"the built-in assistant hung up as it shut down ({metrics.detail})"
        if crash is not None:
            return crashed_call(metrics, crash), crash
        if self.asr is not None and settings.transcribe:
            step.now = "transcribing the replies"
            texts: list[str | None] = []
            for clip in reply_clips(rec, metrics):  # one job per reply: other calls' turns come first
                needs = clip is not None and len(clip) > 0
                texts.append(
                    await self.asr_lock.run(BACKGROUND, hear_clip, self.asr, clip)
                    if needs
                    else hear_clip(self.asr, clip)
                )
            metrics = with_heard_texts(metrics, texts)
        return metrics, None


async def make_calls(
    runs: Sequence[TargetRun],
    jobs: Sequence[CallJob],
    tts: TTSEngine | VoiceBank | None,
    asr: ASREngine | None,
    *,
    concurrency: int = 1,
    new_clock: Callable[[], Clock] = MonotonicClock,
    on_status: Callable[[CallStatus], None] = lambda _: None,
    retry_failed: bool = False,
    fresh: bool = False,
    make_call: Callable[[int, TargetRun, CallJob], Awaitable[CallMetrics | None]] | None = None,
) -> RunOutcome:
    """:func:`run_calls` without raising when the run stops: each target's calls, and why it stopped.

    A stopped run's ``results.json`` files are partial (the calls made; see :mod:`voice.app.run.outcome`).
    ``make_call`` (target index, run, job) makes a call elsewhere instead (:mod:`voice.app.run.ray_runner`),
    which then bounds the concurrency and writes the call's files itself, and needs no ``tts`` or ``asr``
    here (the place that makes the calls has its own).
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1 (got {concurrency})")
    if tts is None and make_call is None:
        raise ConfigError("calls made in this process need a TTS engine for the caller")
    if asr is None and make_call is None and any(run.settings.caller is not None for run in runs):
        raise ConfigError("a reactive caller hears through a transcriber: give the run one")
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
    state.ahead = {a.call_id: b for a, b in itertools.pairwise(jobs)}
    results: list[list[CallMetrics | None]] = [[None] * len(jobs) for _ in runs]
    pending: list[tuple[int, int, asyncio.Task[CallMetrics | None]]] = []
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
    return finish_run(runs, jobs, results, state.stop)


async def run_calls(
    runs: Sequence[TargetRun], jobs: Sequence[CallJob], tts: TTSEngine, asr: ASREngine | None, **options: Any
) -> list[TargetCalls]:
    """Make every job's call on every target, at most ``concurrency`` at once; per target, in job order.

    Finished calls found on disk are reused (resume; failed ones made again with ``retry_failed``; none
    with ``fresh``, which deletes each target folder's earlier run first).  Targets are interleaved job by
    job, so a run cut short holds comparable calls for every target.  Each call gets its own clock from
    ``new_clock`` (virtual clocks in tests must not be shared between concurrent calls).  A full disk or a
    crashed built-in assistant stops the run: the calls in flight are recorded, partial ``results.json``
    written, and the :class:`StorageError` or :class:`AssistantCrashed` raised says what was kept.
    ``options``: :func:`make_calls`'s (``concurrency``, ``new_clock``, ``on_status``, ``retry_failed``,
    ``fresh``).
    """
    outcome = await make_calls(runs, jobs, tts, asr, **options)
    outcome.raise_if_stopped()
    return outcome.targets


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
