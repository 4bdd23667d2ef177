"""Serving the built-in assistant: the FastAPI app, uvicorn inside the running loop, and the entry points.

Kept apart from :mod:`server.assistant` (what one call *is*: its pipecat pipeline) because this is about
*listening*: one call per websocket connection on ``/pcm`` (the raw PCM protocol, ``docs/protocol.md``) or
on ``/twilio`` (Twilio Media Streams: :mod:`server.twilio_route`), one per WebRTC peer connection offered on
``/api/offer`` (as pipecat's runner: :mod:`server.webrtc_route`), plus ``GET /health``; loading the shared
speech engines before the first call; binding the port; and shutting down so every active call hears a
``hangup`` (and every peer connection is closed).  Starting the server programmatically::

    server = AssistantServer(AssistantSettings(serving=ServingSettings(port=0)))
    await server.start()          # loads + warms the engines, binds, serves; raises CallSimError on failure
    print(server.url)             # ws://127.0.0.1:<port>/pcm (port=0 picks a free port)
    ...
    await server.stop()

or ``await serve(settings, ready)`` (runs until cancelled), or ``run_server(settings)`` (blocking, Ctrl-C
to stop; what ``python -m server`` runs).  Settings and the shared engines live in :mod:`server.config`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal, TypedDict

import uvicorn
from fastapi import FastAPI, WebSocket

from server.assistant import AssistantCall, build_pipeline
from server.config import AssistantSettings, SpeechEngines, configure_logging, stopwatch
from server.gate import GUARD_SCOPE_KEY, CallGate, CallSlots, GuardedSocket
from server.memory import CallMemory, freeze_startup_objects
from server.pcm_serializer import PcmSerializer, StartMessage
from server.policy.processor import PolicyFactory
from server.sip_gateway import SipGateway, gateway_in_front
from server.twilio_route import TWILIO_RATE, TwilioCallSerializer, answer_twilio
from server.webrtc_route import WebrtcRoutes
from voice.core.audio import SAMPLE_RATE
from voice.errors import ConfigError, EngineError

logger = logging.getLogger(__name__)

__all__ = ["AssistantServer", "create_app", "run_server", "serve"]


# --- the app ---------------------------------------------------------------------------------------------


class Health(TypedDict):
    """``GET /health``: whether the engines are loaded yet (CallSim waits for ``ok``), and how busy."""

    status: Literal["ok", "loading"]
    tts: str | None
    active_calls: int


def create_app(
    settings: AssistantSettings | None = None,
    *,
    engines: SpeechEngines | None = None,
    policy_factory: PolicyFactory | None = None,
) -> FastAPI:
    """The FastAPI app: websockets ``settings.serving.path`` and ``twilio_path`` (one call per connection),
    WebRTC offers on ``webrtc_path`` (one call per peer connection) and ``GET /health``.

    Without ``engines`` they are loaded (and warmed up) in the app's lifespan, before it accepts calls.
    Every websocket passes :class:`server.gate.CallGate` first (token, Origin, call slots, message sizes,
    idle sockets), and a call's pipeline is built only once its first message has come; an offer passes
    the same token, Origin and slot rules (:mod:`server.webrtc_route`).
    """
    settings = settings or AssistantSettings()
    calls: set[AssistantCall] = set()
    memory = CallMemory()
    owned = engines is None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if app.state.engines is None:
            app.state.engines = await asyncio.to_thread(SpeechEngines.load, settings.speech)
            if settings.prewarm:
                await asyncio.to_thread(app.state.engines.warm_up)
        try:
            yield
        finally:
            for call in list(calls):
                await call.cancel("assistant shutting down")
            await webrtc.close()
            if owned and app.state.engines is not None:
                app.state.engines.close()

    app = FastAPI(title="CallSim built-in assistant", lifespan=lifespan)
    slots = CallSlots(settings.max_calls)  # websockets and WebRTC peers alike
    app.add_middleware(CallGate, settings=settings, slots=slots)
    app.state.engines = engines
    app.state.calls = calls
    app.state.memory = memory

    @app.get("/health", response_model=None)  # Health is for the type checker: nothing to validate
    async def health() -> Health:
        loaded: SpeechEngines | None = app.state.engines
        return {
            "status": "ok" if loaded is not None else "loading",
            "tts": loaded.tts.name if loaded is not None else None,
            "active_calls": len(calls),
        }

    @app.websocket(settings.serving.path)
    async def pcm(websocket: WebSocket) -> None:
        await websocket.accept()
        guard: GuardedSocket | None = websocket.scope.get(GUARD_SCOPE_KEY)
        if guard is not None and not await guard.first_message():
            return  # closed before saying anything (idle, too big, gone): no pipeline was ever built
        await take_call(websocket)

    @app.websocket(settings.serving.twilio_path)
    async def twilio(websocket: WebSocket) -> None:
        await websocket.accept()
        answered = await answer_twilio(websocket)
        if answered is not None:
            await take_call(websocket, *answered)

    async def take_call(
        websocket: WebSocket,
        serializer: PcmSerializer | TwilioCallSerializer | None = None,
        start: StartMessage | None = None,
    ) -> None:
        loaded: SpeechEngines | None = app.state.engines
        try:
            if loaded is None:
                raise EngineError("speech engines are not loaded")
            call = build_pipeline(
                websocket,
                tts=loaded.tts,
                asr=loaded.asr,
                settings=settings,
                policy_factory=policy_factory,
                tts_executor=loaded.tts_executor,
                asr_executor=loaded.asr_executor,
                serializer=serializer,
                start_message=start,
                sample_rate=TWILIO_RATE if isinstance(serializer, TwilioCallSerializer) else SAMPLE_RATE,
            )
        except Exception as exc:  # report it on the line, as the protocol asks, then close
            logger.exception("cannot set up a call")
            with contextlib.suppress(Exception):
                await websocket.send_json(
                    {"event": "error", "message": f"assistant cannot take calls: {exc}"}
                )
                await websocket.close(code=1011)
            return
        try:
            await run_call(call)
        finally:
            del call  # the last reference outside the pipeline's own cycles: let the collection free it
            memory.call_ended(len(calls))

    async def run_call(call: AssistantCall) -> None:
        """Run a built call to its end, counted in ``/health`` meanwhile.  Its caller tells ``memory`` the
        call ended once it holds no reference to it any more."""
        calls.add(call)
        try:
            await call.run()
        finally:
            calls.discard(call)
            logger.info(
                f"call {call.serializer.call_id} over after {call.elapsed():.1f}s "
                f"({call.serializer.bytes_in // 2 / SAMPLE_RATE:.1f}s in, "
                f"{call.serializer.bytes_out // 2 / SAMPLE_RATE:.1f}s out)"
            )

    webrtc = WebrtcRoutes(
        settings,
        slots,
        engines=lambda: app.state.engines,
        run=run_call,
        ended=lambda: memory.call_ended(len(calls)),
        policy_factory=policy_factory,
    )
    webrtc.register(app)
    app.state.webrtc = webrtc
    return app


# --- serving ------------------------------------------------------------------------------------------------


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: :func:`serve` (or the embedding program) owns signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class AssistantServer:
    """The assistant served by uvicorn inside the running event loop."""

    def __init__(
        self,
        settings: AssistantSettings | None = None,
        *,
        engines: SpeechEngines | None = None,
        policy_factory: PolicyFactory | None = None,
    ) -> None:
        self.settings = settings or AssistantSettings()
        self._engines = engines
        self._owns_engines = engines is None
        self._policy_factory = policy_factory
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self.port: int = self.settings.serving.port
        self.app: FastAPI | None = None

    @property
    def url(self) -> str:
        """The websocket URL calls connect to."""
        return self._ws_url(self.settings.serving.path)

    @property
    def twilio_url(self) -> str:
        """The websocket URL Twilio Media Streams calls connect to (``twilio+`` this as a CallSim target)."""
        return self._ws_url(self.settings.serving.twilio_path)

    @property
    def webrtc_url(self) -> str:
        """The URL WebRTC offers are posted to (``webrtc+`` this as a CallSim target)."""
        return "http" + self._ws_url(self.settings.serving.webrtc_path).removeprefix("ws")

    def _ws_url(self, path: str) -> str:
        host = self.settings.serving.host
        return f"ws://{host if host not in ('0.0.0.0', '::') else '127.0.0.1'}:{self.port}{path}"

    @property
    def engines(self) -> SpeechEngines | None:
        """The shared engines (once started)."""
        return self._engines

    async def start(self, timeout: float = 600.0) -> None:
        """Load and warm the engines, bind, and serve; returns once calls are accepted.

        Raises :class:`ConfigError` if the address cannot be bound and engine errors as they come.
        """
        if self.settings.configure_logging:
            configure_logging(self.settings.verbose)
        if self._engines is None:
            elapsed = stopwatch()
            self._engines = await asyncio.to_thread(SpeechEngines.load, self.settings.speech)
            logger.info(f"speech engines loaded in {elapsed():.1f}s")
        if self.settings.prewarm and not self._engines.warmup_secs:
            stages = await asyncio.to_thread(self._engines.warm_up)
            logger.info("engines warmed up: " + ", ".join(f"{k} {v:.2f}s" for k, v in stages.items()))
        self._socket = _bind(self.settings.serving.host, self.settings.serving.port)
        self.port = self._socket.getsockname()[1]
        self.app = create_app(self.settings, engines=self._engines, policy_factory=self._policy_factory)
        config = uvicorn.Config(
            self.app,
            log_level="debug" if self.settings.verbose else "warning",
            ws="websockets-sansio",
            ws_max_size=self.settings.serving.max_text_bytes,  # bigger: 1009 before it is even buffered
            lifespan="on",
            timeout_graceful_shutdown=3,
            log_config=None,
        )
        self._server = _QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        waited = stopwatch()
        while not self._server.started:
            if self._task.done():
                exc = self._task.exception() if not self._task.cancelled() else None
                raise ConfigError(f"the assistant server failed to start: {exc!r}") from exc
            if waited() > timeout:
                await self.stop()
                raise ConfigError(f"the assistant server did not start within {timeout:g}s")
            await asyncio.sleep(0.02)
        logger.info(f"built-in assistant listening on {self.url}")

    async def wait(self) -> None:
        """Serve until the server stops (e.g. on SIGINT/SIGTERM)."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def stop(self, timeout: float = 10.0) -> None:
        """Stop serving: active calls are told the assistant is going away, then closed."""
        task, server = self._task, self._server
        if task is not None and server is not None and not task.done():
            calls: set[AssistantCall] = self.app.state.calls if self.app is not None else set()
            for call in list(calls):  # each sends a hangup with this reason before its socket closes
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(call.cancel("assistant shutting down"), timeout=2.0)
            server.should_exit = True
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=timeout)
            except TimeoutError:
                server.force_exit = True
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            except (Exception, SystemExit) as exc:
                logger.warning(f"assistant server stopped with {exc!r}")
        self._task = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._owns_engines and self._engines is not None:
            self._engines.close()
            self._engines = None

    async def __aenter__(self) -> AssistantServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


def _bind(host: str, port: int) -> socket.socket:
    """Bind a listening TCP socket (so port 0 works and bind errors are ours to report)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"cannot resolve {host}:{port}: {exc}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


async def serve(
    settings: AssistantSettings | None = None,
    ready: asyncio.Event | asyncio.Future[str] | None = None,
    *,
    engines: SpeechEngines | None = None,
    policy_factory: PolicyFactory | None = None,
    handle_signals: bool = True,
    freeze: bool = False,
) -> None:
    """Serve the assistant until cancelled, or until SIGINT/SIGTERM (then it stops gracefully: active calls
    get a ``hangup``, and the function returns normally).

    ``ready`` is set once calls are accepted; pass a future instead of an event to receive the
    websocket URL (handy with ``port=0``).  Start-up failures raise :class:`~voice.errors.CallSimError`.
    ``freeze``: exempt what exists once listening from the cycle collector (:mod:`server.memory`); for a
    process that is only this server, as ``run_server``'s is.
    """
    server = AssistantServer(settings, engines=engines, policy_factory=policy_factory)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    if handle_signals and threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
                installed.append(sig)
    gateway: SipGateway | None = None
    try:
        await server.start()
        gateway = await gateway_in_front(server.url, server.settings.serving)  # with --sip
        if freeze:
            freeze_startup_objects()
        if isinstance(ready, asyncio.Event):
            ready.set()
        elif ready is not None and not ready.done():
            ready.set_result(server.url)
        stopping = asyncio.create_task(stop.wait())
        serving = asyncio.create_task(server.wait())
        try:
            await asyncio.wait({stopping, serving}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            serving.cancel()
        if stop.is_set():
            logger.info("signal received: stopping the built-in assistant")
    finally:
        if gateway is not None:
            await gateway.close()
        await server.stop()
        for sig in installed:
            loop.remove_signal_handler(sig)


def run_server(
    settings: AssistantSettings | None = None, *, policy_factory: PolicyFactory | None = None
) -> None:
    """Serve the assistant in the foreground until Ctrl-C (blocking)."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(settings, policy_factory=policy_factory, freeze=True))
