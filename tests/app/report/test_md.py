"""``report.md``: the settings, the summary, the breakdowns and the calls as Markdown tables."""

import json

from tests.app.report.test_calls import one_target_run
from tests.fakes import reference
from tests.runs import mini
from voice.app.report.build import build_report


async def test_the_markdown_summary_has_settings_summary_breakdowns_and_calls(run_dir):
    _, md_path = build_report(run_dir, audio="none")
    md = md_path.read_text()
    for heading in ("## Settings", "## Summary", "## Barge-ins, pauses and backchannels", "## By scenario"):
        assert heading in md
    for heading in ("## By preset type", "## By relation", "## Calls", "## What the assistant heard"):
        assert heading in md
    assert "| seed | 0 (the caller's timing and the network) |" in md
    assert "| line to pcm+ws://b.test/pcm | pcm; network effects: none |" in md
    # calls: ran or not, caller turns said (all planned: their number), answered of the turns of the call,
    # served, false starts, how it ended
    assert (
        "| pcm+ws://a.test/pcm | m-2 | takeout | regular | conflict | - | completed | 2 | 2/2 | yes | 0 |"
        in md
    )
    assert (
        "| pcm+ws://a.test/pcm | m-1 | delivery | none | alignment | - | completed | 2 | 2/2 | yes | 1 |"
        in md
    )
    sections = {s.split("\n", 1)[0]: s for s in md.split("\n## ")}
    assert sections["By scenario"].count("\n| ") == 1 + 3 * 2  # header, then value × target
    assert sections["Calls"].count("\n| pcm+ws://") == 6


async def test_p95_stop_latency_and_what_the_assistant_heard_are_in_the_markdown(run_dir):
    md = build_report(run_dir, audio="none")[1].read_text()
    summary = json.loads((run_dir / "pcm-ws-a.test-pcm" / "results.json").read_text())["summary"]
    header = next(line for line in md.splitlines() if line.startswith("| target | calls ran"))
    assert "| latency p50 | p90 | p95 | p99 | mean |" in header
    row = next(line for line in md.splitlines() if line.startswith("| pcm+ws://a.test/pcm | 3/3"))
    lat = summary["latency_ms"]
    assert " | ".join(f"{lat[k]:.0f} ms" for k in ("p50", "p90", "p95", "p99")) in row
    cues = next(line for line in md.splitlines() if line.startswith("| pcm+ws://a.test/pcm | 1 |"))
    b = summary["barge_in"]
    stops = " | ".join(f"{b[f'stop_latency_{k}_ms']:.0f} ms" for k in ("p50", "p90", "p95"))
    # pause takeover 100% and backchannel carry-on 0%: the reference takes pauses and stops at a backchannel
    rates = f"{summary['pause_takeover_rate']:.0%} | {summary['backchannel_carry_on_rate']:.0%}"
    assert rates == "100% | 0%"
    assert cues == f"| pcm+ws://a.test/pcm | 1 | 0 | 1/1 (100%) | {stops} | 0 | {rates} |"
    # only A logs what it heard: its ASR of each turn next to what the caller said; B has no rows
    heard = md.split("## What the assistant heard")[1]
    assert "| pcm+ws://a.test/pcm | m-2 | 1 | 快递到了，放哪里？ | 快递到了放那里 |" in heard
    assert "b.test" not in heard


async def test_a_reactive_run_has_caller_goals_and_each_calls_decisions(reactive_dir, run_dir):
    md = build_report(reactive_dir, audio="none")[1].read_text()
    goals = md.split("\n## Caller goals\n")[1].split("\n## ")[0]
    assert goals.startswith("\n| target | calls | verdicts | goal met | met or partly | outcome after p50 |")
    assert "| pcm+ws://a.test/pcm | 2 | yes 2 · partly 0 · no 0 · unknown 0 | 2/2 (100%) | 100% |" in goals
    for title in ("scenario", "preset type", "relation", "persona"):
        assert f"### Caller goals by {title}" in goals
    assert "| patient | pcm+ws://b.test/pcm | 2 | 100% | 100% |" in goals
    assert "| pcm+ws://a.test/pcm | m-1 | patient | yes |" in goals.split("### Each call's verdict")[1]
    decisions = md.split("\n## Caller decisions\n")[1]
    assert (
        decisions.count("\n### pcm+ws://") == 4 and "The caller's verdict on its goal: yes after" in decisions
    )
    assert "| turn | at | action | source | said | heard | goal / why | rejected |" in decisions
    assert "| 1 | 1920 ms | say | llm | 快递到了，放哪里？ | 助理：好的 |" in decisions  # the greeting, heard
    assert "| hang_up | llm | - |" in decisions and "yes · " in decisions
    scripted = build_report(run_dir, audio="none")[1].read_text()
    assert "## Caller goals" not in scripted and "## Caller decisions" not in scripted


async def test_failed_calls_come_first_with_what_to_do_and_turns_reached_are_explained(tmp_path):
    await one_target_run(tmp_path / "silent", reference(greeting_ms=None, reply_ms=10**9), mini(1))
    md = build_report(tmp_path / "silent", audio="none")[1].read_text()
    head = md.split("\n- **targets**")[0]
    assert "> **FAILED CALLS: 1 of 1 call(s) failed (each kind below" in head
    assert "> - assistant_silent: 1 call(s), the assistant stopped answering" in head
    assert (
        ">   - e.g. 2 replies in a row never came" in head and ">   - what to do: check that it hears" in head
    )
    # a bot that hangs up after the first caller turn: one turn reached of the two planned, said so
    await one_target_run(tmp_path / "hangup", reference(hangup_after_turns=0), mini(1))
    md = build_report(tmp_path / "hangup", audio="none")[1].read_text()
    assert "FAILED CALLS" not in md  # hanging up is no failure
    assert "| assistant_hangup | 1 reached of 2 planned | 0/1 | no |" in md
    assert "| the assistant hung up: done |" in md and "Caller turns: planned in the dialogues" in md
    summary = json.loads((tmp_path / "hangup" / "results.json").read_text())["targets"][0]["summary"]
    pacing = summary["pacing_late_ms"]  # CallSim's own lateness, in the summary table with its note
    assert f"| p99 {pacing['p99_worst']:.1f} ms, max {pacing['max']:.0f} ms |" in md
    assert "Caller pacing: how late CallSim itself sent the caller's 20 ms frames" in md
