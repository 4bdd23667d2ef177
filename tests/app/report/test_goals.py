"""The reactive caller's goals as the reports show them: per target, group and call, read from results."""

import json

from tests.reactive_runs import S, decided, goal_recording
from voice.app.report.data import load_run
from voice.app.report.goals import (
    DECISION_HEADER,
    GOAL_COLUMNS,
    GROUP_COLUMNS,
    VERDICT_HEADER,
    decision_rows,
    group_tables,
    has_goals,
    summary_rows,
    verdict_cells,
    verdict_line,
    wait_lines,
)
from voice.core import events as ev
from voice.metrics.measure import measure
from voice.metrics.model.call_record import CallRecord


async def test_a_reactive_runs_goals_per_target_and_group_come_from_its_summary(reactive_dir):
    run = load_run(reactive_dir)
    assert has_goals(run)
    rows = dict(summary_rows(run))
    assert list(rows) == [0, 1] and all(len(r) == len(GOAL_COLUMNS) for r in rows.values())
    g = json.loads((reactive_dir / "pcm-ws-a.test-pcm" / "results.json").read_text())["summary"]["goal"]
    cells = dict(zip([c[0] for c in GOAL_COLUMNS], rows[0], strict=True))
    assert cells["calls"] == "2" and cells["verdicts"] == "yes 2 · partly 0 · no 0 · unknown 0"
    assert cells["goal met"] == "2/2 (100%)" and cells["outcome after p50"] == f"{g['time_p50_ms']:.0f} ms"
    assert cells["caller late"] == "0 ms in 0 waits" and cells["fallbacks"] == cells["rejected"] == "0"
    tables = dict(group_tables(run))
    assert list(tables) == ["scenario", "preset type", "relation", "persona"]
    assert [(v, i) for v, i, _ in tables["persona"]] == [("patient", 0), ("patient", 1)]
    value, _, first = tables["scenario"][0]
    assert value == "delivery" and len(first) == len(GROUP_COLUMNS) and first[1] == "100%"
    assert first[3].endswith(" ms")  # time to outcome p50


async def test_a_scripted_run_has_no_goals(run_dir):
    run = load_run(run_dir)
    assert not has_goals(run) and summary_rows(run) == [] and group_tables(run) == []
    assert all(verdict_cells(c) is None and verdict_line(c) is None for c in run.targets[0].calls)


def test_a_calls_verdict_decisions_and_waits_in_words():
    extra = [
        decided(900, 0, text="喂，快递", heard="助理：您好"),
        ev.CallerLate(S(2600), 1, due=S(2100), late=S(500)),
        decided(2600, 1, "say", "fallback_script", text="放门口", rejected="not JSON", reason="timed out"),
        decided(5000, 2, "hang_up", "llm", goal="no", reason="没人理我"),
        ev.GoalReported(S(5000), "no", "没人理我", 2),
    ]
    c = CallRecord(measure(goal_recording(6000, extra)), {"persona": "impatient"})
    cells = dict(zip(VERDICT_HEADER, verdict_cells(c), strict=True))
    assert cells == {
        "persona": "impatient",
        "verdict": "no",
        "reason": "没人理我",
        "turns": "2",
        "outcome after": "5000 ms",
        "caller late": "500 ms (1)",
        "fallbacks": "1",
        "rejected": "1",
    }
    assert (
        verdict_line(c)
        == "The caller's verdict on its goal: no after 2 turns, at 5.0 s (persona impatient): 没人理我"
    )
    rows = [dict(zip(DECISION_HEADER, r, strict=True)) for r in decision_rows(c)]
    assert rows[0] == {
        "turn": "1",
        "at": "900 ms",
        "action": "say",
        "source": "llm",
        "said": "喂，快递",
        "heard": "助理：您好",
        "goal / why": "-",
        "rejected": "-",
    }
    assert rows[1]["source"] == "fallback_script" and rows[1]["rejected"] == "not JSON"
    assert rows[2]["goal / why"] == "no · 没人理我" and rows[2]["said"] == "-"
    assert wait_lines(c) == ["turn 2: due at 2100 ms, started 500 ms late"]
    silent = CallRecord(measure(goal_recording(3000, [decided(900, 0)])))
    assert verdict_line(silent) == "The caller gave no verdict on its goal"
    assert verdict_cells(silent)[1] == "none" and wait_lines(silent) == []
