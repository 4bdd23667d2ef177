"""What the reports show, read from results.json: the run's settings in words, the per-target lists."""

from voice.app.report.data import (
    RunView,
    TargetView,
    banner,
    describe_caller,
    describe_effects,
    describe_timing,
    heard_by_assistant,
    latencies,
    load_run,
    run_settings,
    stop_latencies,
)
from voice.lines.effects import LineEffects
from voice.metrics.call_metrics import CallMetrics, TurnMetrics
from voice.metrics.model.call_record import CallRecord
from voice.metrics.model.run_results import Settings, TargetResults
from voice.metrics.results import summarize_run


def test_network_effects_and_caller_timing_in_words():
    assert describe_effects(LineEffects(mulaw_band_limit=False).describe()) == "none"
    noisy = LineEffects(
        mulaw_band_limit=True, jitter_ms=40, loss_rate=0.02, noise_snr_db=20, caller_gain_db=-6
    )
    assert describe_effects(noisy.describe()) == (
        "G.711 mu-law band limit (8 kHz), jitter 0-40 ms, packet loss 2 %, noise at 20 dB SNR,"
        " caller gain -6 dB"
    )
    timing = {"think_distribution": "uniform", "think_min_ms": 150.0, "think_max_ms": 1500.0}
    assert describe_timing(timing).startswith("think time uniform, clipped to 150-1500 ms;")
    assert describe_timing({}) == "-"


async def test_settings_stop_latencies_and_heard_texts_come_from_the_results_files(run_dir):
    run = load_run(run_dir)
    settings = dict(run_settings(run))
    assert settings["caller voice"] == "memory" and settings["repeats"] == "1"
    assert settings["line to pcm+ws://a.test/pcm"] == "pcm; network effects: none"
    a, b = run.targets
    assert stop_latencies(a) == [a.summary.barge_in.stop_latency_p50_ms]  # the one barge-in
    assert [h[:2] for h in heard_by_assistant(a)] == [(c, t) for c in ("m-1", "m-2", "m-3") for t in (0, 1)]
    assert heard_by_assistant(b) == []


async def test_a_reactive_caller_is_a_setting_in_words(reactive_dir, run_dir):
    settings = dict(run_settings(load_run(reactive_dir)))
    assert settings["caller"] == (
        "reactive: openai:rules, persona patient, prompt callsim-caller/1,"
        " at most twice the script's (at least 6) turns"
    )
    random = {"caller": "openai:qwen", "persona": "random", "caller_prompt": "p/2", "caller_max_turns": 8}
    assert (
        describe_caller(random)
        == "reactive: openai:qwen, persona random (drawn per call), prompt p/2, at most 8 turns"
    )
    assert "caller" not in dict(run_settings(load_run(run_dir)))  # the scripted caller: no row


def test_the_charts_pool_only_the_assistants_calls_and_the_banner_names_callsims_failures(tmp_path):
    def call(call_id, outcome, latency):
        turn = TurnMetrics(0, "after_reply", "", 0.0, 1000.0, 1000.0 + latency, latency, 0.0)
        return CallMetrics(call_id, "d", outcome, False, 10000.0, None, [turn], 1)

    calls = [call("a", "completed", 400.0), call("b", "assistant_crashed", 9000.0)]
    summary = summarize_run(calls, [{}, {}], redo="callsim run")
    doc = TargetResults("builtin", Settings(), summary, [CallRecord(c) for c in calls])
    view = TargetView("builtin", tmp_path, "", doc)
    assert latencies(view) == [400.0]  # the crashed built-in's half call is not the assistant's latency
    lines = banner(RunView(tmp_path, None, [view]))
    assert lines[0].startswith("CALLSIM FAILED on 1 of 2 call(s)") and lines[-1] == "  redo them: callsim run"
    assert banner(RunView(tmp_path, None, [])) == []
