"""A stand-in chat model: a real OpenAI-compatible HTTP server that plays the model from a script or rules.

What CallSim's own tests and CI put where a chat model goes (the reactive caller's, the judge's, the
built-in assistant's ``openai:`` policy), and what users run to try those paths without a model or a key
(``callsim fake-llm --role caller|policy|judge``: a scripted stand-in behind it, not a model).

``StandInLLM`` listens on 127.0.0.1 (a free port; ``host`` and ``port`` to choose) in a thread and answers
``POST …/chat/completions`` with the next scripted reply: a completion whose message content is given
(:meth:`answer`), an HTTP error (:meth:`fail`), or either after a delay (to make the client time out).
With the script empty it answers with the :meth:`respond` function's answer to the request, if one is set,
else 500.  Every request body, path and header set is kept in :attr:`requests`; :attr:`max_in_flight` is
the most requests it was serving at once.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str = ""
    finish_reason: str = "stop"
    body: dict[str, Any] | None = None  # sent as is instead of a completion
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    pieces: list[str] | None = None  # a streamed answer (server-sent events), in these pieces
    piece_delay_s: float = 0.0  # before each piece after the first


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Responder = Callable[[dict[str, Any]], "str | Mapping[str, Any]"]  # a request body → the answer


class StandInLLM:
    def __init__(self, *, hold_s: float = 0.0, port: int = 0, host: str = "127.0.0.1") -> None:
        self.script: deque[Reply] = deque()
        self.responder: Responder | None = None  # answers when the script is empty
        self.responder_delay_s = 0.0
        self.requests: list[Seen] = []
        self.hold_s = hold_s  # every request is held this long (to see concurrency)
        self.in_flight = 0
        self.max_in_flight = 0
        self.streams_cut = 0  # streamed answers the client hung up on
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self.host = host
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self._server.server_address[1]}/v1"

    def answer(
        self, content: str | dict[str, Any], *, finish_reason: str = "stop", delay_s: float = 0.0
    ) -> StandInLLM:
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        self.script.append(Reply(content=text, finish_reason=finish_reason, delay_s=delay_s))
        return self

    def stream(self, *pieces: str, piece_delay_s: float = 0.0, delay_s: float = 0.0) -> StandInLLM:
        """Answer the next request (``"stream": true``) with server-sent events, one per piece."""
        self.script.append(Reply(pieces=list(pieces), piece_delay_s=piece_delay_s, delay_s=delay_s))
        return self

    def respond(self, responder: Responder, *, delay_s: float = 0.0) -> StandInLLM:
        """Answer every request the script does not, with ``responder(request body)`` after ``delay_s``."""
        self.responder, self.responder_delay_s = responder, delay_s
        return self

    def fail(
        self, status: int, message: str = "scripted failure", headers: dict[str, str] | None = None
    ) -> StandInLLM:
        body = {"error": {"message": message, "type": "error", "code": status}}
        self.script.append(Reply(status=status, body=body, headers=dict(headers or {})))
        return self

    def __enter__(self) -> StandInLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            try:
                answer = self.responder(seen.body)
            except Exception as exc:  # a prompt it cannot play: an error reply, never a dropped line
                return Reply(status=500, body={"error": f"the stand-in cannot answer this request: {exc!r}"})
            text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
            return Reply(content=text, delay_s=self.responder_delay_s)
        return Reply(status=500, body={"error": "script empty"})

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {"unreadable": True}  # answered like any request the script has no answer for
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = fake._next(Seen(self.path, headers, body))
                try:
                    _pause(max(reply.delay_s, fake.hold_s))
                    if (
                        reply.status == 200
                        and reply.body is None
                        and (reply.pieces is not None or body.get("stream"))
                    ):
                        self._stream(body, reply)  # a streamed request gets server-sent events
                        return
                    payload = reply.body if reply.body is not None else _completion(body, reply)
                    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    fake._done()

            def _stream(self, request: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                pieces = reply.pieces if reply.pieces is not None else _clauses(reply.content)
                try:
                    for i, piece in enumerate(pieces):
                        if i:
                            _pause(reply.piece_delay_s)
                        self._event(_chunk(request, {"content": piece}, None))
                    self._event(_chunk(request, {}, "stop"))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    with fake._lock:
                        fake.streams_cut += 1  # the client stopped reading: a cancelled generation
                self.close_connection = True

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n")
                self.wfile.flush()

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def _pause(seconds: float) -> None:
    """Hold this request's thread (a scripted delay; ``voice/`` reads no clock but ``voice.core.clock``)."""
    if seconds > 0:
        threading.Event().wait(seconds)


def _completion(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunk(request: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": request.get("model", ""),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _clauses(text: str) -> list[str]:
    """A text as a model streams it: clause by clause (each piece ends at a punctuation mark)."""
    pieces, piece = [], ""
    for ch in text:
        piece += ch
        if ch in "，。！？；,.!?;":
            pieces.append(piece)
            piece = ""
    return [*pieces, piece] if piece else pieces
