"""The worker side of ``callsim bench --ray``: one :class:`CallWorker` actor per node makes calls exactly as
the local runner does, in a scratch folder of its node, and hands each finished call's files back to the
driver (:mod:`voice.app.run.ray_runner`), which alone writes the run folder.

The worker opens its targets on its first call (:mod:`voice.app.run.assistants`: its own built-in assistant
for ``builtin`` targets, its own TTS and transcriber), so a node that joins or an actor that Ray restarts
after a crash starts from nothing; an assistant that crashes is started again on the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from voice.app.run.assistants import open_target_runs
from voice.app.run.bench_config import BenchConfig
from voice.app.run.jobs import CallJob
from voice.app.run.resume import metrics_path
from voice.app.run.runner import CallMaker, TargetRun
from voice.core.clock import MonotonicClock
from voice.errors import CallSimError
from voice.lines.targets import Target, parse_target
from voice.metrics.call_metrics import CallMetrics
from voice.recording import recording_paths


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to make a target's calls as the local runner would (picklable)."""

    config: BenchConfig
    targets: tuple[str, ...]
    transcriber: str | None  # the replies' transcriber (None: no transcripts), made on each node
    concurrency: int | None  # calls at once per node (None: by the node's CPUs)
    workers_per_node: int = 1  # worker processes per node, sharing its calls (each its own event loop)


@dataclass(frozen=True)
class CallOutput:
    """A finished call as a worker returns it: its files (the metrics file last) and where it was made."""

    files: tuple[tuple[str, bytes], ...]
    metrics: CallMetrics
    node: str
    pacing_p99_ms: float | None


class CallWorker:
    """One node's call maker (a Ray actor; async methods, so its calls share one event loop)."""

    def __init__(self, spec: WorkerSpec, node: str) -> None:
        self._spec, self._node = spec, node
        self._root = Path(tempfile.mkdtemp(prefix="callsim-ray-"))
        self._targets: list[Target] = [parse_target(t) for t in spec.targets]
        self._stack: contextlib.AsyncExitStack | None = None
        self._runs: list[TargetRun] | None = None
        self._maker: CallMaker | None = None
        self._opening: asyncio.Lock | None = None

    async def _open(self) -> tuple[list[TargetRun], CallMaker]:
        self._opening = self._opening or asyncio.Lock()
        async with self._opening:
            if self._runs is None or self._maker is None:
                from voice.app.run.caller_voices import caller_engines

                config = self._spec.config
                tts = caller_engines(config.voices, config.tts)
                asr = None
                if self._spec.transcriber is not None:
                    from voice.speech.transcribers import make_transcriber

                    asr = make_transcriber(self._spec.transcriber)
                stack = contextlib.AsyncExitStack()
                folders = [self._root / str(i) for i in range(len(self._targets))]
                self._runs = await open_target_runs(stack, config, self._targets, folders, log_dir=self._root)
                concurrency = self._spec.concurrency or 1024  # the driver never sends more than it allows
                self._maker = CallMaker(tts, asr, concurrency, MonotonicClock, lambda _: None)
                self._stack = stack
            return self._runs, self._maker

    async def ready(self) -> str:
        """An answer as soon as the worker can take calls (the driver asks after one of its calls failed)."""
        return self._node

    async def call(self, target: int, job: CallJob) -> CallOutput:
        """Make one call of ``target``'s; its files leave the node with the answer."""
        runs, maker = await self._open()
        run = runs[target]
        maker.expect(job)
        metrics = await maker.one(run, job)
        if maker.stop is not None:  # its assistant crashed or its disk refused: start afresh next call
            why = maker.stop
            await self._close()
            if metrics is None:
                raise WorkerStopped(f"{self._node}: {why}")
        if metrics is None:
            raise WorkerStopped(f"{self._node}: the call was not made")
        folder = run.settings.out_dir
        paths = [*recording_paths(folder, job.call_id), metrics_path(folder, job.call_id)]
        files = []
        for path in paths:
            if path.exists():
                files.append((path.name, path.read_bytes()))
                path.unlink()
        return CallOutput(tuple(files), metrics, self._node, _pacing_p99(files))

    async def _close(self) -> None:
        stack, self._stack, self._runs, self._maker = self._stack, None, None, None
        if stack is not None:
            await stack.aclose()

    async def close(self) -> dict[str, bytes]:
        """Stop the node's assistant and remove its scratch folder; returns the assistant's log, if any."""
        await self._close()
        if self._spec.config.caller is not None:  # its model client
            self._spec.config.caller.close()
        log = self._root / "assistant.log"
        logs = {f"assistant.{_file_safe(self._node)}.log": log.read_bytes()} if log.exists() else {}
        shutil.rmtree(self._root, ignore_errors=True)
        return logs


class WorkerStopped(CallSimError):
    """A worker could not make a call (its assistant or disk failed first): the driver tries it elsewhere."""


def _file_safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def _pacing_p99(files: Sequence[tuple[str, bytes]]) -> float | None:
    for name, data in files:
        if name.endswith(".events.jsonl") and data.strip():
            meta = json.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
            pacing = meta.get("pacing_late_ms") if isinstance(meta, dict) else None
            if isinstance(pacing, dict) and isinstance(pacing.get("p99"), (int, float)):
                return float(pacing["p99"])
    return None
