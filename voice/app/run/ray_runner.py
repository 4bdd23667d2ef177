"""``callsim bench --ray``: a run's calls spread over the nodes of a Ray cluster, its folder written by the
driver alone.

Each node gets a :class:`~voice.app.run.ray_worker.CallWorker` actor (``--ray-workers`` of them), reused
across calls: its own event loop (frame pacing is timed on the node that makes the call), its own TTS,
transcriber and, for ``builtin`` targets, its own built-in assistant, started on its first call.  A
worker makes a call exactly as the local runner does (:mod:`voice.app.run.assistants`,
:class:`voice.app.run.runner.CallMaker`), in a scratch folder of its node, and returns the call's files; the
driver writes them into the run folder atomically, the metrics file last.  So no shared filesystem is
needed, the folder's layout is a local run's, and resume is unchanged: a rerun, or a driver restarted
after a crash, makes only the calls without a metrics file.

A worker (or node) that dies mid-call: Ray restarts the actor (up to :data:`ACTOR_RESTARTS` times) and the
driver makes the call again, on whichever worker is free, up to :data:`MAX_ATTEMPTS` in all; the worker
gets calls again once it answers, and never if its node has left the cluster.  Only a
finished call's files are ever written, so a retried call is never duplicated; the attempts that failed
are recorded in its event log's ``meta`` (``attempts``).  A call that fails every attempt is counted as
failed (``worker_lost``) but not saved, so a rerun makes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.app.run.assistants import target_settings
from voice.app.run.bench_config import BenchConfig
from voice.app.run.jobs import CallJob
from voice.app.run.outcome import RunOutcome
from voice.app.run.ray_worker import CallOutput, CallWorker, WorkerSpec
from voice.app.run.runner import CallStatus, TargetRun, make_calls
from voice.core.clock import monotonic_s
from voice.errors import ConfigError
from voice.files import atomic_write_bytes
from voice.lines.line import Line
from voice.lines.targets import Target
from voice.metrics.call_metrics import CallMetrics
from voice.metrics.model.call_record import CallRecord
from voice.metrics.model.jsonio import JsonValue, as_json, json_bytes
from voice.metrics.model.run_results import NodeSummary
from voice.metrics.results import PACING_BOUND_MS  # a node whose frame wake-ups are later (p99) is flagged

RAY_INSTALL = 'pip install -e ".[ray]" (or scripts/setup --ray)'
MAX_ATTEMPTS = 3  # per call, across workers
ACTOR_RESTARTS = 4  # per worker: Ray starts a dead worker again this many times
WORKER_NAME = "callsim-worker"  # actor i is callsim-worker-i (ray.get_actor finds it, e.g. to kill it)
RECOVER_S = 120.0  # how long a slot whose call failed waits for its worker to answer again
READY_PROBE_S = 5.0  # one wait for that answer


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`ConfigError` saying how to install the optional extra."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--ray needs Ray, an optional extra that is not installed: {RAY_INSTALL}") from exc
    return ray


def _no_line() -> Line:
    raise ConfigError("with --ray, lines are opened on the workers")


@dataclass
class NodeStats:
    """One node's share of a run: calls, when it was busy (driver's clock), its worst frame pacing, and
    whether it left."""

    node: str
    calls: int = 0
    first_s: float | None = None
    last_s: float | None = None
    pacing_p99_ms: list[float] = field(default_factory=list)
    left: bool = False  # it left the cluster (or its workers stopped answering) during the run

    def summary(self) -> NodeSummary:
        """Calls, calls per minute while busy, the worst call's pacing p99 and whether it is flagged."""
        busy = (self.last_s - self.first_s) if self.first_s is not None and self.last_s is not None else 0.0
        worst = max(self.pacing_p99_ms, default=None)
        return NodeSummary(
            node=self.node,
            calls=self.calls,
            calls_per_min=round(60 * self.calls / busy, 2) if busy > 0 else None,
            pacing_p99_ms_worst=worst,
            pacing_flagged=worst is not None and worst > PACING_BOUND_MS,
            left=self.left,
        )


@dataclass(frozen=True)
class _Slot:
    actor: Any
    node: str  # host:node id, as reported
    node_id: str  # Ray's, to ask whether the node is still in the cluster


def connect(address: str) -> Callable[[], None]:
    """Join (or, with ``auto``, start locally) a Ray cluster; returns how to leave it.

    A local Ray's processes outlive a driver killed with SIGKILL, so ``auto`` also starts a reaper
    (:mod:`voice.app.run.reaper`) that kills them if this process dies first.
    """
    ray = import_ray()
    if ray.is_initialized():
        return lambda: None
    if address != "auto":
        ray.init(address=address, log_to_driver=False)
        return ray.shutdown
    from voice.app.run.launch import reaper

    watchdog = reaper()
    # "local": a Ray of its own even when this machine runs a cluster (`ray start`), which a bare
    # ray.init() would join
    ray.init(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)

    def leave() -> None:
        ray.shutdown()
        watchdog.terminate()
        watchdog.wait()

    return leave


def start_workers(spec: WorkerSpec, default_concurrency: Callable[[int], int]) -> list[_Slot]:
    """``spec.workers_per_node`` :class:`CallWorker` processes on every alive node, and as many slots in all
    as the node takes calls at once (its CPUs, as ``--concurrency`` counts them, or ``spec.concurrency``)."""
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(CallWorker)
    slots: list[_Slot] = []
    for node in ray.nodes():
        cpus = int(node.get("Resources", {}).get("CPU", 0))
        if not node.get("Alive") or cpus < 1:
            continue
        n = spec.concurrency or default_concurrency(cpus)
        name = f"{node.get('NodeManagerHostname') or socket.gethostname()}:{node['NodeID'][:6]}"
        workers = max(1, min(spec.workers_per_node, n))
        for w in range(workers):
            share = n // workers + (1 if w < n % workers else 0)  # the node's calls, spread evenly
            actor = remote.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
                max_concurrency=share + 1,
                max_restarts=ACTOR_RESTARTS,
                num_cpus=0,
                name=f"{WORKER_NAME}-{len({id(s.actor) for s in slots})}",
            ).remote(spec, name)
            slots.extend(_Slot(actor, name, node["NodeID"]) for _ in range(share))
    if not slots:
        raise ConfigError("the Ray cluster has no alive node with a CPU")
    return slots


class RayCalls:
    """The driver's side: hands calls to free worker slots, retries lost ones, writes finished ones.

    A slot whose call failed is handed out again only once its worker answers (Ray restarts a dead one); if
    its node leaves the cluster first, or it does not answer within :data:`RECOVER_S`, never again.  Once
    no slot is left, the calls still to make are lost at once rather than waiting for ever.
    """

    def __init__(self, slots: Sequence[_Slot], on_status: Callable[[CallStatus], None]) -> None:
        self._free: asyncio.Queue[_Slot | None] = asyncio.Queue()  # None: no slot is left
        for slot in slots:
            self._free.put_nowait(slot)
        self._live = len(slots)
        self._on_status = on_status
        self.nodes: dict[str, NodeStats] = {}
        self.nodes_left: set[str] = set()
        self._recovering: set[asyncio.Task[None]] = set()
        self._t0 = monotonic_s()

    async def one_of_target(self, index: int, run: TargetRun, job: CallJob) -> CallMetrics:
        """Make ``job``'s call of target ``index`` somewhere; write its files into the run folder."""
        ray = import_ray()
        label = run.label or run.settings.target
        attempts: list[dict[str, str]] = []
        while True:
            slot = await self._free.get()
            if slot is None:
                self._free.put_nowait(None)  # for the next caller too
                attempts.append(
                    {"node": "-", "error": "no worker is left (their nodes left, or they stopped answering)"}
                )
                return self._lost(label, job, attempts)
            self._on_status(CallStatus(label, job.call_id, "calling"))
            started = monotonic_s() - self._t0
            try:
                out: CallOutput = await slot.actor.call.remote(index, job)
            except ray.exceptions.RayError as exc:
                attempts.append({"node": slot.node, "error": _short(exc)})
                task = asyncio.create_task(self._recover(slot))
                self._recovering.add(task)
                task.add_done_callback(self._recovering.discard)
                if len(attempts) >= MAX_ATTEMPTS:
                    return self._lost(label, job, attempts)
                continue
            except BaseException:
                self._free.put_nowait(slot)
                raise
            self._free.put_nowait(slot)
            stats = self.nodes.setdefault(out.node, NodeStats(out.node))
            stats.calls += 1
            stats.first_s = started if stats.first_s is None else min(stats.first_s, started)
            stats.last_s = monotonic_s() - self._t0
            if out.pacing_p99_ms is not None:
                stats.pacing_p99_ms.append(out.pacing_p99_ms)
            await asyncio.to_thread(_write_call, run.settings.out_dir, out, attempts)
            state = "failed" if out.metrics.outcome == "connect_failed" else "done"
            self._on_status(CallStatus(label, job.call_id, state, out.metrics, out.metrics.detail))
            return out.metrics

    async def _recover(self, slot: _Slot) -> None:
        """Free ``slot`` again once its worker answers; drop it if its node leaves or it stays silent."""
        ray = import_ray()
        end = monotonic_s() + RECOVER_S
        while monotonic_s() < end and await asyncio.to_thread(_node_alive, slot.node_id):
            try:
                await asyncio.wait_for(slot.actor.ready.remote(), READY_PROBE_S)
            except (ray.exceptions.RayError, TimeoutError):
                await asyncio.sleep(0.5)
                continue
            self._free.put_nowait(slot)
            return
        self.nodes_left.add(slot.node)
        self._live -= 1
        if self._live == 0:
            self._free.put_nowait(None)

    async def stop(self) -> None:
        """Stop waiting for workers to answer (the run is over)."""
        for task in list(self._recovering):
            task.cancel()
        await asyncio.gather(*self._recovering, return_exceptions=True)

    def _lost(self, label: str, job: CallJob, attempts: list[dict[str, str]]) -> CallMetrics:
        why = f"lost on every worker it was tried on ({len(attempts)}): " + "; ".join(
            f"{a['node']}: {a['error']}" for a in attempts
        )
        metrics = CallMetrics(
            job.call_id, job.dialogue.id, "worker_lost", True, 0.0, None,
            caller_turns_planned=len(job.dialogue.caller_turns), detail=why,
        )  # fmt: skip
        self._on_status(CallStatus(label, job.call_id, "failed", metrics, why))
        return metrics


def _node_alive(node_id: str) -> bool:
    """Whether Ray still counts the node in its cluster."""
    ray = import_ray()
    return any(n.get("NodeID") == node_id and n.get("Alive") for n in ray.nodes())


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _write_call(folder: Path, out: CallOutput, attempts: list[dict[str, str]]) -> None:
    """The call's files, atomically, the metrics file last (the mark of a finished call); the node and the
    failed attempts are added to its event log's ``meta`` and its metrics (a label of the call)."""
    for name, data in out.files:
        if name.endswith(".events.jsonl"):
            meta: dict[str, JsonValue] = {"node": out.node}
            data = _with_meta(data, meta | ({"attempts": as_json(attempts)} if attempts else {}))
        elif name.endswith(".metrics.json"):
            call = CallRecord.from_json(json.loads(data))
            data = json_bytes(CallRecord(call.metrics, {**call.labels, "node": out.node}).to_json())
        atomic_write_bytes(folder / name, data)


def _with_meta(log: bytes, extra: dict[str, JsonValue]) -> bytes:
    head, _, last = log.rstrip(b"\n").rpartition(b"\n")
    meta = json.loads(last)
    meta.update(extra)
    line = json.dumps(meta, ensure_ascii=False, default=str).encode()
    return (head + b"\n" if head else b"") + line + b"\n"


async def run_on_ray(
    config: BenchConfig,
    targets: Sequence[Target],
    slugs: Sequence[str],
    jobs: Sequence[CallJob],
    *,
    transcriber: str | None,
    default_concurrency: Callable[[int], int],
    on_status: Callable[[CallStatus], None],
) -> tuple[RunOutcome, list[NodeSummary]]:
    """Every job's call on every target, made by the cluster's workers; the target folders as a local run
    leaves them, and one summary per node."""
    assert config.ray is not None
    leave = await asyncio.to_thread(connect, config.ray)
    keeper = None
    try:
        config, keeper = await asyncio.to_thread(_with_shared_cache, config)
        runs = [
            TargetRun(target_settings(config, t, config.out / slug), _no_line, slug)
            for t, slug in zip(targets, slugs, strict=True)
        ]
        spec = WorkerSpec(
            config, tuple(t.full_text() for t in targets), transcriber, config.concurrency, config.ray_workers
        )
        slots = await asyncio.to_thread(start_workers, spec, default_concurrency)
        calls = RayCalls(slots, on_status)
        try:
            outcome = await make_calls(
                runs,
                jobs,
                None,
                None,
                concurrency=len(slots),
                on_status=on_status,
                retry_failed=config.retry_failed,
                fresh=config.fresh,
                make_call=calls.one_of_target,
            )
        finally:
            await calls.stop()
            for name, data in (await _close_workers(slots)).items():
                await asyncio.to_thread(atomic_write_bytes, config.out / name, data)
        for name in calls.nodes_left:
            calls.nodes.setdefault(name, NodeStats(name)).left = True
        return outcome, [n.summary() for n in calls.nodes.values()]
    finally:
        if keeper is not None:
            with contextlib.suppress(Exception):
                import_ray().kill(keeper, no_restart=True)
        await asyncio.to_thread(leave)


def _with_shared_cache(config: BenchConfig) -> tuple[BenchConfig, Any]:
    """``config`` for the workers: a reactive caller's model settings as resolved here (the server and key
    of the driver's environment) and its answers kept in the driver's cache (:mod:`voice.app.run.ray_cache`);
    the cache's keeper, or None for the scripted caller."""
    if config.caller is None:
        return config, None
    from voice.app.run.ray_cache import SharedAnswerCache, start_keeper
    from voice.llm.cache import default_dir

    llm = config.caller.llm.resolved()
    root = llm.cache_dir or default_dir()
    keeper = start_keeper(root)
    caller = dataclasses.replace(
        config.caller,
        llm=dataclasses.replace(llm, cache_dir=root),
        answer_cache=SharedAnswerCache(keeper, root),
    )
    return dataclasses.replace(config, caller=caller), keeper


async def _close_workers(slots: Sequence[_Slot], timeout_s: float = 30.0) -> dict[str, bytes]:
    """Close every worker (its assistant stops), gather their assistants' logs, then end the actors."""
    ray = import_ray()
    actors = list({id(s.actor): s.actor for s in slots}.values())
    logs: dict[str, bytes] = {}
    with contextlib.suppress(Exception):
        answers = await asyncio.wait_for(
            asyncio.gather(*(a.close.remote() for a in actors), return_exceptions=True), timeout_s
        )
        for answer in answers:
            if isinstance(answer, dict):
                logs.update(answer)
    for actor in actors:
        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)
    return logs


def check_ray_options(config: BenchConfig, line_factories: object) -> None:
    """What ``--ray`` cannot do (yet), said before anything starts."""
    if config.caller is not None and not config.transcribe:
        raise ConfigError("a reactive caller hears through a transcriber: --no-transcribe cannot go with it")
    if line_factories:
        raise ConfigError("--ray opens lines on the workers: in-memory line factories cannot travel there")
