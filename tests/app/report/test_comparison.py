"""The comparison document of ``callsim compare`` and its text table, on a document built by hand: each
row as the table prints it, the warnings under it, and the document's keys in the order it writes them."""

from voice.app.report.comparison import Block, Comparison, diff_row, format_comparison, small_n_warnings
from voice.metrics.bootstrap import Difference
from voice.metrics.model.jsonio import as_json_object, json_bytes


def block(calls: list[int], *, small_n: bool = False) -> Block:
    latency = {
        "key": "latency_p50_ms",
        "label": "latency p50",
        "unit": "ms",
        "a": 300.0,
        "b": 900.0,
        "diff": 600.0,
        "ci": [550.0, 650.0],
        "significant": not small_n,
        "n_calls_with_values": calls,
    }
    served = {**latency, "key": "served_rate", "label": "served", "unit": "rate", "a": 1.0, "b": 0.5}
    served |= {"diff": -0.5, "ci": [None, None], "significant": False, "n_calls_with_values": [1, 1]}
    return {"calls": calls, "paired": True, "small_n": small_n, "figures": [latency, served]}


def comparison() -> Comparison:
    safety = diff_row(Difference(4.0, 3.5, -0.5, -0.9, -0.1, 3, 3, True))
    met = diff_row(Difference(0.5, 1.0, 0.5, None, None, 1, 1, True))
    head = {
        "a": {"name": "A-bot", "folder": "runs/a"},
        "b": {"name": "B-bot", "folder": "runs/b"},
        "resamples": 200,
        "seed": 0,
        "level": 0.95,
        "min_n": 5,
        "mismatch": ["network: line.effects.jitter_ms: 0 → 40"],
        "simulator_failures": [0, 1],
        "speed_index": {"a": 0.7, "b": 1.0, "apart": 0.4286, "cpu_model": ["x", "y"], "warning": "slower B"},
        "overall": block([8, 8]),
        "by": "scenario",
        "groups": {"taxi": block([2, 2], small_n=True)},
        "dimensions": {"safety": safety},
        "judge_goals": {"met_rate": met},
    }
    return {**head, "warnings": [*small_n_warnings(head), "B-bot: 1 call(s) CallSim failed on"]}


def test_each_row_is_printed_with_its_interval_and_the_warnings_follow():
    text = format_comparison(comparison())
    lines = text.splitlines()
    assert lines[:3] == [
        "A = A-bot  (8 calls, runs/a)",
        "B = B-bot  (8 calls, runs/b)",
        "bootstrap over calls: 200 resamples, seed 0, paired (same calls on both sides)",
    ]
    rows = {line.split("  ")[0]: " ".join(line.split()) for line in lines[6:12]}
    assert rows["latency p50 (ms)"] == "latency p50 (ms) 300 900 +600 [+550, +650] *"
    assert rows["served"] == "served 100% 50% −50pp n=1"  # one call a side: no interval
    assert rows["scenario=taxi: latency p50 (ms)"].endswith("[+550, +650] (small n)")  # under --min-n
    assert rows["score: safety"] == "score: safety 4.00 3.50 -0.50 * [-0.90, -0.10]"
    assert rows["judge: caller goal met"] == "judge: caller goal met 50% 100% +50pp n=1"
    assert lines[12:] == [
        "",
        "* the 95% interval excludes 0; pp = percentage points",
        "small n: scenario=taxi: 2 vs 2 calls, under --min-n 5: not starred",
        "small n: B-bot: 1 call(s) CallSim failed on",
        "WARNING: slower B",
        "WARNING: the two sides were not run under the same conditions:",
        "  network: line.effects.jitter_ms: 0 → 40",
    ]


def test_the_document_is_written_key_for_key_in_order():
    doc = comparison()
    assert list(doc) == [
        "a", "b", "resamples", "seed", "level", "min_n", "mismatch", "simulator_failures", "speed_index",
        "overall", "by", "groups", "dimensions", "judge_goals", "warnings",
    ]  # fmt: skip
    assert list(doc["dimensions"]["safety"]) == ["a", "b", "diff", "lo", "hi", "significant", "n_a", "n_b"]
    assert doc["dimensions"]["safety"]["significant"] and not doc["judge_goals"]["met_rate"]["significant"]
    written = json_bytes(as_json_object(doc)).decode()
    assert written.startswith('{\n  "a": {\n    "name": "A-bot",') and written.endswith("  ]\n}\n")
