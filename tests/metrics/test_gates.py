"""Release gates: ``--fail-if FIGURE OP NUMBER`` and ``--max-failed N|P%``, on real summaries."""

import dataclasses

import pytest

from voice.errors import ConfigError
from voice.metrics.call_metrics import CallMetrics, TurnMetrics
from voice.metrics.gates import (
    FailedLimit,
    Gate,
    check_compare,
    check_compare_figure,
    check_failed,
    check_figure,
    check_run,
    check_simulator,
    compare_value,
    judge_run,
    known_figures,
    parse_failed_limit,
    parse_gate,
    summary_value,
)
from voice.metrics.goal import CallerGoal
from voice.metrics.results import summarize_run


def call(cid, latency_ms, failed=False, scenario="taxi"):
    turn = TurnMetrics(
        0, "after_reply", "快递到了。", 1000.0, 2000.0, 2000.0 + latency_ms, latency_ms, 0.0, rhythm=4
    )
    m = CallMetrics(cid, cid, "assistant_error" if failed else "completed", failed, 5000.0, 300.0, [turn], 1)
    return m, {"scenario": scenario, "preset_type": "none", "relation": "alignment"}


def summary(*calls):
    return summarize_run([m for m, _ in calls], [lab for _, lab in calls])


def test_gates_parse_every_operator_and_refuse_anything_else():
    assert parse_gate("latency_p90_ms>1500") == Gate("latency_p90_ms", ">", 1500.0)
    assert parse_gate(" served_rate < 1 ") == Gate("served_rate", "<", 1.0)
    assert parse_gate("latency_ms.p99>=2e3") == Gate("latency_ms.p99", ">=", 2000.0)
    for op in ("<=", "==", "!="):
        assert parse_gate(f"calls_failed{op}-0.5").op == op
    assert str(parse_gate("barge_in_success_rate<0.9")) == "barge_in_success_rate<0.9"
    for bad in ("latency_p90_ms", "latency_p90_ms>fast", ">3", "a>>3", "a=3"):
        with pytest.raises(ConfigError, match="FIGURE OP NUMBER"):
            parse_gate(bad)


def test_figures_are_the_row_keys_and_dotted_paths_into_the_summary():
    s = summary(call("a", 400), call("b", 1200, scenario="work"))
    assert summary_value(s, "latency_p50_ms") == 800  # the figures row
    assert summary_value(s, "latency_ms.p99") == s.to_json()["latency_ms"]["p99"]  # a path
    assert summary_value(s, "calls_failed") == 0 and summary_value(s, "served_rate") == 1.0
    assert summary_value(s, "by_scenario.work.latency_p50_ms") == 1200
    assert summary_value(s, "barge_in_success_rate") is None  # no barge-in: no value
    known = known_figures()
    assert {"latency_p90_ms", "latency_ms.p99", "barge_in.stop_latency_p90_ms", "calls_served"} <= set(known)
    assert "by_scenario.<group>.<figure>" in known
    for figure in ("latency_p90_ms", "latency_ms.p99", "by_relation.conflict.rhythm_mean"):
        check_figure(figure)


def test_an_unknown_figure_is_a_usage_error_naming_the_known_ones():
    with pytest.raises(ConfigError) as err:
        check_figure("latency_p90")
    text = str(err.value)
    assert "unknown figure 'latency_p90'" in text and "did you mean latency_p90_ms" in text
    assert "served_rate" in text and "latency_ms.p99" in text
    with pytest.raises(ConfigError, match=r"by_scenario\.<group>\.<figure>, the figure one of calls, "):
        check_figure("by_scenario.taxi")
    with pytest.raises(ConfigError, match="not a number"):
        summary_value(summary(call("a", 400)), "latency_ms")
    with pytest.raises(ConfigError, match=r"by_scenario has no 'life' \(taxi\)"):
        summary_value(summary(call("a", 400)), "by_scenario.life.rhythm_mean")


def test_each_target_is_checked_and_each_breach_says_where_and_what_it_saw():
    fast, slow = summary(call("a", 300), call("b", 500)), summary(call("a", 1400), call("b", 2600))
    gates = [parse_gate("latency_p90_ms>1500"), parse_gate("served_rate<1"), parse_gate("calls_failed>0")]
    broken = check_run(gates, {"fast": fast, "slow": slow})
    assert [(b.where, str(b.gate)) for b in broken] == [("slow", "latency_p90_ms>1500")]
    assert str(broken[0]) == "slow: --fail-if latency_p90_ms>1500 broke: latency_p90_ms = 2480"
    none = check_run([parse_gate("barge_in_success_rate<0.9")], {"fast": fast})
    assert str(none[0]) == (
        "fast: --fail-if barge_in_success_rate<0.9 broke: "
        "barge_in_success_rate has no value (no call or turn it applies to)"
    )


def test_a_comparison_gate_reads_either_side_or_the_difference():
    a, b = summary(call("a", 300), call("b", 500)), summary(call("a", 450), call("b", 650))
    assert compare_value("delta.latency_p50_ms", a, b) == pytest.approx(150)
    assert compare_value("a.latency_ms.p50", a, b) == 400 and compare_value("b.calls", a, b) == 2
    assert compare_value("delta.barge_in_success_rate", a, b) is None
    broken = check_compare([parse_gate("delta.latency_p50_ms>100")], "B − A", a, b)
    assert [str(x) for x in broken] == [
        "B − A: --fail-if delta.latency_p50_ms>100 broke: delta.latency_p50_ms = 150"
    ]
    assert not check_compare([parse_gate("delta.latency_p50_ms>200")], "B − A", a, b)
    for bad in ("latency_p50_ms", "c.latency_p50_ms", "delta."):
        with pytest.raises(ConfigError, match=r"a\.FIGURE, b\.FIGURE or delta\.FIGURE"):
            check_compare_figure(bad)
    with pytest.raises(ConfigError, match="unknown figure 'latency'"):
        check_compare_figure("delta.latency")


def test_max_failed_takes_a_count_or_a_share():
    assert parse_failed_limit("0") == FailedLimit(0) and parse_failed_limit("3") == FailedLimit(3)
    assert parse_failed_limit("5%") == FailedLimit(None, 0.05) and str(parse_failed_limit("12.5%")) == "12.5%"
    for bad in ("-1", "x", "150%", "5 %%"):
        with pytest.raises(ConfigError, match="--max-failed"):
            parse_failed_limit(bad)
    s = summary(*(call(f"c{i}", 300, failed=i < 2) for i in range(20)))  # 2 of 20 failed: 10 %
    assert check_failed(FailedLimit(0), {"t": s}) == [
        "t: 2 of 20 call(s) failed (10%), more than --max-failed 0"
    ]
    assert not check_failed(FailedLimit(2), {"t": s}) and check_failed(FailedLimit(1), {"t": s})
    assert not check_failed(parse_failed_limit("10%"), {"t": s}) and check_failed(
        parse_failed_limit("5%"), {"t": s}
    )


# --- the reactive caller's goal --------------------------------------------------------------------------


def reactive(cid, met, time_ms, persona="patient"):
    m, labels = call(cid, 400)
    return dataclasses.replace(m, goal=CallerGoal(met, "", 3, time_ms)), {**labels, "persona": persona}


def test_goal_figures_gate_a_reactive_run_and_are_known_before_any_call():
    s = summary(
        reactive("a", "yes", 20000.0), reactive("b", "no", 40000.0, "terse"), reactive("c", "yes", 1.0)
    )
    for figure in ("goal_met_rate", "goal.time_p90_ms", "goal.verdicts.no", "by_persona.terse.goal_met_rate"):
        check_figure(figure)  # an empty run has no goal block: the figures are known all the same
    assert summary_value(s, "goal_met_rate") == pytest.approx(2 / 3)
    assert summary_value(s, "goal.goal_met_or_partly_rate") == pytest.approx(2 / 3)
    assert (
        summary_value(s, "goal.verdicts.no") == 1 and summary_value(s, "by_persona.terse.goal_met_rate") == 0
    )
    broken = check_run([parse_gate("goal_met_rate<0.8"), parse_gate("goal.time_p90_ms>60000")], {"t": s})
    assert [str(b) for b in broken] == ["t: --fail-if goal_met_rate<0.8 broke: goal_met_rate = 0.666667"]
    assert "goal.caller_late_ms_total" in known_figures() and "by_persona.<group>.<figure>" in known_figures()
    assert compare_value("delta.goal.time_p50_ms", s, summary(reactive("a", "yes", 30000.0))) == 10000.0


def test_a_goal_gate_on_a_scripted_run_breaks_for_want_of_a_value_and_a_typo_is_refused():
    scripted = summary(call("a", 400))
    assert (
        summary_value(scripted, "goal_met_rate") is None
        and summary_value(scripted, "goal.time_p50_ms") is None
    )
    [breach] = check_run([parse_gate("goal.goal_met_rate<0.8")], {"t": scripted})
    assert "has no value" in str(breach)
    with pytest.raises(ConfigError, match=r"did you mean goal\.time_p50_ms"):
        summary_value(scripted, "goal.time_p50")
    with pytest.raises(ConfigError, match=r"unknown figure 'goal\.met_rate'"):
        check_figure("goal.met_rate")


def test_calls_callsim_failed_on_are_in_no_gate_but_the_verdict_says_them():
    crashed = CallMetrics("c-9", "c-9", "caller_speech_failed", True, 0.0, None, detail="silence")
    s = summarize_run([call("a", 500)[0], crashed], [call("a", 500)[1], {}])
    doc = s.to_json()
    assert (doc["calls"], doc["calls_failed"], doc["figures"]["served_rate"]) == (1, 0, 1.0)
    assert "simulator_failures.count" in known_figures() and summary_value(s, "simulator_failures.count") == 1
    assert check_simulator({"bot": s}) == [
        "bot: CallSim failed on 1 call(s), not the assistant: redo them (see above)"
    ]
    verdict = judge_run({"bot": s}, "0", ["latency_p50_ms>1000"])
    assert verdict.ok and verdict.lines()[0] == (
        "CALLSIM FAILED: bot: CallSim failed on 1 call(s), not the assistant: redo them (see above)"
    )
    assert check_simulator({"bot": summary(call("a", 500))}) == []
