"""``callsim bench --ray`` on a real local Ray (2 CPUs, started by the test) against real assistants over real
websockets: the same calls as the local runner, a killed worker's calls made again, a killed driver resumed.

Ray is an optional extra: without it these tests skip, except under ``CALLSIM_REQUIRE_RAY`` (CI), where
they fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.records import short_delivery
from voice.dialogues import parse_dialogue
from voice.run.dataset import BenchConfig, run_bench
from voice.run.launch import echo_assistant, reference_assistant
from voice.run.ray_runner import WORKER_NAME
from voice.run.reaper import alive, children_of
from voice.run.runner import CallStatus
from voice.speech.tts.memory import MemoryTTS

if os.environ.get("CALLSIM_REQUIRE_RAY"):
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")

pytestmark = pytest.mark.timeout(600)
FIDELITY_MS = 10.0  # the fidelity bound the tests of a busy machine use (tests/live/test_talk.py)
REFERENCE = {
    "reply_ms": 600.0,
    "stop_ms": 500.0,
    "takeover_pauses": True,
    "stop_on_backchannel": False,
    "greeting_ms": 300.0,
    "reply_len_ms": 1200.0,
}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def dialogues(n: int) -> list[Any]:
    return [parse_dialogue(short_delivery(f"r-{i}"), "mem", i) for i in range(n)]


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix in (".wav", ".flac", ".jsonl", ".json"))


def latencies(folder: Path) -> dict[str, list[float | None]]:
    return {
        p.name: [t["latency_ms"] for t in json.loads(p.read_text())["turns"]]
        for p in sorted(folder.glob("*.metrics.json"))
    }


async def test_calls_made_on_ray_measure_as_the_same_calls_made_locally(local_ray, tmp_path) -> None:
    with echo_assistant(300, ["--skip-silence"]) as (echo, _):
        async with reference_assistant(REFERENCE) as ref:
            targets = (f"pcm+{ref}", f"pcm+{echo}")
            local = BenchConfig(  # FLAC, as a --ray run stores by default: the same files in both folders
                out=tmp_path / "local", targets=targets, tts="memory", transcribe=False, recordings="flac"
            )
            on_ray = BenchConfig(
                out=tmp_path / "ray",
                targets=targets,
                tts="memory",
                transcribe=False,
                ray="auto",
                concurrency=2,
            )
            await run_bench(dialogues(3), local, MemoryTTS(), None)
            results = await run_bench(dialogues(3), on_ray, MemoryTTS(), None)
    assert all(not c.failed for r in results for c in r.calls)
    run = json.loads((tmp_path / "ray" / "results.json").read_text())
    assert run["ray"] == "auto" and sum(n["calls"] for n in run["nodes"]) == 6
    for r in results:
        mine, theirs = tmp_path / "ray" / r.slug, tmp_path / "local" / r.slug
        assert files(mine) == files(theirs)  # the same layout, written by the driver
        a, b = latencies(mine), latencies(theirs)
        assert a.keys() == b.keys()
        for name in a:
            assert len(a[name]) == len(b[name]) and all(x is not None for x in a[name])
            for x, y in zip(a[name], b[name], strict=True):
                assert x == pytest.approx(y, abs=FIDELITY_MS), name
        node = json.loads(next(mine.glob("*.metrics.json")).read_text())["node"]
        assert node == run["nodes"][0]["node"]


async def test_a_killed_worker_is_restarted_and_its_calls_are_made_again_once(local_ray, tmp_path) -> None:
    statuses: list[CallStatus] = []
    loop = asyncio.get_running_loop()
    killed: list[bool] = []

    def on_status(status: CallStatus) -> None:
        statuses.append(status)
        if status.state == "calling" and not killed:
            killed.append(True)  # 1.5 s into the first calls: both of the worker's calls are in flight
            loop.call_later(1.5, lambda: ray.kill(ray.get_actor(f"{WORKER_NAME}-0"), no_restart=False))

    with echo_assistant(300, ["--skip-silence"]) as (echo, _):
        config = BenchConfig(
            out=tmp_path, targets=(f"pcm+{echo}",), tts="memory", transcribe=False, ray="auto", concurrency=2
        )
        [result] = await run_bench(dialogues(4), config, MemoryTTS(), None, on_status=on_status)
    assert killed and [c.failed for c in result.calls] == [False] * 4
    folder = tmp_path / result.slug
    assert len(list(folder.glob("*.metrics.json"))) == 4 and not list(folder.glob("*.partial"))
    ids = [c["call_id"] for c in json.loads((folder / "results.json").read_text())["calls"]]
    assert sorted(ids) == ["r-0", "r-1", "r-2", "r-3"]  # complete, no duplicate
    metas = [json.loads(p.read_text().splitlines()[-1]) for p in folder.glob("*.events.jsonl")]
    retried = [m for m in metas if m.get("attempts")]
    assert retried, "no call records the attempt the killed worker lost"
    errors = [a["error"] for m in retried for a in m["attempts"]]
    assert all("Actor" in e for e in errors), errors  # the worker's death, not the call's own failure


def test_a_driver_killed_with_sigkill_leaves_nothing_running_and_a_rerun_resumes(tmp_path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(json.dumps(short_delivery(f"k-{i}"), ensure_ascii=False) + "\n" for i in range(4))
    )
    out = tmp_path / "run"
    with echo_assistant(300, ["--skip-silence"]) as (echo, _):
        cmd = [
            sys.executable, "-m", "voice.cli", "bench", "--ray", "--target", f"pcm+{echo}", "--tts", "espeak",
            "--dialogues", str(data), "--all", "--no-transcribe", "--no-report", "--concurrency", "1",
            "--out", str(out),
        ]  # fmt: skip
        driver = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 180
        while (
            not list(out.glob("*/*.metrics.json")) and time.monotonic() < deadline and driver.poll() is None
        ):
            time.sleep(0.1)
        assert list(out.glob("*/*.metrics.json")), "no call finished before the kill"
        ray_processes = children_of(driver.pid)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 15
        while any(alive(p) for p in ray_processes) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in ray_processes if alive(p)], "the killed driver left processes running"
        rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "resuming: kept" in rerun.stderr
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    assert len(list(folder.glob("*.metrics.json"))) == 4
