"""pipecat's protobuf protocol, pure: CallSim's frames, the bot's, and the streaming resampler."""

from __future__ import annotations

import numpy as np
import pytest

from tests.lines.carrier_peers import closed
from voice.core.audio import resample, to_bytes
from voice.core.call import AssistantAudio, AssistantControl, LineClosed
from voice.lines.line import CallStart
from voice.lines.pipecat_ws import PipecatCodec, PipecatLine, StreamResampler, frames_pb2


def frame(**audio: object) -> bytes:
    f = frames_pb2().Frame()
    for key, value in audio.items():
        setattr(f.audio, key, value)
    return bytes(f.SerializeToString())


def test_caller_frames_are_pipecat_audio_frames_and_nothing_else_is_said() -> None:
    codec = PipecatCodec()
    assert codec.start(CallStart("c1", {})) == () and codec.hangup("x") == () and codec.played(("m",)) == ()
    sent = frames_pb2().Frame.FromString(codec.audio(np.arange(320, dtype=np.int16)))
    assert sent.WhichOneof("frame") == "audio"
    assert (sent.audio.sample_rate, sent.audio.num_channels) == (16000, 1)
    assert sent.audio.audio == to_bytes(np.arange(320, dtype=np.int16))
    # the literal bytes, field by field: Frame.audio (2) { audio (3): 4 bytes, sample_rate (4), channels (5) }
    assert codec.audio(np.array([1, 2], np.int16)) == b"\x12\x0b\x1a\x04\x01\x00\x02\x00\x20\x80\x7d\x28\x01"


def test_bot_audio_at_16_khz_stereo_and_other_rates() -> None:
    codec = PipecatCodec()
    (a,) = codec.decode(
        frame(audio=to_bytes(np.arange(320, dtype=np.int16)), sample_rate=16000, num_channels=1)
    )
    assert isinstance(a, AssistantAudio) and np.array_equal(a.pcm, np.arange(320))
    stereo = np.stack([np.full(160, 1000), np.full(160, 3000)], axis=1).astype(np.int16).reshape(-1)
    (s,) = codec.decode(frame(audio=to_bytes(stereo), sample_rate=16000, num_channels=2))
    assert isinstance(s, AssistantAudio) and len(s.pcm) == 160 and int(s.pcm[0]) == 2000
    heard = [
        codec.decode(frame(audio=to_bytes(np.full(480, 1000, np.int16)), sample_rate=24000, num_channels=1))
    ]
    got = sum(len(item.pcm) for items in heard for item in items if isinstance(item, AssistantAudio))
    assert 300 <= got <= 320  # 30 ms at 24 kHz is 20 ms at 16 kHz, less what waits for the next chunk
    assert codec.decode(frame(audio=b"", sample_rate=16000, num_channels=1)) == ()


def test_an_interruption_is_a_clear_and_the_rest_is_recorded() -> None:
    pb, codec = frames_pb2(), PipecatCodec()
    f = pb.Frame()
    f.interruption.id = 7
    assert codec.decode(f.SerializeToString()) == (AssistantControl("clear", {"via": "interruption"}),)
    t = pb.Frame()
    t.text.text = "你好"
    assert codec.decode(t.SerializeToString()) == (AssistantControl("text", {"text": "你好"}),)
    m = pb.Frame()
    m.message.data = '{"event": "log", "ref": "reply"}'
    assert codec.decode(m.SerializeToString()) == (AssistantControl("log", {"ref": "reply"}),)
    m.message.data = '{"label": "rtvi-ai", "type": "bot-ready"}'
    assert codec.decode(m.SerializeToString()) == (
        AssistantControl("message", {"data": {"label": "rtvi-ai", "type": "bot-ready"}}),
    )
    assert codec.decode(b"") == (AssistantControl("unknown", {"frame": "None"}),)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("a text message", "text message"),
        (b"\xff\xff\xff", "not a pipecat protobuf frame"),
        (b"\x12\x05ab", "not a pipecat protobuf frame"),
        (frame(audio=b"\x00\x00", sample_rate=4000, num_channels=1), "at 4000 Hz"),
        (frame(audio=b"\x00\x00", sample_rate=16000, num_channels=0), "0 channels"),
        (frame(audio=b"\x00\x00\x00", sample_rate=16000, num_channels=1), "not whole"),
        (frame(audio=b"\x00\x00", sample_rate=16000, num_channels=2), "not whole"),
    ],
)
def test_malformed_messages_end_the_call_with_a_named_protocol_error(
    message: str | bytes, reason: str
) -> None:
    (line_closed,) = PipecatCodec().decode(message)
    assert isinstance(line_closed, LineClosed)
    assert line_closed.reason.startswith("protocol_error: ") and reason in line_closed.reason


@pytest.mark.parametrize("src", [8000, 22050, 24000, 44100, 48000])
def test_the_stream_resampler_equals_resampling_in_one_piece(src: int) -> None:
    rng = np.random.default_rng(src)
    x = (rng.standard_normal(src // 2) * 3000).astype(np.int16)
    whole = resample(x, src, 16000)
    r = StreamResampler(src)
    cuts = np.sort(rng.integers(0, len(x), 30))
    out = np.concatenate([r(piece) for piece in np.split(x, cuts)])
    held = r.pad * 16000 // src + 1  # what still waits for a next chunk
    assert len(whole) - held <= len(out) <= len(whole)
    assert np.abs(out.astype(int) - whole[: len(out)].astype(int)).max() <= 1  # no seam at any cut


def test_a_normal_close_is_the_bots_hang_up() -> None:
    assert PipecatCodec().closed(closed(1000))[0].event == "hangup"  # type: ignore[union-attr]
    assert isinstance(PipecatLine("ws://h:1/x").codec, PipecatCodec)
