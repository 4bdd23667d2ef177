"""``callsim bench --ray`` on a real Ray cluster of two nodes (started once per pytest run on this
machine, ``ray_cluster`` in tests/conftest.py: two raylets and object stores, 1 CPU each) against real
assistants over real websockets: calls spread over both nodes measure as the same calls made locally, a
killed worker's calls are made again, a node that leaves mid-run hands its calls to the others, a killed
driver is resumed.  Those run in the full layer (``scripts/test --full``); the units around them here run
in every layer.

Ray is an optional extra: without it these tests skip, except under ``CALLSIM_REQUIRE_RAY`` (CI), where
they fail.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.llm_fake import FakeLLM
from tests.records import short_delivery
from voice.app.run import ray_runner
from voice.app.run.assistants import target_settings
from voice.app.run.dataset import BenchConfig, run_bench
from voice.app.run.jobs import CallJob
from voice.app.run.launch import echo_assistant, reference_assistant
from voice.app.run.ray_runner import WORKER_NAME, RayCalls
from voice.app.run.reaper import alive, children_of
from voice.app.run.runner import CallStatus, TargetRun
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError
from voice.lines.targets import parse_target
from voice.react import scripted_caller
from voice.react.caller import parse_caller
from voice.speech.tts.memory import MemoryTTS

if os.environ.get("CALLSIM_REQUIRE_RAY"):
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")

pytestmark = pytest.mark.timeout(600)
on_ray = pytest.mark.full  # a real Ray cluster: scripts/test --full
FIDELITY_MS = 10.0  # the fidelity bound the tests of a busy machine use (tests/app/live/test_talk.py)
REFERENCE = {
    "reply_ms": 600.0,
    "stop_ms": 500.0,
    "takeover_pauses": True,
    "stop_on_backchannel": False,
    "greeting_ms": 300.0,
    "reply_len_ms": 1200.0,
}


@pytest.fixture
def cluster(ray_cluster: Any) -> Any:
    """The run's two-node cluster (tests/conftest.py)."""
    return ray_cluster


def dialogues(n: int) -> list[Any]:
    return [parse_dialogue(short_delivery(f"r-{i}"), "mem", i) for i in range(n)]


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix in (".wav", ".flac", ".jsonl", ".json"))


def latencies(folder: Path) -> dict[str, list[float | None]]:
    return {
        p.name: [t["latency_ms"] for t in json.loads(p.read_text())["turns"]]
        for p in sorted(folder.glob("*.metrics.json"))
    }


@on_ray
async def test_calls_made_on_two_nodes_measure_as_the_same_calls_made_locally(cluster, tmp_path) -> None:
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
                ray=cluster.address,
                concurrency=2,  # per node: the first four calls go two and two
            )
            await run_bench(dialogues(3), local, MemoryTTS(), None)
            results = await run_bench(dialogues(3), on_ray, MemoryTTS(), None)
    assert all(not c.failed for r in results for c in r.calls)
    run = json.loads((tmp_path / "ray" / "results.json").read_text())
    assert run["ray"] == cluster.address and sum(n["calls"] for n in run["nodes"]) == 6
    assert len(run["nodes"]) == 2 and all(n["calls"] > 0 and not n["left"] for n in run["nodes"])
    for r in results:
        mine, theirs = tmp_path / "ray" / r.slug, tmp_path / "local" / r.slug
        assert files(mine) == files(theirs)  # the same layout, written by the driver
        a, b = latencies(mine), latencies(theirs)
        assert a.keys() == b.keys()
        for name in a:
            assert len(a[name]) == len(b[name]) and all(x is not None for x in a[name])
            for x, y in zip(a[name], b[name], strict=True):
                assert x == pytest.approx(y, abs=FIDELITY_MS), name
        for metrics in mine.glob("*.metrics.json"):
            assert json.loads(metrics.read_text())["node"] in {n["node"] for n in run["nodes"]}


@on_ray
async def test_a_killed_worker_is_restarted_and_its_calls_are_made_again_once(cluster, tmp_path) -> None:
    statuses: list[CallStatus] = []
    loop = asyncio.get_running_loop()
    killed: list[bool] = []

    def on_status(status: CallStatus) -> None:
        statuses.append(status)
        if status.state == "done" and not killed:
            # the first call is back: the worker's two slots are busy (with a first call still going on, or
            # the next ones just handed out), whether or not the call back was one of its own
            killed.append(True)
            loop.call_later(0.5, lambda: ray.kill(ray.get_actor(f"{WORKER_NAME}-0"), no_restart=False))

    with echo_assistant(300, ["--skip-silence"]) as (echo, _):
        config = BenchConfig(
            out=tmp_path,
            targets=(f"pcm+{echo}",),
            tts="memory",
            transcribe=False,
            ray=cluster.address,
            concurrency=2,
        )
        [result] = await run_bench(dialogues(8), config, MemoryTTS(), None, on_status=on_status)
    assert killed and [c.failed for c in result.calls] == [False] * 8
    folder = tmp_path / result.slug
    assert len(list(folder.glob("*.metrics.json"))) == 8 and not list(folder.glob("*.partial"))
    ids = [c["call_id"] for c in json.loads((folder / "results.json").read_text())["calls"]]
    assert sorted(ids) == [f"r-{i}" for i in range(8)]  # complete, no duplicate
    metas = [json.loads(p.read_text().splitlines()[-1]) for p in folder.glob("*.events.jsonl")]
    retried = [m for m in metas if m.get("attempts")]
    assert retried, "no call records the attempt the killed worker lost"
    errors = [a["error"] for m in retried for a in m["attempts"]]
    assert all("Actor" in e for e in errors), errors  # the worker's death, not the call's own failure


@on_ray
async def test_a_node_that_leaves_mid_run_hands_its_calls_to_the_others(cluster, tmp_path) -> None:
    third = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    loop = asyncio.get_running_loop()
    removed: list[bool] = []

    def on_status(status: CallStatus) -> None:
        if status.state == "done" and not removed:
            removed.append(True)  # the first call is back: every node's slot is busy (6 calls, 3 slots)
            loop.call_later(0.5, lambda: cluster.remove_node(third, allow_graceful=False))

    try:
        with echo_assistant(300, ["--skip-silence"]) as (echo, _):
            config = BenchConfig(
                out=tmp_path, targets=(f"pcm+{echo}",), tts="memory", transcribe=False, ray=cluster.address,
                concurrency=1,
            )  # fmt: skip
            [result] = await run_bench(dialogues(6), config, MemoryTTS(), None, on_status=on_status)
    finally:  # the cluster is the run's: leave it with its two nodes, whatever happened here
        if third in cluster.list_all_nodes():
            cluster.remove_node(third, allow_graceful=False)
    assert removed and [c.failed for c in result.calls] == [False] * 6, [c.detail for c in result.calls]
    folder = tmp_path / result.slug
    ids = [c["call_id"] for c in json.loads((folder / "results.json").read_text())["calls"]]
    assert sorted(ids) == [f"r-{i}" for i in range(6)]  # complete, no duplicate
    nodes = json.loads((tmp_path / "results.json").read_text())["nodes"]
    assert [n["left"] for n in nodes].count(True) == 1 and sum(n["calls"] for n in nodes) == 6
    [gone] = [n["node"] for n in nodes if n["left"]]
    metas = [json.loads(p.read_text().splitlines()[-1]) for p in folder.glob("*.events.jsonl")]
    assert all(m["node"] != gone for m in metas if m.get("attempts"))  # made again elsewhere
    assert any(a["node"] == gone for m in metas for a in m.get("attempts", []))


def decisions(folder: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Each call's reactive caller decisions: (source, action, text) in order."""
    return {
        p.name: [
            (e["source"], e["action"], e["text"])
            for e in map(json.loads, p.read_text().splitlines())
            if e.get("kind") == "caller_decision"
        ]
        for p in sorted(folder.glob("*.events.jsonl"))
    }


@on_ray
async def test_a_reactive_caller_on_two_nodes_keeps_its_answers_in_the_drivers_cache(
    cluster, tmp_path
) -> None:
    """Its model (rules behind a real HTTP server here) is asked from both nodes; the answers land in the
    driver's cache, from which a rerun replays every decision with the server gone."""
    cache = tmp_path / "llm"

    def caller(base_url: str, mode: str) -> Any:
        return parse_caller(
            "openai:rules", base_url=base_url, cache=mode, cache_dir=cache, persona="patient", max_turns=2
        )

    async with reference_assistant(REFERENCE) as ref:
        config = BenchConfig(
            out=tmp_path / "first", targets=(f"pcm+{ref}",), tts="memory", transcribe=True,
            ray=cluster.address, concurrency=1,
        )  # fmt: skip
        with FakeLLM().respond(scripted_caller.answer) as fake:
            first = dataclasses.replace(config, caller=caller(fake.url, "use"))
            [one] = await run_bench(dialogues(2), first, MemoryTTS(), None, transcriber="memory")
        replay = dataclasses.replace(config, out=tmp_path / "replay", caller=caller(fake.url, "only"))
        [two] = await run_bench(dialogues(2), replay, MemoryTTS(), None, transcriber="memory")
    assert not any(c.failed for c in [*one.calls, *two.calls])
    nodes = json.loads((tmp_path / "first" / "results.json").read_text())["nodes"]
    assert len(nodes) == 2  # one call on each node
    asked = decisions(tmp_path / "first" / one.slug)
    assert all(d and all(source == "llm" for source, _, _ in d) for d in asked.values()), asked
    assert decisions(tmp_path / "replay" / two.slug) == asked  # every answer from the cache, none asked
    keys = {
        e["key"]
        for p in (tmp_path / "first" / one.slug).glob("*.events.jsonl")
        for e in map(json.loads, p.read_text().splitlines())
        if e.get("kind") == "caller_decision"
    }
    assert keys and keys == {p.stem for p in cache.rglob("*.json")}  # kept on the driver, by their keys


def test_a_reactive_caller_without_ears_is_refused_before_anything_starts(tmp_path) -> None:
    deaf = BenchConfig(out=tmp_path, transcribe=False, ray="auto", caller=parse_caller("openai:m"))
    with pytest.raises(ConfigError, match="hears through a transcriber"):
        ray_runner.check_ray_options(deaf, None)
    ray_runner.check_ray_options(dataclasses.replace(deaf, transcribe=True), None)  # fine with ears


class _DeadActor:
    """A worker whose every call fails as Ray fails a call of an actor that died with its node."""

    class call:
        @staticmethod
        async def remote(index: int, job: CallJob) -> Any:
            raise ray.exceptions.RayActorError()


async def test_when_every_node_has_left_the_calls_still_to_make_are_lost_at_once(
    tmp_path, monkeypatch
) -> None:
    """No slot left is no reason to wait for one: the calls fail as ``worker_lost``, saying why."""
    monkeypatch.setattr(ray_runner, "_node_alive", lambda node_id: False)
    slots = [ray_runner._Slot(_DeadActor(), "gone:abc123", "abc123")]
    calls = RayCalls(slots, lambda status: None)
    settings = target_settings(BenchConfig(out=tmp_path), parse_target("pcm+ws://127.0.0.1:9/x"), tmp_path)
    run = TargetRun(settings, ray_runner._no_line)
    jobs = [CallJob(f"r-{i}", d) for i, d in enumerate(dialogues(3))]
    lost = await asyncio.wait_for(asyncio.gather(*(calls.one_of_target(0, run, j) for j in jobs)), 10)
    assert [m.outcome for m in lost] == ["worker_lost"] * 3
    assert "RayActorError" in lost[0].detail and "no worker is left" in lost[1].detail
    assert calls.nodes_left == {"gone:abc123"}


@on_ray
def test_a_driver_killed_with_sigkill_leaves_nothing_running_and_a_rerun_resumes(tmp_path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(json.dumps(short_delivery(f"k-{i}"), ensure_ascii=False) + "\n" for i in range(4))
    )
    out = tmp_path / "run"
    with echo_assistant(300, ["--skip-silence"]) as (echo, _):
        cmd = [
            sys.executable, "-m", "voice.app.cli", "bench", "--ray", "--target", f"pcm+{echo}",
            "--tts", "espeak",
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
