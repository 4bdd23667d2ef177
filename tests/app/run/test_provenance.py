"""Provenance: gathered from the real git checkout, package metadata and /proc/cpuinfo (or a given text),
the speed index replaced by a fake where it is not the subject (its own tests: test_speed_index.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests.runs import bench, mini
from voice.app.run.provenance import (
    SIMD_FLAGS,
    announce,
    bench_provenance,
    callsim_state,
    describe,
    gather,
    machine,
    package_versions,
    redact_command,
)
from voice.app.run.speed_index import ENV
from voice.metrics.model.provenance_record import SpeedIndexRecord

EPYC = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c avx512f avx512_vnni avx_vnni aes rdrand

processor\t: 1
model name\t: AMD EPYC
flags\t\t: fpu sse
"""
FAKE_INDEX = SpeedIndexRecord(0.7, {"whisper_base_30s_s": 0.7}, {}, "d")


def test_the_machine_is_the_first_cpus_model_and_its_simd_flags_in_a_fixed_order():
    m = machine(EPYC, cpus=2, usable=1)
    assert m["cpu_model"] == "AMD EPYC"
    assert m["cpu_flags"] == [
        "sse4_1",
        "sse4_2",
        "avx",
        "avx2",
        "fma",
        "f16c",
        "avx512f",
        "avx512_vnni",
        "avx_vnni",
    ]
    assert (m["cpus"], m["cpus_usable"]) == (2, 1)
    assert m["python"].count(".") == 2


def test_this_machines_cpu_is_read_from_proc_cpuinfo():
    m = machine(Path("/proc/cpuinfo").read_text())
    assert m["cpu_model"] and m["cpus"] >= 1 and set(m["cpu_flags"]) <= set(SIMD_FLAGS)
    assert machine("")["cpu_flags"] == []  # no /proc (macOS): no flags, not an error


def test_callsim_state_names_this_checkouts_commit_and_whether_it_is_dirty():
    root = Path(__file__).resolve().parents[3]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    state = callsim_state(root).to_json()
    assert state["version"] == package_versions(["callsim"])["callsim"]
    assert state["commit"] == head.stdout.strip() and isinstance(state["dirty"], bool)


def test_callsim_state_outside_a_checkout_has_no_commit(tmp_path):
    assert (
        callsim_state(tmp_path).to_json()["commit"] is None
        and callsim_state(tmp_path).to_json()["dirty"] is None
    )


def test_package_versions_are_the_installed_ones_and_none_when_missing():
    versions = package_versions(["numpy", "faster-whisper", "no-such-package-callsim"])
    assert re.fullmatch(r"\d+\.\d+.*", versions["numpy"]) and versions["faster-whisper"]
    assert versions["no-such-package-callsim"] is None


def test_the_command_line_hides_header_values_url_credentials_and_secret_options():
    argv = ["/usr/bin/callsim", "bench", "--header", "Authorization: Bearer abc", "--header=X-Key: k2"]
    argv += [
        "--target",
        "ws://user:pw@bot/x?token=t1&lang=zh",
        "--token",
        "s3",
        "--api-key=s4",
        "--limit",
        "6",
    ]
    shown = redact_command(argv)
    assert shown[:4] == ["/usr/bin/callsim", "bench", "--header", "Authorization: ***"]
    assert shown[4] == "--header=X-Key: ***"
    assert shown[6] == "ws://***@bot/x?token=***&lang=zh"
    assert shown[7:] == ["--token", "***", "--api-key=***", "--limit", "6"]
    assert not any(s in " ".join(shown) for s in ("abc", "k2", "pw", "t1", "s3", "s4"))


def test_gather_calls_each_source_once_and_skips_the_speed_index_when_asked():
    asked = []

    def index():
        asked.append(1)
        return FAKE_INDEX

    prov = gather(
        ["/x/callsim", "run"], measure=index, cpuinfo=lambda: EPYC, now=lambda: "2026-12-03T08:00:00Z"
    ).to_json()
    assert prov["command"] == ["callsim", "run"] and prov["date_utc"] == "2026-12-03T08:00:00Z"
    assert prov["speed_index"] == FAKE_INDEX.to_json() and asked == [1]
    assert prov["machine"]["cpu_model"] == "AMD EPYC" and prov["packages"]["faster-whisper"]
    assert set(prov) == {"callsim", "command", "date_utc", "packages", "machine", "speed_index"}
    assert gather(["callsim"], speed_index=False, measure=index).to_json()[
        "speed_index"
    ] is None and asked == [1]


def test_the_environment_variable_off_skips_the_speed_index(monkeypatch):
    monkeypatch.setenv("CALLSIM_SPEED_INDEX", "off")  # the tests' default: no Whisper loaded here
    assert gather(["callsim"]).to_json()["speed_index"] is None


def test_describe_is_one_line_with_commit_cpu_index_and_date():
    prov = gather(["callsim"], measure=lambda: FAKE_INDEX, cpuinfo=lambda: EPYC, now=lambda: "D").to_json()
    prov["callsim"] = {"version": "0.1.0", "commit": "b440fa3deadbeef", "dirty": True}
    line = describe(prov)
    assert line.startswith("CallSim 0.1.0 (b440fa3, dirty) · AMD EPYC (")
    assert "avx2 avx512f avx512_vnni avx_vnni" in line and "speed index 0.70 s · D" in line
    assert "no speed index" in describe({**prov, "speed_index": None}) and "\n" not in line


def test_announce_prints_the_line_on_stdout_or_on_stderr_beside_json(capsys):
    prov = announce(["scripts/bench_x", "--json"], json_out=True)
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"provenance: {describe(prov)}"
    announce(["scripts/bench_x"], speed_index=False)
    assert capsys.readouterr().out.startswith("provenance: CallSim ")


async def test_a_bench_run_writes_the_same_provenance_in_the_run_and_every_target(tmp_path):
    await bench(tmp_path, [mini(1)])
    run = json.loads((tmp_path / "results.json").read_text())
    targets = [json.loads(p.read_text()) for p in tmp_path.glob("*/results.json")]
    assert len(targets) == 2 and all(t["provenance"] == run["provenance"] for t in targets)
    assert run["provenance"]["speed_index"] is None  # off in the tests
    assert run["provenance"]["callsim"]["version"] and run["provenance"]["date_utc"].endswith("Z")


def test_a_bench_announces_with_its_own_name_then_turns_the_index_off_for_its_runs(monkeypatch, capsys):
    measured = []
    monkeypatch.setenv(ENV, "whisper")
    monkeypatch.setattr("voice.app.run.provenance.speed_index_now", lambda: measured.append(1) or None)
    prov = bench_provenance("scripts/bench_x", ["--json"], json_out=True)
    assert prov["command"] == ["scripts/bench_x", "--json"]
    assert "measuring the speed index" in capsys.readouterr().err
    assert os.environ[ENV] == "off" and measured == [1]  # its runs and children measure none again


ROOT = Path(__file__).resolve().parents[3]


def test_every_bench_script_records_its_provenance():
    for script in sorted((ROOT / "scripts").glob("bench_*")):
        text = script.read_text(encoding="utf-8")
        module = re.search(r"^exec .*-m ([\w.]+)", text, re.M)
        source = (ROOT / (module[1].replace(".", "/") + ".py")).read_text() if module else text
        assert f'bench_provenance("scripts/{script.name}"' in source, script.name
