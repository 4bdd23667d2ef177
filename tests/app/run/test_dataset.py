"""``callsim bench``: selection, targets, default concurrency, multi-target runs, resume after kill -9."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.records import short_delivery
from tests.runs import A, B, bench, memory_lines, mini
from tests.ws_fake import FakeServer
from voice.app.run.dataset import (
    BenchConfig,
    default_concurrency,
    run_bench,
    select_dialogues,
    split_values,
    target_slug,
)
from voice.core.caller import CallerTiming
from voice.core.clock import VirtualClock
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.errors import ConfigError
from voice.lines.targets import parse_target
from voice.speech.tts.memory import MemoryTTS


def test_filters_accept_repeats_and_comma_lists_and_refuse_unknown_values():
    ds = load_dialogues(bundled_dialogues_path())
    picked = select_dialogues(
        ds, scenarios=split_values(["taxi,work", "life"]), presets=["regular"], relations=()
    )
    assert picked and {d.scenario for d in picked} <= {"taxi", "work", "life"}
    assert {d.preset.type for d in picked} == {"regular"}
    conflict = select_dialogues(ds, relations=["conflict"])
    assert conflict and all(d.relation == "conflict" for d in conflict)
    with pytest.raises(ConfigError, match="--relation"):
        select_dialogues(ds, relations=["friendly"])
    with pytest.raises(ConfigError, match="no dialogue matches"):
        select_dialogues(ds, ids=["taxi-none-01"], scenarios=["work"])
    assert len(select_dialogues(ds, scenarios=["taxi"], limit=2)) == 2


def test_target_slugs_are_folder_names():
    assert target_slug(parse_target("builtin")) == "builtin"
    assert target_slug(parse_target("ws://127.0.0.1:8765/pcm")) == "pcm-ws-127.0.0.1-8765-pcm"
    long = target_slug(parse_target("pcm+wss://" + "x" * 80 + ".example.com/pcm"))
    assert len(long) <= 60 and "/" not in long


def test_default_concurrency_leaves_the_builtin_assistant_half_the_machine():
    assert default_concurrency([parse_target("builtin")], cpus=8) == 4
    assert default_concurrency([parse_target("builtin")], cpus=1) == 1
    assert default_concurrency([parse_target(A)], cpus=8) == 8
    assert default_concurrency([parse_target(A)], cpus=64) == 16


async def test_two_targets_repeats_and_concurrency_write_per_target_and_run_results(tmp_path):
    ds = [mini(1), mini(2, "takeout", "regular", "conflict", barge=True), mini(3, "taxi", "emergent")]
    results = await bench(tmp_path, ds, repeats=2, seed=5, concurrency=3)
    assert [r.slug for r in results] == ["pcm-ws-a.test-pcm", "pcm-ws-b.test-pcm"]
    run = json.loads((tmp_path / "results.json").read_text())
    assert run["kind"] == "run" and run["calls_per_target"] == 6 and run["concurrency"] == 3
    assert [t["target"] for t in run["targets"]] == [A, B]
    a = json.loads((tmp_path / "pcm-ws-a.test-pcm" / "results.json").read_text())
    assert [c["call_id"] for c in a["calls"]] == ["m-1.r1", "m-2.r1", "m-3.r1", "m-1.r2", "m-2.r2", "m-3.r2"]
    assert a["summary"] == run["targets"][0]["summary"]
    s = a["summary"]
    assert set(s["by_scenario"]) == {"delivery", "takeout", "taxi"}
    assert set(s["by_preset_type"]) == {"none", "regular", "emergent"}
    assert s["by_relation"]["conflict"]["calls"] == 2 and s["by_relation"]["conflict"]["turns"] == 4
    assert s["by_scenario"]["takeout"]["barge_in_success_rate"] == 1.0
    for row in s["by_scenario"].values():
        assert {"latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_mean_ms"} <= set(row)
        assert {"pause_takeover_rate", "backchannel_carry_on_rate", "rhythm_mean"} <= set(row)
    b = json.loads((tmp_path / "pcm-ws-b.test-pcm" / "results.json").read_text())
    assert b["summary"]["latency_ms"]["p50"] > a["summary"]["latency_ms"]["p50"] + 400
    meta = (tmp_path / "pcm-ws-a.test-pcm" / "m-1.r2.events.jsonl").read_text().splitlines()[-1]
    assert json.loads(meta)["repeat"] == 2 and json.loads(meta)["base_seed"] == 5
    assert a["calls"][0]["turns"][0]["heard_text"] == "好的"


async def test_the_same_target_twice_is_refused(tmp_path):
    config = BenchConfig(out=tmp_path, targets=(A, A), tts="memory")
    with pytest.raises(ConfigError, match="twice"):
        await run_bench([mini(1)], config, MemoryTTS(), None)


# --- a real process, killed with SIGKILL mid-run, then resumed ----------------------------------------


def write_dialogues(path, n):
    lines = []
    for i in range(n):
        d = short_delivery(f"k-{i}", pause_before_ms=200)
        lines.append(json.dumps(d, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def bench_cmd(data, out, target):
    return [
        sys.executable, "-m", "voice.app.cli", "bench", "--dialogues", str(data), "--target", target,
        "--out", str(out), "--tts", "memory", "--no-transcribe", "--concurrency", "1", "--audio", "none",
    ]  # fmt: skip


def test_a_run_killed_with_sigkill_resumes_without_redoing_or_counting_half_written_calls(tmp_path):
    data, out = tmp_path / "d.jsonl", tmp_path / "run"
    write_dialogues(data, 3)
    with FakeServer().running() as server:
        folder = out / target_slug(parse_target(server.target))
        first = folder / "k-0.metrics.json"
        proc = subprocess.Popen(
            bench_cmd(data, out, server.target), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert first.exists(), proc.stderr.read().decode() if proc.stderr else ""
        assert not (folder / "results.json").exists()  # the run never finished
        kept = first.read_bytes()
        done_before = {p.name for p in folder.glob("*.metrics.json")}
        assert "k-2.metrics.json" not in done_before
        # what a writer killed mid-write leaves: a temporary file, and maybe a recording without metrics
        (folder / ".k-2.metrics.json.abcd.tmp").write_text('{"call_id": "k-2", "tur')
        again = subprocess.run(bench_cmd(data, out, server.target), capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr.decode()
    err = again.stderr.decode()
    assert "k-0: done earlier, kept" in err
    assert first.read_bytes() == kept  # the finished call was not made again
    results = json.loads((folder / "results.json").read_text())
    assert [c["call_id"] for c in results["calls"]] == ["k-0", "k-1", "k-2"]
    assert all(c["outcome"] == "completed" and c["turns_completed"] == 1 for c in results["calls"])
    assert not list(folder.glob(".*.tmp"))
    run = json.loads((out / "results.json").read_text())
    assert run["targets"][0]["summary"]["calls"] == 3


@pytest.mark.e2e  # a real-time call to the built-in: the e2e layer, one at a time
async def test_the_builtin_assistant_killed_mid_run_stops_it_and_its_call_is_redone(tmp_path):
    """The real built-in assistant (Whisper, Silero) in its child process, killed during the first call:
    that call is recorded as assistant_crashed, the run stops, and a rerun makes it again (a new log)."""
    from pathlib import Path

    from voice.app.run.resume import load_done
    from voice.errors import AssistantCrashed

    def servers() -> set[int]:
        """This process's children that are a built-in assistant (``python -m server``)."""
        return {
            int(pid)
            for children in Path("/proc/self/task").glob("*/children")
            for pid in children.read_text().split()
            if b"\0server\0" in Path(f"/proc/{pid}/cmdline").read_bytes()
        }

    others = servers()  # one the test session shares (running_builtin) is not this run's: left alone

    def kill_the_assistant(status):
        if status.state != "calling":
            return
        for pid in servers() - others:
            os.kill(pid, signal.SIGKILL)

    dialogues = [mini(1), mini(2)]
    # the memory caller's tones get no reply: the rerun's calls end on the first missed one, 1.5 s after it
    quick = CallerTiming(response_timeout_ms=1500.0, max_missed_replies=1)
    config = BenchConfig(
        out=tmp_path, tts="memory", assistant_tts="memory", transcribe=False, concurrency=1, timing=quick
    )
    with pytest.raises(
        AssistantCrashed, match=r"the built-in assistant exited \(code -9; its log: .*assistant.1.log"
    ):
        await run_bench(dialogues, config, MemoryTTS(), None, on_status=kill_the_assistant)
    folder = tmp_path / "builtin"
    crashed = load_done(folder, "m-1")
    assert crashed is not None and crashed["outcome"] == "assistant_crashed" and crashed["failed"]
    assert load_done(folder, "m-2") is None  # never begun: a rerun makes it
    assert "code -9" in json.loads((tmp_path / "results.json").read_text())["partial"]["stopped"]
    results = await run_bench(dialogues, config, MemoryTTS(), None)
    assert [m.outcome for m in results[0].calls] != ["assistant_crashed"] * 2
    assert (tmp_path / "assistant.1.log").exists() and (tmp_path / "assistant.2.log").exists()


# --- credentials: in the URL and in headers, never in a file ----------------------------------------------


def test_a_target_with_credentials_gets_a_redacted_folder_of_its_own_that_a_rerun_finds_again():
    one = target_slug(parse_target("pcm+ws://u:PW@h.test:1/pcm?token=ONE"))
    assert one == target_slug(parse_target("pcm+ws://u:PW@h.test:1/pcm?token=ONE"))  # stable: a rerun resumes
    assert one != target_slug(parse_target("pcm+ws://u:PW@h.test:1/pcm?token=TWO"))  # distinct targets
    assert one.startswith("pcm-ws-h.test-1-pcm-token-") and "pw" not in one and "one" not in one
    assert len(one) <= 60


async def test_credentials_and_header_values_are_in_no_file_and_a_rerun_resumes(tmp_path):
    targets = ("pcm+ws://u:PW9@a.test/pcm?token=ONE1", "pcm+ws://u:PW9@a.test/pcm?token=TWO2")
    shown = str(parse_target(targets[0]))
    assert shown == str(parse_target(targets[1])) == "pcm+ws://***@a.test/pcm?token=***"
    config = BenchConfig(
        out=tmp_path, targets=targets, tts="memory", headers=(("Authorization", "Bearer HDR7"),)
    )

    async def run():
        notes = []
        await run_bench(
            [mini(1)],
            config,
            MemoryTTS(),
            None,
            new_clock=VirtualClock,
            on_status=lambda s: notes.append(s.detail) if s.state == "note" else None,
            line_factories={shown: memory_lines(300)},
        )
        return notes

    assert await run() == []
    folders = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert len(folders) == 2
    for path in tmp_path.rglob("*"):
        data = path.name.encode() + (path.read_bytes() if path.is_file() else b"")
        for secret in (b"PW9", b"ONE1", b"TWO2", b"HDR7", b"dTpQVzk"):  # dTpQVzk: base64 of u:PW9
            assert secret not in data, (path, secret)
    fingerprint = json.loads((folders[0] / "run.json").read_text())["settings"]
    assert fingerprint["target"] == shown and fingerprint["headers"] == ["Authorization"]
    notes = await run()  # the same URLs: each finds its folder and keeps its call
    assert len(notes) == 2 and all(n.startswith("resuming: kept 1") for n in notes)


async def test_the_same_target_twice_is_told_apart_by_its_full_url_not_its_printed_name(tmp_path):
    same = "pcm+ws://a.test/pcm?token=ONE"
    config = BenchConfig(out=tmp_path, targets=(same, same), tts="memory")
    with pytest.raises(ConfigError, match="twice"):
        await run_bench([mini(1)], config, MemoryTTS(), None)
