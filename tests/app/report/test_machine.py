"""Two runs' machines: the speed-index warning of ``callsim compare`` (printed, in its text and JSON), and
the provenance rows of the report, on real runs made on virtual time with the provenance they recorded."""

import json
from dataclasses import replace

import pytest

from tests.runs import bench, mini
from voice.app.cli import main
from voice.app.report.compare import compare_sides, pick_sides
from voice.app.report.comparison import format_comparison
from voice.app.report.data import load_run, run_settings
from voice.app.report.machine import SPEED_TOLERANCE, compare_speed, provenance_rows, speed_seconds
from voice.metrics.model.jsonio import Fields
from voice.metrics.model.provenance_record import Provenance


def prov_doc(seconds, cpu="AMD EPYC"):
    index = None if seconds is None else {"seconds": seconds, "components": {"whisper_base_30s_s": seconds}}
    return {"machine": {"cpu_model": cpu, "cpus": 2, "cpus_usable": 2}, "speed_index": index, "date_utc": "D"}


def prov(seconds, cpu="AMD EPYC"):
    return typed(prov_doc(seconds, cpu))


def typed(doc):
    return Provenance.from_json(Fields(doc))


def test_indices_within_20_percent_are_alike_and_further_apart_warn_naming_the_slower():
    assert compare_speed(prov(1.0), prov(1.0 + SPEED_TOLERANCE - 0.01))["warning"] is None
    far = compare_speed(prov(0.7), prov(0.95, "Intel Xeon"))
    assert far["apart"] == pytest.approx(0.357, abs=1e-3) and far["cpu_model"] == ["AMD EPYC", "Intel Xeon"]
    assert "differ by 36 %" in far["warning"] and "B's machine was slower" in far["warning"]
    assert "A's machine was slower" in compare_speed(prov(2.0), prov(1.0))["warning"]


def test_a_side_without_an_index_is_said_and_one_run_needs_none():
    assert compare_speed(prov(1.0), prov(None))["warning"].startswith("B has no speed index")
    assert compare_speed(None, prov(1.0))["warning"].startswith("A has no speed index")
    assert compare_speed(None, None)["warning"].startswith("A and B have no speed index")
    same = prov(None)
    assert compare_speed(same, replace(same))["warning"] is None  # two targets of one run: one machine
    assert speed_seconds(prov(0.5)) == 0.5 and speed_seconds(typed({"speed_index": None})) is None


def test_the_report_rows_name_callsim_command_machine_index_and_packages():
    p = {
        **prov_doc(0.7),
        "callsim": {"version": "0.1.0", "commit": "b440fa3deadbeef0", "dirty": True},
        "command": ["callsim", "bench", "--limit", "6"],
        "packages": {"faster-whisper": "1.2.1", "ray": None},
    }
    p["machine"]["cpu_flags"] = ["avx2", "avx512f"]
    p["speed_index"]["definition"] = "median of 3"
    rows = dict(provenance_rows(typed(p)))
    assert rows["CallSim"] == "0.1.0, commit b440fa3deadb (uncommitted changes)"
    assert rows["command"] == "callsim bench --limit 6" and rows["started (UTC)"] == "D"
    assert rows["machine"] == "AMD EPYC, 2 of 2 CPUs; avx2 avx512f"
    assert rows["speed index"].startswith("0.70 s (whisper_base_30s_s 0.70 s; median of 3)")
    assert rows["packages"] == "faster-whisper 1.2.1"
    assert provenance_rows(None) == [("provenance", "not recorded (a run made before CallSim recorded it)")]


@pytest.fixture
async def two_runs(tmp_path):
    """Two runs of the same dialogues, their recorded speed indices then set 0.7 s and 1.0 s apart."""
    folders = []
    for name, seconds in (("a", 0.7), ("b", 1.0)):
        out = tmp_path / name
        await bench(out, [mini(i) for i in range(3)])
        for f in [out / "results.json", *out.glob("*/results.json")]:
            doc = json.loads(f.read_text())
            doc["provenance"]["speed_index"] = {
                "seconds": seconds,
                "components": {},
                "runs": {},
                "definition": "",
            }
            f.write_text(json.dumps(doc))
        folders.append(out / "pcm-ws-a.test-pcm")
    return folders


async def test_compare_warns_in_its_json_its_text_and_on_stderr(two_runs, tmp_path, capsys):
    a, b = pick_sides(*two_runs)
    doc = compare_sides(a, b, n_resamples=100)
    assert doc["speed_index"]["a"] == 0.7 and doc["speed_index"]["b"] == 1.0
    assert "differ by 43 %" in doc["speed_index"]["warning"]
    assert f"WARNING: {doc['speed_index']['warning']}" in format_comparison(doc)
    out = tmp_path / "cmp.json"
    assert main(["compare", *map(str, two_runs), "--json", str(out), "--resamples", "100"]) == 0
    printed = capsys.readouterr()
    assert "differ by 43 %" in printed.out and "callsim: warning: the machines' speed indices" in printed.err
    assert json.loads(out.read_text())["speed_index"]["warning"] == doc["speed_index"]["warning"]


async def test_the_report_settings_carry_the_runs_provenance(two_runs):
    rows = dict(run_settings(load_run(two_runs[0].parent)))
    assert rows["speed index"].startswith("0.70 s") and rows["command"]
    assert rows["started (UTC)"].endswith("Z") and "faster-whisper" in rows["packages"]
