"""A worker makes a call exactly as the local runner does and hands back its files (no Ray needed: the
actor is a plain class until Ray wraps it)."""

from __future__ import annotations

import json

from tests.records import short_delivery
from voice.app.run.bench_config import BenchConfig
from voice.app.run.jobs import plan_jobs
from voice.app.run.launch import echo_assistant
from voice.app.run.ray_worker import CallWorker, WorkerSpec
from voice.dialogues import parse_dialogue


async def test_a_worker_makes_a_call_and_hands_back_its_files_leaving_nothing_on_its_node(tmp_path) -> None:
    with echo_assistant(300, ["--skip-silence"]) as (echo, _):
        target = f"pcm+{echo}"
        config = BenchConfig(out=tmp_path, targets=(target,), tts="memory", transcribe=False)
        worker = CallWorker(WorkerSpec(config, (target,), None, 1), "node-a")
        assert await worker.ready() == "node-a"  # what the driver asks a worker whose call failed
        [job] = plan_jobs([parse_dialogue(short_delivery("w-1"), "mem", 1)])
        out = await worker.call(0, job)
        logs = await worker.close()
    names = [name for name, _ in out.files]
    assert names == ["w-1.wav", "w-1.events.jsonl", "w-1.metrics.json"]  # the metrics file last
    assert out.node == "node-a" and not out.metrics.failed and out.metrics.call_id == "w-1"
    assert out.pacing_p99_ms is not None and out.pacing_p99_ms >= 0
    metrics = json.loads(dict(out.files)["w-1.metrics.json"])
    assert metrics["outcome"] == out.metrics.outcome and metrics["target"] == target
    assert logs == {}  # no built-in assistant on this node
    assert not tmp_path.joinpath("w-1.wav").exists()  # the driver alone writes the run folder
