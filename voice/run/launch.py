"""Start the built-in assistant (``server``) in a child process for a run, and stop it afterwards.

A separate process keeps the assistant's event loop and model inference from disturbing the caller's
frame pacing, and makes it an assistant like any other: reached only through its websocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from voice.errors import EngineUnavailable

READY_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def builtin_assistant(
    *,
    tts: str,
    port: int | None = None,
    log_path: Path | None = None,
    extra_args: list[str] | None = None,
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> AsyncIterator[str]:
    """Run ``python -m server`` on a free localhost port; yield its ``pcm+ws://`` target once it listens.

    ``on_start`` is given the child process as soon as it starts (a run watches it for a crash)."""
    port = port or free_port()
    args = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port), "--tts", tts]
    args += extra_args or []
    log = open(log_path, "wb") if log_path else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    if on_start is not None:
        on_start(proc)
    try:
        await _wait_listening(proc, port)
        yield f"pcm+ws://127.0.0.1:{port}/pcm"
    finally:
        proc.terminate()
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), 10)
        except TimeoutError:
            proc.kill()
            await asyncio.to_thread(proc.wait)
        if log_path and not isinstance(log, int):
            log.close()


async def _wait_listening(proc: subprocess.Popen[bytes], port: int) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + READY_TIMEOUT_S
    while loop.time() < deadline:
        if proc.poll() is not None:
            raise EngineUnavailable(f"the built-in assistant exited at start-up (code {proc.returncode})")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.2)
    raise EngineUnavailable(
        f"the built-in assistant did not listen on port {port} within {READY_TIMEOUT_S:.0f} s"
    )
