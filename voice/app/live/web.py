"""``callsim talk --web``: the live call in a browser page, served on localhost.

One websockets server does both: plain HTTP GETs get the page (``static/``), ``info.json`` (the dialogue
and target) and the finished calls' folders under ``/runs/`` (the report links there); ``/call`` upgrades
to the call's websocket.  The page's AudioWorklet sends the microphone as binary messages of 20 ms 16-bit
PCM at 16 kHz (:class:`WebMicrophone`), the assistant's audio comes back as binary messages
(:class:`WebSpeaker`) and JSON events show the call (lines, latencies, the report when it is over).

One call at a time: a second page that calls meanwhile is refused (close code 1013, "busy").  The built-in
assistant is started once, with the server, and serves every call.  Loopback by default, as ``serve``, and
the same rule for browsers (:func:`voice.contract.access.origin_allowed`): only this page, or one on a
loopback
host, may open ``/call`` (any other site's page gets HTTP 403, so it cannot use the microphone's call).
Off loopback a token is required (``--token``, as ``serve``): every request without it gets HTTP 401, the
page, ``info.json`` and the recorded calls included.  The page is opened as ``/?token=TOKEN``; the answer
sets it as a cookie (``HttpOnly``, ``SameSite=Strict``) that the page's own requests (``/call``, the
report) then carry, so the token need not be in any other address.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import mimetypes
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

import numpy as np
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voice.app.live.talk import TalkConfig, start_builtin, talk_as_caller
from voice.contract.access import check_access, presented_tokens
from voice.core.audio import FRAME_SAMPLES, Pcm
from voice.dialogues import Dialogue
from voice.lines.targets import parse_target
from voice.lines.ws_server import Server, ServerConnection, bound_port, serve_websocket
from voice.speech.asr import ASREngine

STATIC = Path(__file__).parent / "static"
MAX_MESSAGE = 64 * 1024  # a 20 ms frame is 640 bytes; a control event a few dozen
BUSY = 1013  # "try again later": a call is already going on
TOKEN_COOKIE = "callsim_talk_token"


class WebMicrophone:
    """The page's microphone: frames arrive as websocket messages (:meth:`put`); None once it hangs up."""

    def __init__(self) -> None:
        self._frames: asyncio.Queue[Pcm | None] = asyncio.Queue()
        self._pending = np.zeros(0, np.int16)

    def put(self, data: bytes) -> None:
        self._frames.put_nowait(np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.int16))

    def close(self) -> None:
        self._frames.put_nowait(None)

    async def start(self) -> None:
        return None

    async def read(self) -> Pcm | None:
        while len(self._pending) < FRAME_SAMPLES:
            block = await self._frames.get()
            if block is None:
                self._frames.put_nowait(None)  # stays closed
                return None
            self._pending = np.concatenate([self._pending, block])
        frame, self._pending = self._pending[:FRAME_SAMPLES], self._pending[FRAME_SAMPLES:]
        return frame

    async def stop(self) -> None:
        return None


class WebSpeaker:
    """The page's speaker: what is played goes to the page as binary messages, and the call's events
    (:meth:`post`) as JSON text, all in one order."""

    def __init__(self, ws: ServerConnection) -> None:
        self._ws = ws
        self._queue: asyncio.Queue[bytes | str | None] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._sender is None:
            self._sender = asyncio.create_task(self._send())

    def play(self, pcm: Pcm) -> None:
        self._queue.put_nowait(np.asarray(pcm, dtype="<i2").tobytes())

    def post(self, event: str, **fields: Any) -> None:
        self._queue.put_nowait(json.dumps({"event": event, **fields}, ensure_ascii=False))

    async def _send(self) -> None:
        while (data := await self._queue.get()) is not None:
            try:
                await self._ws.send(data)
            except ConnectionClosed:
                return

    async def stop(self) -> None:
        """Send what is queued; the page keeps receiving events until :meth:`close`."""
        if self._sender is not None:
            self._queue.put_nowait(None)
            await self._sender
            self._sender = None
            await self.start()  # events may follow the call (the report)

    async def close(self) -> None:
        if self._sender is not None:
            self._queue.put_nowait(None)
            await self._sender
            self._sender = None


class WebTalk:
    """The page and its calls; :meth:`serve` runs until cancelled."""

    def __init__(
        self,
        dialogue: Dialogue,
        config: TalkConfig,
        *,
        asr: ASREngine | None = None,
        host: str = "127.0.0.1",
        port: int = 8766,
        assistant_url: str | None = None,
        token: str = "",
        allowed_origins: tuple[str, ...] = (),
    ) -> None:
        self.dialogue, self.config, self.asr = dialogue, config, asr
        self.host, self.port, self.assistant_url = host, port, assistant_url
        self.token, self.allowed_origins = token, allowed_origins
        self._busy = asyncio.Lock()
        self.server: Server | None = None

    async def start(self) -> Server:
        """Listen (port 0: any free port, then :attr:`port` is the one taken)."""
        self.server = await serve_websocket(
            self._call, self.host, self.port, max_size=MAX_MESSAGE, process_request=self._http, keepalive_s=20
        )
        self.port = bound_port(self.server, self.port)
        return self.server

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    # --- HTTP ---------------------------------------------------------------------------------------

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Every request passes the servers' one access check first: the token on every path (from
        ``?token=``, a bearer header or the page's cookie), the page's ``Origin`` on ``/call``."""
        path, _, query = request.path.partition("?")
        presented = presented_tokens(
            request.headers.get("Authorization"), query, request.headers.get_all("Cookie"), TOKEN_COOKIE
        )
        denial = check_access(
            self.token,
            presented,
            request.headers.get("Origin") if path == "/call" else None,
            [*self._own_origins(request), *self.allowed_origins],
            command="callsim talk --web",
        )
        if denial is not None:
            (_, content_type), *more = denial.headers
            refused = _response(denial.body, content_type, HTTPStatus(denial.status))
            for name, value in more:
                refused.headers[name] = value
            return refused
        response = self._route(path, request)
        if response is not None and self.token and "token" in parse_qs(query):
            cookie = f"{TOKEN_COOKIE}={quote(self.token, safe='')}; HttpOnly; SameSite=Strict; Path=/"
            response.headers["Set-Cookie"] = cookie
        return response

    def _route(self, path: str, request: Request) -> Response | None:
        if path == "/call":
            return None  # the websocket upgrade (its page's Origin checked by _http)
        if path == "/info.json":
            preset = self.dialogue.preset.text
            info = {
                "dialogue": self.dialogue.id,
                "target": str(parse_target(self.config.target)),
                "preset": preset,
            }
            return _response(json.dumps(info, ensure_ascii=False).encode(), "application/json")
        if path.startswith("/runs/"):
            return _file(self.config.out, path[len("/runs/") :])
        return _file(STATIC, "talk.html" if path == "/" else path.lstrip("/"))

    def _own_origins(self, request: Request) -> list[str]:
        """This server's own page: its address, or (bound to every address) the name it was loaded by."""
        own = [f"http://{self.host}:{self.port}"]
        if self.host in ("0.0.0.0", "::", ""):
            own.append(f"http://{request.headers.get('Host', '')}")
        return own

    # --- one call -----------------------------------------------------------------------------------

    async def _call(self, ws: ServerConnection) -> None:
        if self._busy.locked():
            await ws.close(BUSY, "busy: a call is going on")
            return
        async with self._busy:
            await self._run(ws)

    async def _run(self, ws: ServerConnection) -> None:
        mic, speaker, hangup = WebMicrophone(), WebSpeaker(ws), asyncio.Event()
        await speaker.start()

        async def receive() -> None:
            try:
                async for message in ws:
                    if isinstance(message, bytes):
                        mic.put(message)
                    elif json.loads(message).get("event") == "hangup":
                        hangup.set()
            except (ConnectionClosed, ValueError):
                pass
            finally:
                mic.close()
                hangup.set()

        reader = asyncio.create_task(receive())
        try:
            result = await talk_as_caller(
                self.dialogue,
                self.config,
                mic,
                speaker,
                asr=self.asr,
                say=lambda text: speaker.post("line", text=text),
                notify=lambda n: speaker.post("latency", ms=n.ms) if n.kind == "latency" else None,
                hangup=hangup,
                assistant_url=self.assistant_url,
            )
            from voice.app.report.build import build_report

            speaker.post("status", text="writing the report…")
            await asyncio.to_thread(build_report, self.config.out)
            p50 = result.summary.figures.get("latency_p50_ms") if result.summary.figures else None
            speaker.post(
                "done",
                report="/runs/report.html",
                folder=str(self.config.out / result.slug),
                latency_p50_ms=round(p50) if isinstance(p50, int | float) else None,
            )
        except Exception as exc:  # the page must hear why, whatever it was; the server goes on
            speaker.post("error", text=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            await speaker.close()
            reader.cancel()


def _response(body: bytes, content_type: str, status: HTTPStatus = HTTPStatus.OK) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    headers["Cache-Control"] = "no-store"
    return Response(status.value, status.phrase, headers, body)


def _file(root: Path, relative: str) -> Response:
    """``root/relative`` if it is a file inside ``root``; 404 otherwise (no way out of the folder)."""
    base = root.resolve()
    target = (base / relative).resolve()
    if not target.is_relative_to(base) or not target.is_file():
        return _response(b"not found\n", "text/plain", HTTPStatus.NOT_FOUND)
    kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if kind.startswith("text/") or kind in ("application/javascript", "application/json"):
        kind += "; charset=utf-8"
    return _response(target.read_bytes(), kind)


async def serve_web(
    dialogue: Dialogue,
    config: TalkConfig,
    *,
    asr: ASREngine | None,
    host: str,
    port: int,
    token: str = "",
    allowed_origins: tuple[str, ...] = (),
    say: Callable[[str], None] = print,
) -> None:
    """Serve the page until cancelled (Ctrl-C), with the built-in assistant started once if it is called."""
    from voice.lines.targets import BUILTIN

    async with contextlib.AsyncExitStack() as stack:
        url = None
        if parse_target(config.target).protocol == BUILTIN:
            url = await start_builtin(stack, config)
        web = WebTalk(
            dialogue,
            config,
            asr=asr,
            host=host,
            port=port,
            assistant_url=url,
            token=token,
            allowed_origins=allowed_origins,
        )
        server = await web.start()
        async with server:
            address = web.url + ("?token=<the token>" if token else "")  # the token itself is never printed
            say(f"callsim talk --web: open {address} and press Call (Ctrl-C stops the server)")
            await server.serve_forever()
