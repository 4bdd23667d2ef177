"""Runs: many calls, resumable, atomic — on virtual time with the in-memory line, TTS and ASR doubles."""

import asyncio
import gc
import json

import pytest

from tests.fakes import reference
from tests.records import short_delivery
from voice.app.run.jobs import CallJob, plan_jobs, repeat_seed
from voice.app.run.resume import load_done
from voice.app.run.runner import CallStatus, RunSettings, TargetRun, make_calls, run_calls, run_dialogues
from voice.core.caller import CallerTiming
from voice.core.clock import VirtualClock
from voice.dialogues import parse_dialogue
from voice.errors import ConfigError, LineError
from voice.lines.memory import MemoryLine
from voice.metrics.model.call_record import call_to_json, metrics_from_json
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS


def dialogue(i: int):
    return parse_dialogue(short_delivery(f"d-{i}"), "mem", i)


class Lines:
    def __init__(self, fail_on: int | None = None):
        self.made = 0
        self.fail_on = fail_on

    def __call__(self):
        self.made += 1
        if self.made == self.fail_on:
            raise LineError("assistant unreachable")
        return MemoryLine(reference(reply_len_ms=600, greeting_ms=200))


def settings(tmp_path, **kw):
    return RunSettings(out_dir=tmp_path, target="memory", tts_name="memory", timing=CallerTiming(**kw))


async def run(tmp_path, lines, dialogues, **kw):
    return await run_dialogues(
        dialogues,
        settings(tmp_path, **kw),
        lines,
        MemoryTTS(),
        MemoryASR(["放驿站吧"] * 10),
        clock=VirtualClock(),
    )


async def test_a_run_writes_recordings_metrics_and_results(tmp_path):
    results = await run(tmp_path, Lines(), [dialogue(1), dialogue(2)])
    assert [m.call_id for m in results] == ["d-1", "d-2"]
    for cid in ("d-1", "d-2"):
        for suffix in (".wav", ".events.jsonl", ".metrics.json"):
            assert (tmp_path / f"{cid}{suffix}").exists()
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["summary"]["calls"] == 2 and data["summary"]["turns_completed"] == 2
    assert data["calls"][0]["turns"][0]["heard_text"] == "放驿站吧"
    assert data["calls"][0]["turns"][0]["reference"] == "放驿站吧。"
    assert not list(tmp_path.glob("*.tmp"))


async def test_an_interrupted_run_resumes_without_redoing_finished_calls(tmp_path):
    first = await run(tmp_path, Lines(fail_on=2), [dialogue(1), dialogue(2)])
    assert [(m.outcome, m.failed) for m in first] == [("completed", False), ("connect_failed", True)]
    assert load_done(tmp_path, "d-1") is not None and load_done(tmp_path, "d-2") is None
    lines = Lines()
    results = await run(tmp_path, lines, [dialogue(1), dialogue(2)])
    assert lines.made == 1  # only the missing call was made
    assert [m.turns_completed for m in results] == [1, 1]


async def test_a_folder_with_other_settings_is_refused(tmp_path):
    await run(tmp_path, Lines(), [dialogue(1)])
    with pytest.raises(ConfigError, match="other settings"):
        await run(tmp_path, Lines(), [dialogue(1)], seed=99)


# --- concurrency, repeats, several targets ------------------------------------------------------------


async def calls_on(tmp_path, jobs, targets=("a",), concurrency=2, lines=None, tts=None, events=None):
    runs = [
        TargetRun(
            RunSettings(out_dir=tmp_path / t, target=t, tts_name="memory", transcribe=False),
            lines or Lines(),
            t,
        )
        for t in targets
    ]
    done = await run_calls(
        runs,
        jobs,
        tts or MemoryTTS(),
        None,
        concurrency=concurrency,
        new_clock=VirtualClock,
        on_status=(events.append if events is not None else lambda _: None),
    )
    return [target.calls for target in done]


async def test_concurrent_calls_on_two_targets_match_sequential_ones(tmp_path):
    jobs = plan_jobs([dialogue(i) for i in range(4)], repeats=2, seed=3)
    tts, events = MemoryTTS(), []
    together = await calls_on(tmp_path / "x", jobs, ("a", "b"), concurrency=4, tts=tts, events=events)
    alone = await calls_on(tmp_path / "y", jobs, ("a",), concurrency=1)
    for per_target in together:  # each call runs on its own virtual clock: concurrency changes nothing
        assert [call_to_json(m) for m in per_target] == [call_to_json(m) for m in alone[0]]
    assert [m.call_id for m in together[1]] == [j.call_id for j in jobs]
    assert {e.state for e in events} == {"calling", "done"}
    assert sum(e.state == "done" for e in events) == 16
    data = json.loads((tmp_path / "x" / "b" / "results.json").read_text())
    assert data["kind"] == "target" and data["summary"]["calls"] == 8
    assert [c["call_id"] for c in data["calls"]] == [j.call_id for j in jobs]
    assert data["calls"][4]["repeat"] == 2 and data["calls"][4]["seed"] == repeat_seed(3, 2)
    assert data["summary"]["by_scenario"]["delivery"]["calls"] == 8


async def test_plans_are_shared_between_targets(tmp_path):
    tts = MemoryTTS()
    await calls_on(tmp_path, plan_jobs([dialogue(1)]), ("a", "b", "c"), tts=tts)
    assert tts.requests == ["快递到了。"]  # one caller turn, synthesized once for three targets


async def test_a_remote_assistants_next_caller_is_synthesized_while_the_call_runs(tmp_path):
    log: list[str] = []

    class Spy(MemoryTTS):
        def synthesize(self, text):
            log.append(text)
            return super().synthesize(text)

    class Closing(MemoryLine):
        async def close(self):
            # the next caller's synthesis runs on a worker thread: the first call (on a virtual clock) may end
            # before that thread is scheduled, so its close waits up to 10 s for it; a runner that only
            # synthesizes between calls never gets it here, and the order below then fails
            for _ in range(1000):
                if "第2个快递到了。" in log or log.count("call closed"):
                    break
                await asyncio.sleep(0.01)
            log.append("call closed")
            await super().close()

    def lines():
        return Closing(reference(reply_len_ms=600, greeting_ms=200))

    def call(i):
        turns = [{"role": "assistant", "text": "您好。"}, {"role": "caller", "text": f"第{i}个快递到了。"}]
        return parse_dialogue(
            {**short_delivery(f"d-{i}"), "turns": [*turns, {"role": "assistant", "text": "好。"}]}
        )

    await calls_on(tmp_path, plan_jobs([call(1), call(2)]), concurrency=1, lines=lines, tts=Spy())
    assert log.index("第2个快递到了。") < log.index("call closed")  # made while the first call ran


async def test_kept_calls_are_reported_and_not_redone(tmp_path):
    jobs = plan_jobs([dialogue(1), dialogue(2)])
    await calls_on(tmp_path, jobs)
    events, lines = [], Lines()
    await calls_on(tmp_path, jobs, events=events, lines=lines)
    assert lines.made == 0 and [e.state for e in events] == ["note", "kept", "kept"]
    assert events[0].target == "a" and events[0].detail == "resuming: kept 2 finished call(s)"


async def test_an_edited_dialogue_is_called_again(tmp_path):
    await calls_on(tmp_path, plan_jobs([dialogue(1)]))
    edited = parse_dialogue({**short_delivery("d-1"), "owner_goal": "别打扰我"}, "mem", 1)
    lines = Lines()
    await calls_on(tmp_path, [CallJob("d-1", edited)], lines=lines)
    assert lines.made == 1


async def test_leftovers_of_a_killed_writer_are_removed(tmp_path):
    (tmp_path / "a").mkdir()
    stale = tmp_path / "a" / ".d-1.metrics.json.x1y2.tmp"
    stale.write_text('{"half')
    await calls_on(tmp_path, plan_jobs([dialogue(1)]))
    assert not stale.exists() and load_done(tmp_path / "a", "d-1") is not None


async def test_an_engine_error_is_the_calls_recorded_failure_and_the_batch_goes_on(tmp_path, caplog):
    class Broken(MemoryTTS):
        def synthesize(self, text):
            raise ConfigError("engine broke")

    jobs = plan_jobs([dialogue(1), dialogue(2), dialogue(3)])
    await calls_on(tmp_path, jobs[:1])
    events: list[CallStatus] = []
    [calls] = await calls_on(tmp_path, jobs, concurrency=2, tts=Broken(), events=events)
    # the caller could not be voiced: CallSim's failure, not the assistant's
    assert [(m.outcome, m.failed) for m in calls] == [
        ("completed", False), ("caller_speech_failed", True), ("caller_speech_failed", True)
    ]  # fmt: skip
    assert calls[1].detail == (
        "the caller's speech: CallerSpeechFailed: TTS engine 'memory' failed on '快递到了。': engine broke"
    )
    assert [e.detail for e in events if e.state == "failed"] == [calls[1].detail] * 2
    saved = load_done(tmp_path / "a", "d-2")
    assert saved is not None and saved["detail"] == calls[1].detail  # in the metrics file, and results.json:
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    assert [c["outcome"] for c in results["calls"]] == ["completed", *["caller_speech_failed"] * 2]
    assert results["calls"][2]["detail"] == calls[1].detail and "partial" not in results
    for _ in range(20):  # any plan left behind finishes (or is cancelled) meanwhile
        await asyncio.sleep(0.05)
    gc.collect()
    assert "never retrieved" not in caplog.text  # its error is not reported a second time, at random
    lines = Lines()
    runs = [TargetRun(RunSettings(tmp_path / "a", "a", "memory", transcribe=False), lines, "a")]
    [again] = await run_calls(runs, jobs, MemoryTTS(), None, new_clock=VirtualClock)  # redone anyway
    assert lines.made == 2 and [m.turns_completed for m in again.calls] == [1, 1, 1]


async def test_an_exception_in_the_call_itself_fails_that_call_only(tmp_path):
    class Exploding(Lines):
        def __call__(self):
            self.made += 1
            if self.made == 2:
                raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
            return MemoryLine(reference(reply_len_ms=600, greeting_ms=200))

    [calls] = await calls_on(tmp_path, plan_jobs([dialogue(1), dialogue(2), dialogue(3)]), lines=Exploding())
    assert [m.outcome for m in calls] == ["completed", "call_error", "completed"]
    assert calls[1].detail.startswith("the call: UnicodeEncodeError: 'utf-8' codec can't encode")


async def test_metrics_survive_the_json_round_trip(tmp_path):
    [[m]] = await calls_on(tmp_path, plan_jobs([dialogue(1)]))
    assert metrics_from_json(call_to_json(m, {"scenario": "x"})) == m


def test_status_events_are_plain_data():
    s = CallStatus("a", "d-1", "calling")
    assert s.metrics is None and s.detail == ""


async def test_a_line_with_effects_reports_what_it_did_in_the_recording_meta(tmp_path):
    from voice.lines.effects import EffectLine, LineEffects
    from voice.recording import load_recording

    def lines():
        inner = MemoryLine(reference(reply_len_ms=600, greeting_ms=200))
        return EffectLine(inner, LineEffects(loss_rate=0.2), seed=5, clock=VirtualClock())

    await run(tmp_path, lines, [dialogue(1)])
    meta = load_recording(tmp_path / "d-1.wav").meta
    stats = meta["line_stats"]["stats"]
    assert meta["line_stats"]["loss_rate"] == 0.2
    assert 0 < stats["caller_packets_lost"] < stats["caller_packets"]


# --- honest resumes: failed calls retried, a folder started over, a crashed built-in ---------------------


class Failing(Lines):
    """Lines to an assistant that answers every call with an ``error`` event: the call fails."""

    def __call__(self):
        from voice.core.call import AssistantControl

        class Erring:
            def on_start(self, start):
                return [AssistantControl("error", {"message": "broken"})]

            def on_frame(self, pcm):
                return []

        self.made += 1
        return MemoryLine(Erring())


async def test_failed_calls_are_kept_unless_retried(tmp_path):
    jobs = plan_jobs([dialogue(1), dialogue(2)])
    [first] = await calls_on(tmp_path, jobs[:1], lines=Failing())
    assert first[0].failed  # written: a failed call is a result too
    lines, events = Lines(), []
    [again] = await calls_on(tmp_path, jobs, lines=lines, events=events)
    assert lines.made == 1 and again[0].failed  # only d-2 was made; d-1 kept as it failed
    assert "1 failed: d-1; --retry-failed redoes them" in events[0].detail
    lines, events = Lines(), []
    runs = [TargetRun(RunSettings(tmp_path / "a", "a", "memory", transcribe=False), lines, "a")]
    [retried] = await run_calls(
        runs, jobs, MemoryTTS(), None, new_clock=VirtualClock, on_status=events.append, retry_failed=True
    )
    assert lines.made == 1 and [m.failed for m in retried.calls] == [False, False]
    assert events[0].detail == "resuming: kept 1 finished call(s); making 1: 1 failed earlier, retried (d-1)"


async def test_fresh_makes_every_call_again_even_with_other_settings(tmp_path):
    jobs = plan_jobs([dialogue(1), dialogue(2)])
    await calls_on(tmp_path, jobs)
    lines, events = Lines(), []
    settings = RunSettings(tmp_path / "a", "a", "memory", CallerTiming(seed=9), transcribe=False)
    await run_calls(
        [TargetRun(settings, lines, "a")], jobs, MemoryTTS(), None, new_clock=VirtualClock,
        on_status=events.append, fresh=True,
    )  # fmt: skip
    assert lines.made == 2 and [e.state for e in events][:1] == ["note"]
    assert "deleted the earlier run (2 finished call(s))" in events[0].detail
    assert json.loads((tmp_path / "a" / "run.json").read_text())["settings"]["timing"]["seed"] == 9


async def test_a_crash_of_the_assistant_process_stops_the_run_and_its_calls_are_redone(tmp_path):
    """A real assistant process that dies mid-call; the run watches it as ``run_bench`` does the built-in."""
    import subprocess
    import sys
    from pathlib import Path

    from voice.app.run.assistants import exit_probe
    from voice.errors import AssistantCrashed
    from voice.lines.factory import make_line_factory
    from voice.lines.targets import parse_target

    root = Path(__file__).resolve().parents[3]
    cmd = [sys.executable, "-m", "tests.ws_fake", "--die-after-frames", "30"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        line = make_line_factory(parse_target(f"pcm+ws://127.0.0.1:{int(proc.stdout.readline())}/pcm"))
        settings = RunSettings(tmp_path, "builtin", "memory", transcribe=False)
        jobs = plan_jobs([dialogue(1), dialogue(2)])
        crashed = exit_probe(proc, tmp_path / "assistant.log")
        with pytest.raises(
            AssistantCrashed,
            match=r"exited \(code 3; .*\); the batch stopped: \d call\(s\) recorded \(\d assistant_crashed\)",
        ):
            await run_calls([TargetRun(settings, line, "builtin", crashed)], jobs, MemoryTTS(), None)
    finally:
        proc.kill()
        proc.wait()
    crashed_calls = [load_done(tmp_path, cid) for cid in ("d-1", "d-2")]
    assert [c["outcome"] for c in crashed_calls if c is not None][:1] == ["assistant_crashed"]
    assert crashed_calls[0] is not None and "exited (code 3" in crashed_calls[0]["detail"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert "exited (code 3" in results["partial"]["stopped"]
    events: list[CallStatus] = []  # the assistant back up: the crashed call is made again
    runs = [TargetRun(settings, Lines(), "builtin")]
    [done] = await run_calls(runs, jobs, MemoryTTS(), None, new_clock=VirtualClock, on_status=events.append)
    assert [m.failed for m in done.calls] == [False, False]
    assert events[0].detail.startswith("resuming: kept 0 finished call(s); making 2: ")
    assert "the assistant crashed during it (d-1" in events[0].detail


async def test_calls_made_here_without_a_caller_voice_are_refused_up_front(tmp_path):
    jobs = plan_jobs([dialogue(1)], repeats=1, seed=3)
    run = TargetRun(settings(tmp_path / "a"), Lines())
    with pytest.raises(ConfigError, match="need a TTS engine"):
        await make_calls([run], jobs, None, None)
    assert not (tmp_path / "a").exists()
