"""The raw PCM protocol serializer: frames ↔ websocket messages, and malformed input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pipecat.frames.frames import (
    CancelFrame,
    CancelWorkerFrame,
    EndFrame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    OutputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    TTSAudioRawFrame,
)

from server.pcm_serializer import PcmSerializer, PlayoutTracker
from voice.core.audio import to_bytes

START = {
    "event": "start",
    "call_id": "c1",
    "sample_rate": 16000,
    "encoding": "pcm_s16le",
    "dialogue": {"id": "d1", "scenario": "s", "preset": {"type": "none", "text": ""}, "owner_goal": "g"},
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pcm(n: int = 320, value: int = 1000) -> bytes:
    return to_bytes(np.full(n, value, dtype=np.int16))


async def test_binary_pcm_becomes_input_audio_at_16k() -> None:
    s = PcmSerializer()
    frame = await s.deserialize(pcm(320))
    assert isinstance(frame, InputAudioRawFrame)
    assert frame.sample_rate == 16000 and frame.num_channels == 1 and len(frame.audio) == 640
    assert s.bytes_in == 640


async def test_start_becomes_a_transport_message_with_the_dialogue() -> None:
    s = PcmSerializer()
    frame = await s.deserialize(json.dumps(START, ensure_ascii=False))
    assert isinstance(frame, InputTransportMessageFrame)
    assert frame.message == {"event": "start", "call_id": "c1", "dialogue": START["dialogue"]}
    assert s.call_id == "c1" and s.started


async def test_duplicate_start_and_bad_dialogue_are_tolerated() -> None:
    s = PcmSerializer()
    bad = dict(START, dialogue="not an object")
    frame = await s.deserialize(json.dumps(bad))
    assert isinstance(frame, InputTransportMessageFrame) and frame.message["dialogue"] is None
    assert await s.deserialize(json.dumps(START)) is None
    assert s.malformed == 2


async def test_stop_cancels_the_call_and_silences_the_serializer() -> None:
    s = PcmSerializer()
    frame = await s.deserialize(json.dumps({"event": "stop", "reason": "completed"}))
    assert isinstance(frame, CancelWorkerFrame) and "completed" in str(frame.reason)
    assert s.stopped and s.stop_reason == "completed"
    # After the caller hung up: no audio in, nothing out, not even a hangup.
    assert await s.deserialize(pcm()) is None
    assert await s.deserialize(json.dumps({"event": "stop"})) is None
    assert await s.serialize(OutputAudioRawFrame(pcm(), 16000, 1)) is None
    assert await s.serialize(EndFrame()) is None


@pytest.mark.parametrize(
    "message",
    [b"\x01\x02\x03", "{not json", "[1, 2]", '{"no_event": 1}', '{"event": 5}', '"start"', "[" * 100_000],
)
async def test_malformed_input_is_dropped_not_raised(message: str | bytes) -> None:
    s = PcmSerializer()
    assert await s.deserialize(message) is None
    assert s.malformed == 1


async def test_unknown_events_and_empty_audio_are_ignored_silently() -> None:
    s = PcmSerializer()
    assert await s.deserialize(json.dumps({"event": "dtmf", "digit": "1"})) is None
    assert await s.deserialize(b"") is None
    assert s.malformed == 0


async def test_output_audio_is_raw_pcm_resampled_to_the_line_rate() -> None:
    s = PcmSerializer()
    same = await s.serialize(TTSAudioRawFrame(pcm(320), 16000, 1))
    assert same == pcm(320)
    # A streaming resampler holds a little audio back: count what comes out of a whole second.
    out = [await s.serialize(OutputAudioRawFrame(pcm(480), 24000, 1)) for _ in range(50)]  # 50 x 20 ms
    total = sum(len(b) for b in out if b)
    assert all(b is None or len(b) % 2 == 0 for b in out) and 0.9 * 32000 <= total <= 32000
    assert await s.serialize(OutputAudioRawFrame(pcm(320), 16000, 2)) is None  # stereo is refused


async def test_interruption_sends_clear_only_while_our_audio_may_be_playing() -> None:
    clock = FakeClock()
    s = PcmSerializer(playout=PlayoutTracker(clock), clear_margin_secs=0.5)
    assert await s.serialize(InterruptionFrame()) is None  # nothing sent yet
    await s.serialize(OutputAudioRawFrame(pcm(16000), 16000, 1))  # one second of audio
    clock.now += 0.3
    assert s.playout.playing() and s.playout.remaining() == pytest.approx(0.7)
    assert json.loads(await s.serialize(InterruptionFrame()) or "") == {"event": "clear"}
    assert not s.playout.playing()
    assert await s.serialize(InterruptionFrame()) is None  # already cleared
    await s.serialize(OutputAudioRawFrame(pcm(8000), 16000, 1))
    clock.now += 0.5 + 0.4  # 0.5 s of audio played out, 0.4 s ago: inside the margin
    assert await s.serialize(InterruptionFrame()) is not None


async def test_end_of_call_sends_one_hangup() -> None:
    s = PcmSerializer()
    message = json.loads(await s.serialize(EndFrame(reason="assistant hung up")) or "")
    assert message == {"event": "hangup", "reason": "assistant hung up"}
    assert s.hung_up
    assert await s.serialize(CancelFrame()) is None
    assert await s.serialize(OutputAudioRawFrame(pcm(), 16000, 1)) is None


async def test_cancel_without_stop_also_hangs_up() -> None:
    s = PcmSerializer()
    message = json.loads(await s.serialize(CancelFrame()) or "")
    assert message["event"] == "hangup"


async def test_messages_go_out_as_json_and_error_ends_the_conversation() -> None:
    s = PcmSerializer()
    log = await s.serialize(OutputTransportMessageUrgentFrame(message={"event": "log", "text": "你好"}))
    assert json.loads(log or "") == {"event": "log", "text": "你好"}
    assert "你好" in (log or "")  # not \\u-escaped
    wrapped = await s.serialize(OutputTransportMessageFrame(message=["x"]))
    assert json.loads(wrapped or "") == {"event": "log", "data": ["x"]}
    error = await s.serialize(
        OutputTransportMessageUrgentFrame(message={"event": "error", "message": "boom"})
    )
    assert json.loads(error or "")["event"] == "error"
    assert await s.serialize(EndFrame()) is None  # no hangup after an error


async def test_start_with_another_sample_rate_resamples_both_ways() -> None:
    s = PcmSerializer()
    await s.deserialize(json.dumps(dict(START, sample_rate=8000)))
    assert s.line_rate == 8000
    frames = [await s.deserialize(pcm(160)) for _ in range(50)]  # 50 x 20 ms at 8 kHz
    audio = [f for f in frames if f is not None]
    assert all(isinstance(f, InputAudioRawFrame) and f.sample_rate == 16000 for f in audio)
    assert 0.9 * 32000 <= sum(len(f.audio) for f in audio if isinstance(f, InputAudioRawFrame)) <= 32000
    out = [await s.serialize(OutputAudioRawFrame(pcm(320), 16000, 1)) for _ in range(50)]
    assert 0.9 * 16000 <= sum(len(b) for b in out if b) <= 16000
