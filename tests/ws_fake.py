"""A tiny raw-PCM websocket assistant for tests that run ``callsim`` as a real process.

It greets, then answers each caller turn ``reply_ms`` after the caller falls silent with a short tone: no
models, so a call takes only as long as its audio.  Run it in a background thread with :class:`FakeServer`,
or as a process of its own (``python -m tests.ws_fake``: it prints its port), e.g. one that dies mid-call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import threading
from collections.abc import Collection, Iterator

import numpy as np
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tests.fakes import tone
from voice.core.audio import FRAME_SAMPLES, active_bounds, ms_to_samples, to_bytes


async def handle(
    ws: ServerConnection,
    *,
    greeting_ms: float = 300,
    reply_ms: float = 300,
    fail_ids: Collection[str] = (),
    die_after_frames: int | None = None,
) -> None:
    """One call: greet, then reply to every caller turn after ``reply_ms`` of its silence.

    A call whose id is in ``fail_ids`` gets an ``error`` event instead (a failed call); with
    ``die_after_frames`` the whole process exits once it has heard that many caller frames (a crash).
    """
    try:
        start = json.loads(await ws.recv())
        assert start["event"] == "start"
        if start["call_id"] in fail_ids:
            await ws.send(json.dumps({"event": "error", "message": "told to fail"}))
            return
        await _say(ws, greeting_ms)
        in_speech, silent, frames = False, 0, 0
        async for message in ws:
            if isinstance(message, str):
                if json.loads(message).get("event") == "stop":
                    break
                continue
            frames += 1
            if die_after_frames is not None and frames >= die_after_frames:
                os._exit(3)
            pcm = np.frombuffer(message, dtype="<i2")
            if active_bounds(pcm) is not None:
                in_speech, silent = True, 0
            elif in_speech:
                silent += len(pcm)
                if silent >= ms_to_samples(reply_ms):
                    in_speech = False
                    await _say(ws, 600)
    except ConnectionClosed:
        pass


async def _say(ws: ServerConnection, ms: float) -> None:
    audio = tone(ms, f0=300.0)
    for k in range(0, len(audio), FRAME_SAMPLES):
        await ws.send(to_bytes(audio[k : k + FRAME_SAMPLES]))


class FakeServer:
    """The fake assistant on a free localhost port, served from its own thread and event loop."""

    def __init__(self, port: int = 0, **options: object) -> None:
        self.handler = functools.partial(handle, **options)  # e.g. fail_ids (a set can change meanwhile)
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Future[None] | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def target(self) -> str:
        return f"pcm+ws://127.0.0.1:{self.port}/pcm"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = self._loop.create_future()
        async with serve(self.handler, "127.0.0.1", self.port) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop

    def start(self) -> FakeServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set_result, None)
            self._thread.join(10)

    @contextlib.contextmanager
    def running(self) -> Iterator[FakeServer]:
        self.start()
        try:
            yield self
        finally:
            self.stop()


async def _serve_forever(**options: object) -> None:
    async with serve(functools.partial(handle, **options), "127.0.0.1", 0) as server:
        print(next(iter(server.sockets)).getsockname()[1], flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description="the fake assistant in a process of its own; prints its port")
    p.add_argument("--die-after-frames", type=int, help="exit (code 3) after hearing this many frames")
    asyncio.run(_serve_forever(die_after_frames=p.parse_args().die_after_frames))
