import dataclasses
import json
import re
from pathlib import Path

import pytest

from tests.reactive_runs import reactive_bench
from tests.runs import bench, mini
from voice.app.run.ray_runner import NodeStats
from voice.errors import RecordingError
from voice.metrics.call_metrics import BargeIn, CallMetrics, TurnMetrics
from voice.metrics.figures import FIGURES, figures
from voice.metrics.goal import CallerGoal, CallerWait
from voice.metrics.model.call_record import call_to_json
from voice.metrics.model.jsonio import METRICS_SCHEMA, RESULTS_SCHEMA
from voice.metrics.model.run_results import read_results
from voice.metrics.results import (
    breakdown,
    format_table,
    pacing_text,
    summarize,
    summarize_run,
    turns_reached,
)


def turn(i, latency, barge=None, pause=None):
    return TurnMetrics(
        turn=i,
        mode="after_reply",
        text="你好",
        caller_start_ms=0.0,
        caller_end_ms=1000.0,
        reply_onset_ms=None if latency is None else 1000.0 + latency,
        latency_ms=latency,
        overlap_ms=0.0,
        barge_in=barge,
        pause_takeover=pause,
    )


def calls():
    ok = BargeIn(at_ms=5.0, active=True, stop_latency_ms=300.0, success=True)
    bad = BargeIn(at_ms=5.0, active=True, stop_latency_ms=None, success=False)
    inactive = BargeIn(at_ms=5.0, active=False, stop_latency_ms=0.0, success=False)
    a = CallMetrics(
        "外卖-1",
        "a",
        "completed",
        False,
        9000.0,
        80.0,
        [turn(0, 1000.0), turn(1, 2000.0, ok), turn(2, None, inactive)],
        3,
    )
    b = CallMetrics("b", "b", "assistant_silent", True, 9000.0, None, [turn(0, 3000.0, bad, pause=True)], 1)
    return [a, b]


def test_summary_pools_turns_across_calls():
    s = summarize(calls()).to_json()
    assert s["calls"] == 2 and s["calls_failed"] == 1
    assert s["caller_turns"] == 4 and s["caller_turns_spoken"] == 4 and s["turns_completed"] == 3
    assert s["latency_ms"]["p50"] == 2000.0 and s["latency_ms"]["mean"] == 2000.0
    assert s["barge_in"]["n"] == 2 and s["barge_in"]["successes"] == 1  # the inactive one does not count
    assert s["barge_in"]["stop_latency_p50_ms"] == 300.0
    assert s["barge_in"]["never_stopped"] == 1  # the failed call's: no stop latency to pool
    assert s["pause_takeover_rate"] == 1.0


def test_p95_sits_between_p90_and_p99_for_latency_and_stop_latency():
    stops = [BargeIn(5.0, True, float(ms), ms <= 1500) for ms in range(100, 2100, 100)]  # 100..2000 ms
    c = CallMetrics(
        "c", "c", "completed", False, 9e4, None, [turn(i, 100.0 * i, b) for i, b in enumerate(stops)]
    )
    s, f = summarize([c]).to_json(), figures([c])
    lat = s["latency_ms"]
    assert lat["p90"] < lat["p95"] < lat["p99"] and lat["p95"] == pytest.approx(1805.0)
    assert f["latency_p95_ms"] == lat["p95"]
    b = s["barge_in"]
    assert (b["stop_latency_p50_ms"], b["stop_latency_p90_ms"], b["stop_latency_p95_ms"]) == pytest.approx(
        (1050.0, 1810.0, 1905.0)
    )
    assert [x.key for x in FIGURES][1:4] == ["latency_p90_ms", "latency_p95_ms", "latency_p99_ms"]


def test_table_has_a_row_per_call_and_an_overall_row_aligned_for_cjk():
    text = format_table(calls(), summarize(calls()))
    lines = text.splitlines()
    assert lines[0].startswith("call") and lines[-1].startswith("ALL")
    assert any("外卖-1" in x and "1500" in x for x in lines)  # p50 of 1000 and 2000
    assert "(FAILED)" in text and "1/2" in lines[-1]
    # CJK takes two columns: the outcome column starts at the same display column in every row
    assert len({x.index("completed") + x.count("外") + x.count("卖") for x in lines if "completed" in x}) == 1


def test_the_table_says_how_many_caller_turns_were_reached_of_those_planned():
    a, b = calls()
    hung_up = dataclasses.replace(b, call_id="h", caller_turns_planned=3)  # one turn said of three
    lines = format_table([a, hung_up], summarize([a, hung_up])).splitlines()
    assert lines[0].split()[:5] == ["call", "outcome", "answered", "caller", "turns"]
    assert "1 reached of 3 planned" in next(x for x in lines if x.startswith("h "))
    assert "  3  " in next(x for x in lines if x.startswith("外卖-1"))  # every planned turn said: the count
    assert "4 reached of 6 planned" in lines[-1]
    assert turns_reached(2, 2) == "2" and turns_reached(0, 2) == "0 reached of 2 planned"


def test_callsims_own_pacing_is_pooled_over_the_calls_that_measured_it_and_flagged_over_5_ms():
    a, b = calls()
    assert summarize([a, b]).to_json()["pacing_late_ms"] == {
        "p99_worst": None,
        "max": None,
        "calls_over_bound": 0,
    }
    assert "caller pacing" not in format_table([a, b], summarize([a, b]))  # nothing measured: no line
    a = dataclasses.replace(a, pacing_late_ms={"p50": 0.1, "p99": 0.4, "max": 2.0})
    b = dataclasses.replace(b, pacing_late_ms={"p50": 0.2, "p99": 7.5, "max": 93.0})
    p = summarize([a, b]).to_json()["pacing_late_ms"]
    assert p == {"p99_worst": 7.5, "max": 93.0, "calls_over_bound": 1}
    assert (
        pacing_text(summarize([a, b]).pacing_late_ms)
        == "p99 7.5 ms, max 93 ms (FLAGGED: p99 over 5 ms in 1 call(s))"
    )
    line = format_table([a, b], summarize([a, b])).splitlines()[-1]
    assert (
        line.startswith("caller pacing (how late CallSim itself sent the caller's audio")
        and "max 93 ms" in line
    )
    assert call_to_json(b)["pacing_late_ms"]["max"] == 93.0


def test_call_json_carries_derived_figures():
    d = call_to_json(calls()[0])
    assert d["schema_version"] == METRICS_SCHEMA == "callsim.metrics/1"
    assert d["turns_completed"] == 2 and d["latency_p50_ms"] == 1500.0
    assert d["turns"][1]["barge_in"]["success"] is True


def test_figures_agree_with_the_summary_they_sit_next_to():
    s, f = summarize(calls()).to_json(), figures(calls())
    assert f["latency_p50_ms"] == s["latency_ms"]["p50"] and f["latency_mean_ms"] == s["latency_ms"]["mean"]
    assert f["barge_in_success_rate"] == s["barge_in"]["success_rate"] == 0.5
    assert f["pause_takeover_rate"] == s["pause_takeover_rate"]
    assert f["answered_rate"] == 3 / 4  # 3 of 4 planned turns answered
    assert f["calls"] == 2 and f["turns"] == 4
    assert {x.key for x in FIGURES} <= set(f)


def test_breakdowns_group_calls_by_their_labels():
    labels = [
        {"scenario": "takeout", "preset_type": "regular", "relation": "conflict"},
        {"scenario": "taxi", "preset_type": "regular", "relation": "alignment"},
    ]
    by = breakdown(calls(), labels, "scenario")
    assert list(by) == ["takeout", "taxi"]
    assert by["takeout"]["calls"] == 1 and by["takeout"]["latency_p50_ms"] == 1500.0
    assert by["taxi"]["barge_in_success_rate"] == 0.0
    s = summarize_run(calls(), labels).to_json()
    assert s["by_preset_type"]["regular"]["calls"] == 2
    assert set(s["by_relation"]) == {"conflict", "alignment"}
    assert s["figures"] == figures(calls()).to_json()


def test_call_json_carries_its_labels():
    d = call_to_json(calls()[0], {"scenario": "takeout", "repeat": 2})
    assert d["scenario"] == "takeout" and d["repeat"] == 2


# --- the reactive caller's goal ----------------------------------------------------------------------------


def reactive(met, time_ms=20000.0, turns=3, **more):
    return CallerGoal(met, "理由", turns, time_ms, **more)


def goal_calls():
    """Three reactive calls (yes, partly, no) with personas; the scripted ``calls()`` have no goal."""
    a, b = calls()
    c = CallMetrics("c", "c", "completed", False, 9000.0, None, [turn(0, 500.0)], 1)
    out = [
        dataclasses.replace(a, goal=reactive("yes", 10000.0, 2, caller_late_ms=300.0)),
        dataclasses.replace(b, goal=reactive("partly", 30000.0, 4, caller_fallbacks=1)),
        dataclasses.replace(c, goal=reactive("no", 20000.0, 3, caller_rejected=2)),
    ]
    labels = [
        {"scenario": "takeout", "preset_type": "regular", "relation": "conflict", "persona": "patient"},
        {"scenario": "taxi", "preset_type": "regular", "relation": "alignment", "persona": "terse"},
        {"scenario": "taxi", "preset_type": "none", "relation": "alignment", "persona": "terse"},
    ]
    return out, labels


def test_a_call_json_has_a_goal_object_only_with_a_reactive_caller():
    assert call_to_json(calls()[0])["goal"] is None
    ms, labels = goal_calls()
    d = call_to_json(ms[0], labels[0])
    assert d["goal"]["met"] == "yes" and d["goal"]["time_ms"] == 10000.0 and d["goal"]["turns"] == 2
    assert d["goal"]["caller_late_ms"] == 300.0 and d["goal"]["decisions"] == [] and d["persona"] == "patient"


def test_a_reactive_runs_summary_has_a_goal_block_figures_and_a_persona_breakdown():
    scripted = summarize_run(calls(), [{"scenario": "x"}] * 2).to_json()
    assert "goal" not in scripted and "by_persona" not in scripted
    assert scripted["figures"]["goal_met_rate"] is None and scripted["figures"]["goal_time_p50_ms"] is None
    ms, labels = goal_calls()
    s = summarize_run(ms, labels).to_json()
    g = s["goal"]
    assert g["calls"] == g["calls_with_verdict"] == 3 and g["verdicts"]["partly"] == 1
    assert g["goal_met_rate"] == s["figures"]["goal_met_rate"] == pytest.approx(1 / 3)
    assert s["figures"]["goal_met_or_partly_rate"] == pytest.approx(2 / 3)
    assert s["figures"]["goal_time_p50_ms"] == g["time_p50_ms"] == 20000.0
    assert s["figures"]["goal_turns_mean"] == g["turns_mean"] == 3.0
    assert (g["caller_late_ms_total"], g["caller_fallbacks"], g["caller_rejected"]) == (300.0, 1, 2)
    assert (
        s["by_scenario"]["taxi"]["goal_met_rate"] == 0.0 and s["by_scenario"]["takeout"]["goal_met_rate"] == 1
    )
    assert list(s["by_persona"]) == ["patient", "terse"]
    assert s["by_persona"]["terse"]["goal_met_or_partly_rate"] == 0.5
    assert s["by_preset_type"]["none"]["goal_time_p50_ms"] == 20000.0


def test_the_table_of_a_reactive_run_shows_each_verdict_and_a_goal_line():
    assert "goal" not in format_table(calls(), summarize(calls())).splitlines()[0]
    ms, _ = goal_calls()
    lines = format_table(ms, summarize(ms)).splitlines()
    assert lines[0].split()[-1] == "goal"
    assert lines[2].rstrip().endswith("yes") and lines[3].rstrip().endswith("partly")
    all_row = next(x for x in lines if x.startswith("ALL"))
    assert all_row.endswith("33% met")
    assert lines[-2].startswith("caller goal (its own verdict): met 1/3 (33%), partly 1, no 1, unknown 0")
    assert lines[-1].startswith("caller itself: 0.3 s late")


def test_results_of_a_newer_schema_or_another_kind_are_refused(tmp_path):
    path = tmp_path / "results.json"
    for version in (RESULTS_SCHEMA, None, "callsim.results/0"):  # None: written before versioning
        doc = {"kind": "target", "calls": []} | ({"schema_version": version} if version else {})
        path.write_text(json.dumps(doc))
        assert read_results(tmp_path)["kind"] == "target"
    for version, why in (("callsim.results/2", "upgrade CallSim"), ("callsim.metrics/1", "not a version")):
        path.write_text(json.dumps({"schema_version": version, "kind": "target", "calls": []}))
        with pytest.raises(RecordingError, match=why):
            read_results(tmp_path)


# --- docs/results.md names every key a run writes ------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "results.md"
# keyed by a name: ``*``
GROUPED = {
    "by_scenario", "by_preset_type", "by_relation", "by_persona", "by_voice", "by_sex",
    "rhythm_histogram", "records_capped",
    "reasons",
    "packages", "components", "runs",
    "dimensions",
}  # fmt: skip
SECTIONS = {  # heading start → what it documents
    "The run's `results.json`": "run",
    "A target's `results.json`": "target",
    "Provenance": "provenance",
    "The summary": "summary",
    "A figures row": "figures",
    "A call": "call",
}
# what `callsim score` adds to a target's results.json (checked by tests/app/run/test_score.py)
SCORED_ONLY = {
    "judge_coverage",
    *(f"judge_coverage.{k}" for k in ("judge", "calls", "dimensions", "dimensions.*")),
}
SCORED_ONLY |= {f"judge_coverage.dimensions.*.{k}" for k in ("judged", "not_judged", "no_grounds")}
OPTIONAL = {  # built-in / Twilio targets only; --header; --ray; a bot that floods records
    "target": {"settings.assistant_tts", "settings.line.codec", "settings.headers", "partial", *SCORED_ONLY},
    "run": {"ray", "nodes", *(f"nodes[].{k}" for k in NodeStats("n").summary().to_json()), "partial"},
    "call": {"node"},
    # only when CallSim failed on a call (checked by tests/metrics/test_simulator.py's run)
    "summary": {
        "simulator_failures.reasons.*",
        *(f"simulator_failures.reasons.*.{k}" for k in ("count", "calls", "meaning", "detail")),
    },
    # the speed index is off in the tests (tests/conftest.py): its keys are checked on a real one in
    # tests/app/run/test_speed_index.py
    "provenance": {"speed_index.seconds", "speed_index.components", "speed_index.components.*"}
    | {"speed_index.runs", "speed_index.runs.*", "speed_index.definition"},
}
REACTIVE_ONLY = {  # what only a run with a reactive caller writes (checked by the reactive run's test)
    "target": {
        "settings.caller",
        "settings.persona",
        "settings.caller_prompt",
        "settings.caller_max_turns",
        "settings.caller_early_ms",
        "settings.caller_voicing",
    },
    "summary": {"by_persona", "by_persona.*", "goal", "goal.verdicts"},
    "call": {"caller", "persona"},
}
VOICED_ONLY = {  # what only a run with --voices writes (checked by the voiced run's test)
    "run": {"voices", "caller_speed"},
    "target": {"settings.voices", "settings.caller_speed"},
    "summary": {"by_voice", "by_voice.*", "by_sex", "by_sex.*", "worst_voice", "worst_voice.of"}
    | {"worst_voice.of.*", "worst_voice.voice", "worst_voice.voices"},
    "figures": {"ci95", "ci95.latency_p50_ms", "ci95.latency_p90_ms", "ci95.answered_rate"}
    | {"ci95.barge_in_success_rate", "ci95.rhythm_mean"},
    "call": {"voice", "voice_sex", "caller_speed"},
}


def key_paths(obj, prefix=""):
    """Every key path of a JSON value: ``a.b``, ``a[].b`` for list elements, ``a.*`` under grouped keys."""
    out = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            path = (f"{prefix}." if prefix else "") + ("*" if prefix.rsplit(".", 1)[-1] in GROUPED else k)
            out |= {path} | key_paths(v, path)
    elif isinstance(obj, list):
        for v in obj:
            out |= key_paths(v, prefix + "[]")
    return out


def documented() -> dict[str, set[str]]:
    """The keys named in the first column of each section's tables."""
    found: dict[str, set[str]] = {s: set() for s in SECTIONS.values()}
    section = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("# ")
            section = next((s for head, s in SECTIONS.items() if title.startswith(head)), section)
        elif line.startswith("| `") and section is not None:
            found[section] |= set(re.findall(r"`([^`]+)`", line.split(" | ")[0]))
    return found


def route(section: str, path: str) -> tuple[str, str]:
    """Where docs/results.md documents key ``path`` of a ``section`` object: the section, the key there."""
    for parent, inside in (("run", "targets[].summary."), ("target", "summary.")):
        if section == parent and path.startswith(inside):
            return route("summary", path.removeprefix(inside))
    head, _, rest = path.partition(".")
    if section in ("run", "target") and head == "provenance" and rest:
        return "provenance", rest
    if section == "target" and head == "calls[]" and rest:
        return "call", rest
    if section == "summary" and head == "figures" and rest:
        return "figures", rest
    if section == "summary" and head == "goal" and rest:
        return "summary", path  # documented in full in the summary's table
    if section == "summary" and head == "worst_voice" and rest in {f.key for f in FIGURES}:
        return "figures", rest  # the worst voice's value of each figure
    if section == "summary" and head == "worst_voice" and rest.startswith("of."):
        return "summary", "worst_voice.of.*"
    if section == "summary" and head in GROUPED - {"rhythm_histogram"} and rest.startswith("*."):
        return "figures", rest.removeprefix("*.")
    return section, path


def reactive_only(docs: dict[str, set[str]]) -> dict[str, set[str]]:
    """Documented keys that only a reactive run writes: the ones above, and everything under them."""
    out = {s: set(REACTIVE_ONLY.get(s, set())) for s in SECTIONS.values()}
    out["summary"] |= {k for k in docs["summary"] if k.startswith("goal.")}
    out["call"] |= {k for k in docs["call"] if k == "goal" or k.startswith("goal.")}
    return out


def written(run_dir: Path) -> dict[str, set[str]]:
    """The keys a run wrote, by the section of docs/results.md that must name them."""
    files = [("run", run_dir / "results.json")]
    for target in ("pcm-ws-a.test-pcm", "pcm-ws-b.test-pcm"):
        files += [("target", run_dir / target / "results.json")]
        files += [("call", f) for f in (run_dir / target).glob("*.metrics.json")]
    out: dict[str, set[str]] = {s: set() for s in SECTIONS.values()}
    for section, f in files:
        for path in key_paths(json.loads(f.read_text())):
            where, key = route(section, path)
            out[where].add(key)
    return out


async def test_docs_results_md_names_every_key_a_run_writes_and_no_other(tmp_path):
    ds = [mini(1, pause=True), mini(2, barge=True), mini(3, backchannel=True)]
    await bench(tmp_path, ds, heard=("快递到了",), concurrency=3)
    docs, keys = documented(), written(tmp_path)
    for section in SECTIONS.values():
        assert keys[section], section
        assert not keys[section] - docs[section], f"{section}: not in docs/results.md"
        unwritten = (
            docs[section] - keys[section] - OPTIONAL.get(section, set()) - reactive_only(docs)[section]
        )
        assert not unwritten - VOICED_ONLY.get(section, set()), f"{section}: never written"
    run = json.loads((tmp_path / "results.json").read_text())
    target = json.loads((tmp_path / "pcm-ws-a.test-pcm" / "results.json").read_text())
    call = json.loads((tmp_path / "pcm-ws-a.test-pcm" / "m-1.metrics.json").read_text())
    assert run["schema_version"] == target["schema_version"] == RESULTS_SCHEMA == "callsim.results/1"
    assert call["schema_version"] == target["calls"][0]["schema_version"] == METRICS_SCHEMA
    assert f"`{RESULTS_SCHEMA}`" in DOC.read_text() and f"`{METRICS_SCHEMA}`" in DOC.read_text()


async def test_docs_results_md_names_every_key_a_run_with_voices_writes(tmp_path):
    from voice.speech.tts.memory import MemoryTTS
    from voice.speech.voices import VoiceBank

    bank = VoiceBank(lambda name, speed: MemoryTTS())
    await bench(
        tmp_path, [mini(1), mini(2, barge=True), mini(3)], tts=bank, voices="all", caller_speed="0.9-1.1"
    )
    docs, keys = documented(), written(tmp_path)
    for section in SECTIONS.values():
        assert not keys[section] - docs[section], f"{section}: not in docs/results.md"
        assert VOICED_ONLY.get(section, set()) <= keys[section], section


async def test_docs_results_md_names_every_key_a_reactive_run_writes(tmp_path, no_openai_env):
    await reactive_bench(tmp_path, [mini(1), mini(2, "takeout", "regular", "conflict")])
    docs, keys = documented(), written(tmp_path)
    for section in SECTIONS.values():
        assert not keys[section] - docs[section], f"{section}: not in docs/results.md"
        # a caller never late writes no waits: their keys are the fields of CallerWait
        waits = (
            {f"goal.waits[].{f.name}" for f in dataclasses.fields(CallerWait)} if section == "call" else set()
        )
        assert reactive_only(docs)[section] <= keys[section] | OPTIONAL.get(section, set()) | waits, section
