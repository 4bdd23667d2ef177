"""The OpenAI-compatible transcriber end to end, against a real HTTP server in this process playing one.

The server records every request (path, headers, multipart fields) and answers from a script, so the tests
see exactly what goes over the wire: a 16 kHz mono WAV, the model, language zh, the prompt, temperature 0.
"""

from __future__ import annotations

import email.parser
import email.policy
import io
import json
import socket
import threading
import wave
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from voice.core.audio import SAMPLE_RATE
from voice.errors import EngineError, EngineUnavailable
from voice.speech.openai_asr import OpenAIASR

CLIP = (np.sin(np.arange(SAMPLE_RATE) / 8) * 8000).astype(np.int16)


@dataclass
class Request:
    path: str
    headers: dict[str, str]  # lower-case names
    fields: dict[str, str]
    files: dict[str, tuple[str, str, bytes]]  # name → (filename, content type, bytes)


@dataclass
class FakeServer:
    """Scripted answers (status, body) in order; the last one repeats."""

    url: str
    answers: list[tuple[int, Any]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)


def _parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, Any]]:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    fields, files = {}, {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        payload = part.get_payload(decode=True)
        if filename is not None:
            files[name] = (filename, part.get_content_type(), payload)
        else:
            fields[name] = payload.decode("utf-8")
    return fields, files


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            fields, files = _parse_multipart(self.headers["Content-Type"], body)
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.requests.append(Request(self.path, headers, fields, files))
            status, answer = state.answers[min(len(state.requests), len(state.answers)) - 1]
            data = answer if isinstance(answer, bytes) else json.dumps(answer, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def test_a_clip_goes_up_as_a_wav_with_model_language_and_prompt(server):
    server.answers = [(200, {"text": "您好，我是機主的電話助理。"})]
    asr = OpenAIASR("whisper-large-v3", base_url=server.url, api_key="sk-test", prompt="机主 外卖 快递")
    assert asr.transcribe(CLIP) == "您好，我是机主的电话助理。"  # simplified, as Whisper's own output
    (req,) = server.requests
    assert req.path == "/v1/audio/transcriptions"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.headers["content-type"].startswith("multipart/form-data")
    assert req.fields["model"] == "whisper-large-v3"
    assert req.fields["language"] == "zh"
    assert req.fields["prompt"] == "机主 外卖 快递"
    assert req.fields["response_format"] == "json"
    assert float(req.fields["temperature"]) == 0.0
    filename, content_type, data = req.files["file"]
    assert filename.endswith(".wav") and content_type == "audio/wav"
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, SAMPLE_RATE)
        assert np.array_equal(np.frombuffer(w.readframes(w.getnframes()), "<i2"), CLIP)


def test_no_prompt_sends_none_and_describe_names_model_server_and_settings(server):
    server.answers = [(200, {"text": " 好的 "})]
    asr = OpenAIASR("funasr", base_url=server.url + "/")
    assert asr.transcribe(CLIP) == "好的"
    assert "prompt" not in server.requests[0].fields
    assert server.requests[0].headers["authorization"].startswith("Bearer ")  # a placeholder key
    assert asr.describe() == f"openai:funasr at {server.url} language=zh prompt=none temperature=0"
    assert "prompt=none" not in OpenAIASR("m", prompt="机主").describe()


def test_silence_is_not_sent(server):
    asr = OpenAIASR("m", base_url=server.url)
    assert asr.transcribe(np.zeros(SAMPLE_RATE, np.int16)) == ""
    assert asr.transcribe(np.zeros(0, np.int16)) == ""
    assert server.requests == []


def test_a_server_error_is_retried_then_reported_with_its_message(server):
    server.answers = [(503, {"error": {"message": "model loading"}}), (200, {"text": "好的"})]
    assert OpenAIASR("m", base_url=server.url, max_retries=1).transcribe(CLIP) == "好的"
    assert len(server.requests) == 2
    server.requests.clear()
    server.answers = [(404, {"error": {"message": "model 'm' not found"}})]
    with pytest.raises(EngineError, match=r"HTTP 404 for model 'm'.*not found") as caught:
        OpenAIASR("m", base_url=server.url, max_retries=1).transcribe(CLIP)
    assert not isinstance(caught.value, EngineUnavailable)
    assert len(server.requests) == 1  # a 4xx is not retried


def test_an_answer_without_text_is_an_engine_error(server):
    server.answers = [(200, {"words": []})]
    with pytest.raises(EngineError, match="without a text"):
        OpenAIASR("m", base_url=server.url, max_retries=0).transcribe(CLIP)


def test_an_answer_that_is_not_json_is_an_engine_error(server):
    server.answers = [(200, b"<html>oops</html>")]
    with pytest.raises(EngineError):
        OpenAIASR("m", base_url=server.url, max_retries=0).transcribe(CLIP)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_is_unavailable_with_a_clear_message():
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(EngineUnavailable, match=rf"cannot reach the transcription server at {url}.*running"):
        OpenAIASR("m", base_url=url, max_retries=0).transcribe(CLIP)


def test_a_server_slower_than_the_timeout_is_unavailable():
    with socket.socket() as listener:  # accepts connections, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        with pytest.raises(EngineUnavailable, match="Timeout"):
            OpenAIASR("m", base_url=url, timeout_s=0.3, max_retries=0).transcribe(CLIP)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        OpenAIASR("")
    with pytest.raises(ValueError):
        OpenAIASR("m", timeout_s=0)
