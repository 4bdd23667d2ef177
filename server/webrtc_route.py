"""The built-in assistant answering WebRTC offers the way pipecat's development runner does.

Why: pipecat's runner (``python bot.py``) serves WebRTC by default, so that is where most pipecat bots live,
and CallSim dials them there.  Answering the same signalling lets a user see that path work against the
built-in before pointing it at their own bot, and tests CallSim's WebRTC line against pipecat's real
implementation (``SmallWebRTCRequestHandler``, ``SmallWebRTCConnection``, ``SmallWebRTCTransport``, over
aiortc), as :mod:`server.twilio_route` does with pipecat's Twilio serializer.  What one call is (its
transport, the playout estimate, media on loopback): :mod:`server.webrtc_call`.

* **Signalling** as ``pipecat/runner/run.py`` ``_setup_webrtc_routes``: ``POST`` ``{sdp, type, pc_id,
  request_data}`` → ``{sdp, type, pc_id}`` (a known ``pc_id`` renegotiates its call); ``PATCH`` ``{pc_id,
  candidates: [{candidate, sdp_mid, sdp_mline_index}]}`` for trickle ICE, 404 for an unknown ``pc_id``.
  Unlike the runner's, a malformed body, an SDP without audio or one aiortc cannot take is a 400 whose
  ``detail`` says what is wrong, never a traceback.
* **The dialogue** comes in ``request_data``: ``call_id`` and ``dialogue`` (the assistant view) make the
  ``start`` message the ``/pcm`` route gets (:func:`server.twilio_route.start_message`), handed to the
  policy once the peer is connected; other keys are ignored.
* **The door** (:mod:`server.gate`): an offer is plain HTTP, which the gate's websocket rules do not see, so
  they are applied here: the token and ``Origin`` on both methods (401, 403), a call slot for a new offer
  (the same count as the websockets': 503 with ``Retry-After`` when busy), a body of at most
  ``max_text_bytes`` (413) nesting at most as deep as a control message.  A peer that has not connected
  after ``socket_idle_secs`` is dropped (the silent socket's rule); a call is ended after
  ``max_call_secs``.  Shutdown ends every call and closes every peer connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pipecat.frames.frames import EndFrame
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.transports.smallwebrtc.request_handler import (
    IceCandidate,
    SmallWebRTCPatchRequest,
    SmallWebRTCRequest,
    SmallWebRTCRequestHandler,
)

from server.assistant import AssistantCall
from server.config import AssistantSettings, SpeechEngines
from server.gate import MAX_JSON_DEPTH, CallSlots, check_upgrade, json_depth
from server.policy.processor import PolicyFactory
from server.webrtc_call import build_webrtc_call
from voice.errors import EngineError
from voice.lines.webrtc_ice import gather_on, media_addresses

__all__ = ["BadRequest", "Offer", "WebrtcRoutes", "parse_candidates", "parse_offer"]

logger = logging.getLogger(__name__)

OFFER_TIMEOUT_SECS = 10.0  # setting the offer and gathering (host candidates only: milliseconds)


class BadRequest(Exception):
    """A request refused with ``status`` and a message saying what is wrong with it."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Offer:
    """A checked ``POST`` body."""

    sdp: str
    type: str
    pc_id: str | None
    restart_pc: bool
    request_data: dict[str, Any]


def parse_offer(body: Any) -> Offer:
    """The offer in a parsed JSON body, or :class:`BadRequest` saying what is wrong with it."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object {sdp, type, pc_id, request_data}")
    sdp, kind, pc_id = body.get("sdp"), body.get("type"), body.get("pc_id")
    if not isinstance(sdp, str) or not sdp.strip():
        raise BadRequest("'sdp' must be the offer's SDP, a non-empty string")
    if kind != "offer":
        raise BadRequest(f"'type' must be \"offer\", not {kind!r}")
    if pc_id is not None and not isinstance(pc_id, str):
        raise BadRequest("'pc_id' must be a string (the one an earlier answer gave) or absent")
    restart = body.get("restart_pc") or False
    if not isinstance(restart, bool):
        raise BadRequest("'restart_pc' must be true or false")
    data = body.get("request_data", body.get("requestData"))
    if data is not None and not isinstance(data, dict):
        raise BadRequest("'request_data' must be a JSON object ({call_id, dialogue, ...})")
    if not any(line.strip().startswith("m=audio ") for line in sdp.splitlines()):
        raise BadRequest("the offer has no audio (no m=audio section): the assistant answers voice calls")
    return Offer(sdp, kind, pc_id, restart, dict(data or {}))


def parse_candidates(body: Any) -> SmallWebRTCPatchRequest:
    """The trickled candidates in a parsed ``PATCH`` body, or :class:`BadRequest`."""
    if not isinstance(body, dict) or not isinstance(body.get("pc_id"), str):
        raise BadRequest("the body must be a JSON object {pc_id, candidates}")
    raw = body.get("candidates")
    if not isinstance(raw, list):
        raise BadRequest("'candidates' must be a list of {candidate, sdp_mid, sdp_mline_index}")
    candidates = []
    for c in raw:
        ok = isinstance(c, dict) and isinstance(c.get("candidate"), str) and isinstance(c.get("sdp_mid"), str)
        index = c.get("sdp_mline_index") if isinstance(c, dict) else None
        if not ok or not isinstance(index, int) or isinstance(index, bool):
            raise BadRequest(f"each candidate must be {{candidate, sdp_mid, sdp_mline_index}}: {str(c)[:80]}")
        candidates.append(IceCandidate(c["candidate"], c["sdp_mid"], index))
    return SmallWebRTCPatchRequest(pc_id=body["pc_id"], candidates=candidates)


async def read_json(request: Request, limit: int) -> Any:
    """The request's JSON body, at most ``limit`` bytes and :data:`~server.gate.MAX_JSON_DEPTH` deep."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BadRequest(f"body over {limit} bytes", status=413)
    try:
        value = json.loads(body)
    except RecursionError:
        raise BadRequest(f"the body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:
        raise BadRequest(f"the body is not JSON ({exc})") from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise BadRequest(f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def _refusal(status: int, message: str) -> JSONResponse:
    headers = {401: {"WWW-Authenticate": "Bearer"}, 503: {"Retry-After": "1"}}.get(status, {})
    return JSONResponse({"detail": message}, status_code=status, headers=headers)


class WebrtcRoutes:
    """``POST`` and ``PATCH`` on ``settings.serving.webrtc_path``, the peer connections (pipecat's request
    handler: ``pc_id`` → connection) and the tasks running their calls (each through ``run``, the app's
    call runner, which counts it in ``/health``)."""

    def __init__(
        self,
        settings: AssistantSettings,
        slots: CallSlots,
        *,
        engines: Callable[[], SpeechEngines | None],
        run: Callable[[AssistantCall], Awaitable[None]],
        ended: Callable[[], None] = lambda: None,
        policy_factory: PolicyFactory | None = None,
    ) -> None:
        self.settings, self.slots = settings, slots
        self._engines, self._run, self._ended, self._policy_factory = engines, run, ended, policy_factory
        self.handler = SmallWebRTCRequestHandler()  # no ICE servers: host candidates only, no STUN
        self.addresses = media_addresses(settings.serving.host)
        self.calls: dict[str, AssistantCall] = {}  # pc_id → its call, while it runs
        self._tasks: set[asyncio.Task[None]] = set()

    def register(self, app: FastAPI) -> None:
        path = self.settings.serving.webrtc_path
        app.add_api_route(path, self.offer, methods=["POST"], response_model=None)
        app.add_api_route(path, self.patch, methods=["PATCH"], response_model=None)

    async def offer(self, request: Request) -> JSONResponse:
        """Answer an offer: a new call, or a renegotiation of a running one (its ``pc_id``)."""
        denial = check_upgrade(request.scope, self.settings)
        if denial is not None:
            logger.warning(f"refused a WebRTC offer: {denial.status} {denial.reason}")
            return _refusal(denial.status, denial.reason)
        try:
            offer = parse_offer(await read_json(request, self.settings.serving.max_text_bytes))
        except BadRequest as exc:
            logger.warning(f"refused a WebRTC offer: {exc}")
            return _refusal(exc.status, str(exc))
        if offer.pc_id in self.calls:
            return await self._answer(offer, None)
        busy = self.slots.busy()
        if busy is not None:
            logger.warning(f"refused a WebRTC call: {busy}")
            return _refusal(503, busy)
        self.slots.taken += 1  # before the first await: two offers at once cannot both take the last slot
        released = False
        try:
            taken: list[tuple[SmallWebRTCConnection, AssistantCall | Exception]] = []
            response = await self._answer(offer, taken)
            if not taken:
                return response
            connection, call = taken[0]
            if isinstance(call, Exception) or response.status_code != 200:
                await connection.disconnect()
                failed = isinstance(call, Exception)
                return _refusal(503, f"assistant cannot take calls: {call}") if failed else response
            self.calls[connection.pc_id] = call
            task = asyncio.create_task(self._run_call(connection, call))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            released = True  # the call's task gives the slot back
            return response
        finally:
            if not released:
                self.slots.taken -= 1

    async def _answer(
        self, offer: Offer, taken: list[tuple[SmallWebRTCConnection, AssistantCall | Exception]] | None
    ) -> JSONResponse:
        """pipecat's handler answers (gathering on :attr:`addresses`); a new connection's call is built."""

        async def on_connection(connection: SmallWebRTCConnection) -> None:
            try:
                engines = self._engines()
                if engines is None:
                    raise EngineError("speech engines are not loaded")
                call: AssistantCall | Exception = build_webrtc_call(
                    connection,
                    engines,
                    settings=self.settings,
                    policy_factory=self._policy_factory,
                    request_data=offer.request_data,
                )
            except Exception as exc:
                logger.exception("cannot set up a WebRTC call")
                call = exc
            if taken is not None:
                taken.append((connection, call))

        request = SmallWebRTCRequest(offer.sdp, offer.type, offer.pc_id, offer.restart_pc, offer.request_data)
        try:
            with gather_on(self.addresses):
                answer = await asyncio.wait_for(
                    self.handler.handle_web_request(request, on_connection), OFFER_TIMEOUT_SECS
                )
        except HTTPException as exc:
            return _refusal(exc.status_code, str(exc.detail))
        except TimeoutError:
            return _refusal(503, f"could not answer within {OFFER_TIMEOUT_SECS:g} s")
        except Exception as exc:  # aiortc could not take the SDP: the offer's fault
            logger.warning(f"refused a WebRTC offer: {exc!r}")
            return _refusal(400, f"cannot answer this offer: {type(exc).__name__}: {exc}".rstrip(": "))
        if answer is None:
            return _refusal(400, "cannot answer this offer")
        return JSONResponse(answer)

    async def patch(self, request: Request) -> JSONResponse:
        """Add trickled ICE candidates to a peer connection (404 when its ``pc_id`` is unknown)."""
        denial = check_upgrade(request.scope, self.settings)
        if denial is not None:
            return _refusal(denial.status, denial.reason)
        try:
            patch = parse_candidates(await read_json(request, self.settings.serving.max_text_bytes))
            await self.handler.handle_patch_request(patch)
        except BadRequest as exc:
            return _refusal(exc.status, str(exc))
        except HTTPException as exc:
            return _refusal(exc.status_code, str(exc.detail))
        except Exception as exc:  # a candidate line aiortc cannot parse
            return _refusal(400, f"bad ICE candidate: {type(exc).__name__}: {exc}")
        return JSONResponse({"status": "success"})

    async def _run_call(self, connection: SmallWebRTCConnection, call: AssistantCall) -> None:
        """Run one call to its end, then close its peer connection, give its slot back and, holding no
        reference to it any more, tell the app it ended (which collects its pipeline's cycles)."""
        pc_id = connection.pc_id
        limits = asyncio.create_task(self._limits(connection, weakref.ref(call)))
        try:
            await self._run(call)
        finally:
            del call
            self.calls.pop(pc_id, None)
            self.slots.taken -= 1
            limits.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(_hang_up(connection, limits), 5.0)
            del connection, limits
            self._ended()

    async def _limits(self, connection: SmallWebRTCConnection, call: weakref.ref[AssistantCall]) -> None:
        """Drop a peer that has not connected within ``socket_idle_secs``; end a call at ``max_call_secs``."""
        serving = self.settings.serving
        for _ in range(max(1, round(serving.socket_idle_secs / 0.05))):
            if connection.pc.connectionState == "connected":
                break
            await asyncio.sleep(0.05)
        else:
            if (running := call()) is not None:
                logger.warning(f"call {running.serializer.call_id}: the peer never connected; dropping it")
                await running.worker.cancel(reason="the peer never connected")
            return
        await asyncio.sleep(serving.max_call_secs)
        if (running := call()) is not None:
            logger.warning(f"call {running.serializer.call_id}: reached {serving.max_call_secs}s, hanging up")
            await running.worker.queue_frame(EndFrame(reason="maximum call duration reached"))

    async def close(self, timeout: float = 5.0) -> None:
        """Close every peer connection (shutdown), and wait a little for the calls' tasks to end."""
        for call in list(self.calls.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(call.cancel("assistant shutting down"), timeout)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.handler.close(), timeout)
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)


async def _hang_up(connection: SmallWebRTCConnection, limits: asyncio.Task[None]) -> None:
    """Close the peer connection (a no-op when the pipeline's output already has) and wait for its event
    handlers (pipecat's request handler forgets the connection in one) and the call's limits to finish."""
    await connection.disconnect()
    await connection.cleanup()
    await asyncio.wait([limits])
