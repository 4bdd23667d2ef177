"""The caller bench's figures, from hand-made event logs, and its arguments (its calls need models: not run
here; ``scripts/bench_caller --quick`` runs them)."""

import pytest

from voice.app.benchmarks.caller import after_silence_ms, lateness_ms, render, summarize
from voice.core import events as ev
from voice.core.audio import ms_to_samples

S = ms_to_samples


def call(*late_ms: float, early: tuple[bool, ...] = (), end_s: float = 30.0) -> list[ev.CallEvent]:
    """A call whose turns 1.. were said after replies, each ``late_ms`` late (0: on time)."""
    log: list[ev.CallEvent] = [ev.CallerSpoke(0, 0, "first", 0, 0, S(500))]
    for turn, ms in enumerate(late_ms, 1):
        if ms:
            log.append(ev.CallerLate(S(turn * 1000), turn, S(turn * 1000 - ms), S(ms)))
        log.append(ev.CallerSpoke(S(turn * 1000), turn, "after_reply", 0, 0, 0))
    log += [ev.CallerEarly(0, i, 0, kept) for i, kept in enumerate(early)]
    log.append(ev.CallEnded(S(end_s * 1000), "completed", False))
    return log


def test_lateness_counts_every_turn_said_after_a_reply_on_time_ones_as_zero():
    assert lateness_ms(call(0, 250, 0)) == [0, 250, 0]


def test_a_setting_gives_percentiles_outcome_cpu_and_the_share_of_early_work_thrown_away():
    row = summarize(
        "echo, model 0 s", [call(0, 100, early=(True, False)), call(400, 0, early=(True,), end_s=50)], 8.0
    )
    assert (row.calls, row.turns, row.late_max_ms) == (2, 4, 400)
    assert row.late_p50_ms == pytest.approx(50) and row.late_p90_ms > 100
    assert row.outcome_p50_s == pytest.approx(40) and row.cpu_per_call_s == pytest.approx(4)
    assert (row.early_asked, row.early_wasted_share) == (3, pytest.approx(1 / 3))
    text = render([row])
    assert "echo, model 0 s" in text and "3, 33%" in text


def test_a_turn_after_a_missed_reply_is_timed_from_the_request_to_its_first_sample():
    log = [
        ev.TurnRequested(S(8000), 0, "reply_missed"),
        ev.CallerSpoke(S(8200), 0, "after_timeout", S(8200), S(8230), S(9000)),
        *call(0, 300)[1:],
    ]
    assert after_silence_ms(log) == [pytest.approx(200)]
    assert lateness_ms(log) == [0, 300]  # not a turn after a reply: not in the lateness figures
    row = summarize("echo", [log])
    assert (row.silence_p50_ms, row.silence_max_ms) == (pytest.approx(200), pytest.approx(200))
    assert "200/200" in render([row])


def test_a_setting_without_calls_or_early_decisions_says_so_instead_of_dividing_by_zero():
    row = summarize("none", [], None)
    assert (row.turns, row.late_p50_ms, row.cpu_per_call_s, row.early_wasted_share) == (0, None, None, None)
    assert "none" in render([row])


def test_the_bench_arguments_are_ones_callsim_bench_accepts(tmp_path):
    from voice.app.benchmarks.caller import bench_args
    from voice.app.cli import build_parser

    model = "http://127.0.0.1:2/v1"
    args = build_parser().parse_args(bench_args("pcm+ws://127.0.0.1:1/pcm", model, 1, tmp_path))
    assert (args.caller, args.caller_base_url, args.persona) == ("openai:rules", model, "patient")
    assert args.target == ["pcm+ws://127.0.0.1:1/pcm"] and args.limit == 1 and args.concurrency == 1
    four = build_parser().parse_args(bench_args("pcm+ws://127.0.0.1:1/pcm", model, 4, tmp_path, 4))
    assert four.concurrency == 4 and four.limit == 4


def test_quick_runs_one_dialogue_against_the_echo_with_the_instant_stand_in(monkeypatch, tmp_path):
    from voice.app.benchmarks import caller

    ran: list[tuple[str, float, int]] = []

    def fake_setting(assistant: str, delay_s: float, limit: int, out, concurrency: int = 1) -> caller.Row:
        ran.append((assistant, delay_s, limit))
        assert out == tmp_path / "echo-0"  # --keep: the run folder stays
        return caller.summarize(f"{assistant}, model {delay_s:g} s", [call(0, 120)], 3.0)

    monkeypatch.setattr(caller, "run_setting", fake_setting)
    monkeypatch.setenv("CALLSIM_SPEED_INDEX", "off")
    assert caller.main(["--quick", "--json", "--keep", str(tmp_path)]) == 0
    assert ran == [("echo", 0.0, 1)]


def test_each_setting_runs_with_caches_of_its_own_but_the_users_models(monkeypatch, tmp_path):
    import os

    from voice.app.benchmarks.caller import cold_caches

    (tmp_path / "models" / "whisper-base").mkdir(parents=True)
    (tmp_path / "llm").mkdir()
    monkeypatch.setenv("CALLSIM_CACHE", str(tmp_path))
    with cold_caches() as root:
        assert os.environ["CALLSIM_CACHE"] == str(root) and root != tmp_path
        assert (root / "models" / "whisper-base").is_dir() and not (root / "llm").exists()
    assert os.environ["CALLSIM_CACHE"] == str(tmp_path) and not root.exists()
