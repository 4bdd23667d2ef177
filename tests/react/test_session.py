"""The reactive caller in whole calls on virtual time: it hears, decides, falls back, and replays exactly.

The assistant is the reference bot in memory and the caller's ears a scripted transcriber (a unit double:
the real-audio versions of these calls, with Whisper and websockets, are in tests/react/test_live.py).
The caller model is a real HTTP server in the test process (voice/react/scripted_caller.py plays it by rules).
"""

import json

from tests.fakes import reference
from tests.llm_fake import FakeLLM
from voice.app.run.runner import RunSettings, run_dialogues
from voice.core.clock import VirtualClock
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.errors import EngineError
from voice.lines.memory import MemoryLine
from voice.react import scripted_caller
from voice.react.caller import parse_caller
from voice.speech.asr import MemoryASR
from voice.speech.tts.memory import MemoryTTS

TAKEOUT = next(d for d in load_dialogues(bundled_dialogues_path()) if d.id == "takeout-regular-01")


async def call(tmp_path, url, heard, *, cache="use", persona="patient", name="run", tts=None):
    caller = parse_caller(
        "openai:rules",
        base_url=url,
        wait_in_place=True,
        cache=cache,
        cache_dir=tmp_path / "llm",
        persona=persona,
    )
    out = tmp_path / name
    settings = RunSettings(out, "memory", "memory", caller=caller)
    [metrics] = await run_dialogues(
        [TAKEOUT],
        settings,
        lambda: MemoryLine(reference(reply_len_ms=600, greeting_ms=200)),
        tts or MemoryTTS(),
        MemoryASR(list(heard), default="嗯"),
        clock=VirtualClock(),
    )
    events = [json.loads(x) for x in (out / f"{TAKEOUT.id}.events.jsonl").read_text().splitlines()]
    return metrics, events, out


def of(events, kind):
    return [e for e in events if e["kind"] == kind]


async def test_the_next_line_depends_on_what_was_heard(tmp_path, no_openai_env):
    with FakeLLM().respond(scripted_caller.answer) as fake:
        _, follows, _ = await call(
            tmp_path, fake.url, ["您好，请讲", "好的，放门口就行", "好的，再见"], name="a"
        )
        _, asks, _ = await call(tmp_path, fake.url, ["您好，请讲", "今天天气不错", "嗯"], name="b")
    said = [e["text"] for e in of(follows, "caller_decision") if e["action"] == "say"]
    other = [e["text"] for e in of(asks, "caller_decision") if e["action"] == "say"]
    assert said[0] == other[0] == TAKEOUT.caller_turns[0].text  # the same greeting heard: the same opening
    assert said[1] == TAKEOUT.caller_turns[1].text  # the answer made sense: the script goes on
    assert other[1] == scripted_caller.ASK_AGAIN  # it did not: the caller asks what it meant
    assert of(asks, "caller_decision")[1]["heard"] == "助理：今天天气不错"
    [goal] = of(follows, "goal")
    assert (goal["met"], goal["turns"]) == ("partly", 2)
    assert of(follows, "call_end")[0]["detail"] == "goal partly: 对方道别了"


async def test_malformed_and_out_of_bounds_answers_fall_back_to_the_script_with_the_reason(
    tmp_path, no_openai_env
):
    with FakeLLM() as fake:
        fake.answer("我觉得应该说：你好").answer(
            {**scripted_caller.say("好", "x"), "pause_before_ms": 99_999}
        )
        fake.respond(scripted_caller.answer)
        metrics, events, _ = await call(tmp_path, fake.url, ["您好，请讲", "好的，放门口", "再见"])
    first = of(events, "caller_decision")[0]
    assert first["source"] == "fallback_script" and first["text"] == TAKEOUT.caller_turns[0].text
    assert "not valid JSON" in first["rejected"] or "JSON" in first["rejected"]
    assert "pause_before_ms: must be in 0..10000" in first["rejected"]
    assert "no usable answer" in first["reason"]
    assert not metrics.failed  # the call went on


async def test_a_dead_server_leaves_the_script_then_a_hang_up(tmp_path, no_openai_env):
    with FakeLLM() as fake:
        url = fake.url
    metrics, events, _ = await call(tmp_path, url, ["您好"] * 10, cache="off")
    sources = [e["source"] for e in of(events, "caller_decision")]
    script = len(TAKEOUT.caller_turns)
    assert sources == ["fallback_script"] * script + [
        "fallback_hangup",
        "fallback_hangup",
    ]  # the last: verdict
    assert of(events, "goal")[0]["met"] == "unknown"
    assert metrics.outcome == "completed" and not metrics.failed


async def test_a_cached_replay_is_byte_identical_offline(tmp_path, no_openai_env):
    heard = ["您好，请讲", "好的，放门口就行", "好的，谢谢，再见"]
    with FakeLLM().respond(scripted_caller.answer) as fake:
        _, _, first = await call(tmp_path, fake.url, heard, name="first")
        url = fake.url
    _, _, again = await call(tmp_path, url, heard, cache="only", name="again")  # the server is gone
    name = TAKEOUT.id
    assert (first / f"{name}.wav").read_bytes() == (again / f"{name}.wav").read_bytes()
    assert (first / f"{name}.events.jsonl").read_bytes() == (again / f"{name}.events.jsonl").read_bytes()


class BrokenVoice(MemoryTTS):
    """Speaks the first line, then fails (an engine error mid-call)."""

    def synthesize(self, text):
        if self.requests:
            raise EngineError(f"cannot speak {text!r}")
        return super().synthesize(text)


async def test_a_caller_engine_that_fails_mid_call_hangs_up_with_the_reason(tmp_path, no_openai_env):
    with FakeLLM().respond(scripted_caller.answer) as fake:
        m, _, _ = await call(tmp_path, fake.url, ["您好", "好的，放门口就行"], cache="off", tts=BrokenVoice())
    assert m.outcome == "completed" and "cannot speak" in m.detail
    assert "the caller's own engines failed: TTS engine 'memory' failed" in m.detail
    assert len(m.turns) == 1


async def test_a_turn_of_several_clauses_starts_on_its_first_clause_and_is_said_whole(
    tmp_path, no_openai_env
):
    tts = MemoryTTS()
    heard = ["您好，请讲", "好的，放门口就行", "好的，再见"]
    with FakeLLM().respond(scripted_caller.answer) as fake:
        _, events, _ = await call(tmp_path, fake.url, heard, tts=tts)
    second = TAKEOUT.caller_turns[1].text  # 行，那我放门口了啊，你记得拿。
    assert {"行，那我放门口了啊，", "你记得拿。"} <= set(tts.requests) and second not in tts.requests
    plan = next(e for e in of(events, "turn_plan") if e["turn"] == 1)
    spoke = next(e for e in of(events, "caller_turn") if e["turn"] == 1)
    whole = len(MemoryTTS().synthesize(second))  # the turn as one clip: about as long as the two pieces
    assert plan["text"] == second and abs(plan["audio_samples"] - whole) < whole // 5
    assert spoke["speech_end"] - spoke["audio_start"] == plan["speech_end"] and spoke.get("pause") is None


async def test_the_ears_the_voice_and_the_models_client_are_ready_before_dialling(no_openai_env):
    from voice.core.caller import CallerTiming

    loaded: list[str] = []

    class Ears(MemoryASR):
        def load(self) -> None:
            loaded.append("ears")

    class Voice(MemoryTTS):
        def load(self) -> None:
            loaded.append("voice")

    with FakeLLM().respond(scripted_caller.answer) as fake:
        caller = parse_caller("openai:rules", base_url=fake.url, wait_in_place=True, cache="off")
        session = caller.session(TAKEOUT, CallerTiming(), Voice(), Ears([], default=""))
        core = await session.start(max_turns=3)
        prepared = caller.client._api is not None
        caller.close()
    assert loaded == ["ears", "voice"] and prepared and core.now == 0  # the call has not begun
