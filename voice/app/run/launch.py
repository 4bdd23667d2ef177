"""Start the assistants CallSim calls in child processes, and stop them afterwards: voice/'s one launcher.

Three programs of ``server/`` are started from here and nowhere else: the built-in assistant (``python -m
server``, for runs and ``scripts/bench_stages``), the echo (``python -m server.assistants.echo``, for
``scripts/bench_capacity``) and the reference (``python -m server.assistants.reference``, for
``scripts/bench_fidelity``).  A separate process keeps the assistant's event loop (and the built-in one's
model inference) from disturbing the caller's frame pacing, and makes it an assistant like any other:
reached only through its websocket.

Every launch goes the same way: pick a free localhost port, start the module with ``--port``, wait until the
port accepts a connection (failing early if the child exits), and on the way out terminate it (killed if it
has not exited within :data:`STOP_TIMEOUT_S`).  A UDP port cannot be probed by connecting: an assistant
behind SIP (``--sip``) is ready once it answers an OPTIONS request (:func:`wait_sip_listening`).  On Linux
the child also dies with its parent (``PR_SET_PDEATHSIG``): a run killed with SIGKILL leaves no 1 GB
assistant behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from voice.core.clock import MonotonicClock
from voice.errors import EngineUnavailable
from voice.lines.sip_message import SipResponse, parse_message
from voice.lines.sip_probe import options_request
from voice.lines.sip_target import SipTarget

READY_TIMEOUT_S = 180.0  # the built-in assistant loads and warms its speech models first
TEST_ASSISTANT_READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
_POLL_S = 0.2
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if sys.platform == "linux" else None


def _child_setup(nice: int) -> Callable[[], None] | None:
    """What the child runs between fork and exec: die with the parent (Linux), lower its priority."""
    if _LIBC is None and not nice:
        return None
    libc = _LIBC  # looked up before the fork: the child only makes the calls

    def setup() -> None:
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if nice:
            os.nice(nice)

    return setup


def free_port(udp: bool = False) -> int:
    """A localhost port (TCP, or UDP) free right now (the child binds it a moment later)."""
    with socket.socket(type=socket.SOCK_DGRAM if udp else socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def builtin_assistant(
    *,
    tts: str,
    policy: str = "rules",
    port: int | None = None,
    log_path: Path | None = None,
    extra_args: list[str] | None = None,
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
    sip_port: int | None = None,
) -> AsyncIterator[str]:
    """Run ``python -m server`` on a free localhost port; yield its ``pcm+ws://`` target once it listens.

    ``on_start`` is given the child process as soon as it starts (a run watches it for a crash);
    ``sip_port``: its SIP gateway's UDP port too (``--sip``, ``builtin+sip``), waited for as well."""
    port = port or free_port()
    args = ["--tts", tts, *(["--policy", policy] if policy != "rules" else []), *(extra_args or [])]
    args += ["--sip", str(sip_port)] if sip_port is not None else []
    with contextlib.ExitStack() as files:
        log = files.enter_context(open(log_path, "wb")) if log_path else None
        what = "the built-in assistant"
        running = _running(
            what, "server", args, port, READY_TIMEOUT_S, log=log, on_start=on_start, sip=sip_port
        )
        async with running:
            yield f"pcm+ws://127.0.0.1:{port}/pcm"


# The reference assistant behind each transport it serves: its module, and its URL on a port.
TEST_SERVERS: dict[str, tuple[list[str], str]] = {
    "pcm": ([], "ws://127.0.0.1:{port}/pcm"),
    "webrtc": (["--webrtc"], "http://127.0.0.1:{port}/api/offer"),
    "sip": (["--sip"], "sip:assistant@127.0.0.1:{port}"),  # --port is then the SIP gateway's UDP port
}


@contextlib.asynccontextmanager
async def reference_assistant(
    behaviour: Mapping[str, Any] | None = None, transport: str = "pcm"
) -> AsyncIterator[str]:
    """Run the reference assistant behind ``transport`` (:data:`TEST_SERVERS`); yield its URL once it
    listens (``ws://`` for the raw PCM protocol, ``http://.../api/offer`` for WebRTC, ``sip:`` for SIP).

    The behaviour comes with each call (``start.dialogue.reference``), so one server plays every case;
    ``behaviour`` (``ReferenceBehaviour.to_json()``) is what it does for calls that bring none.
    """
    transport_args, url = TEST_SERVERS[transport]
    module = "server.assistants.reference"
    sip = transport == "sip"
    port = free_port(udp=sip)
    args = ["--behaviour", json.dumps(dict(behaviour))] if behaviour is not None else []
    args += transport_args
    what, timeout_s = "the reference assistant", TEST_ASSISTANT_READY_TIMEOUT_S
    async with _running(what, module, args, port, timeout_s, probe_tcp=not sip, sip=port if sip else None):
        yield url.format(port=port)


@contextlib.contextmanager
def echo_assistant(
    delay_ms: int, extra: Sequence[str] = (), nice: int = 0, transport: str = "pcm"
) -> Iterator[tuple[str, int]]:
    """Run ``python -m server.assistants.echo`` on a free port behind ``transport`` (:data:`TEST_SERVERS`);
    yield (url, pid) once it listens.

    ``nice`` > 0 runs it at a lower CPU priority, so that on a small machine the assistant's work yields
    to the callers' frame deadlines (it would run on other hardware in a real test).  Synchronous: the
    capacity bench drives its caller processes from plain code, not from an event loop.
    """
    transport_args, url = TEST_SERVERS[transport]
    port = free_port(udp=transport == "sip")
    args = ["--delay-ms", str(delay_ms), *extra, *transport_args]
    proc = _start("server.assistants.echo", args, port, nice=nice)
    try:
        wait = wait_sip_listening if transport == "sip" else wait_listening
        wait(proc, port, "the echo assistant", TEST_ASSISTANT_READY_TIMEOUT_S)
        yield url.format(port=port), proc.pid
    finally:
        _stop(proc)


def reaper() -> subprocess.Popen[bytes]:
    """Start :mod:`voice.app.run.reaper` for this process: it kills what this process leaves behind if it is
    killed (a local Ray's processes).  Not tied to this process's life itself, on purpose."""
    return subprocess.Popen(
        [sys.executable, "-m", "voice.app.run.reaper", str(os.getpid())],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C to the run's process group must not stop the reaper first
    )


# --- the shared steps --------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _running(
    what: str,
    module: str,
    args: Sequence[str],
    port: int,
    ready_timeout_s: float,
    *,
    log: IO[bytes] | None = None,
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
    probe_tcp: bool = True,
    sip: int | None = None,
) -> AsyncIterator[None]:
    """:func:`echo_assistant`'s steps for callers inside an event loop (the waits run in a thread):
    ``port`` probed over TCP unless not ``probe_tcp``, the SIP port ``sip`` with OPTIONS."""
    proc = _start(module, args, port, log=log)
    if on_start is not None:
        on_start(proc)
    try:
        if probe_tcp:
            await asyncio.to_thread(wait_listening, proc, port, what, ready_timeout_s)
        if sip is not None:
            await asyncio.to_thread(wait_sip_listening, proc, sip, what, ready_timeout_s)
        yield
    finally:
        await asyncio.to_thread(_stop, proc)


def _start(
    module: str, args: Sequence[str], port: int, *, log: IO[bytes] | None = None, nice: int = 0
) -> subprocess.Popen[bytes]:
    """``python -m module --host 127.0.0.1 --port port args``; its output goes to ``log`` (or nowhere)."""
    cmd = [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", str(port), *args]
    return subprocess.Popen(
        cmd,
        stdout=log if log is not None else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log is not None else None,
        preexec_fn=_child_setup(nice),
    )


def wait_listening(proc: subprocess.Popen[bytes], port: int, what: str, timeout_s: float) -> None:
    """Return once ``port`` accepts a connection; raise if the child exits or ``timeout_s`` passes first."""
    clock = MonotonicClock()
    deadline = clock.now_ns() + int(timeout_s * 1e9)
    while clock.now_ns() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            pass
        try:
            code = proc.wait(_POLL_S)  # the pause between attempts, which also notices an early exit
        except subprocess.TimeoutExpired:
            continue
        raise EngineUnavailable(f"{what} exited at start-up (code {code})")
    raise EngineUnavailable(f"{what} did not listen on port {port} within {timeout_s:.0f} s")


def wait_sip_listening(proc: subprocess.Popen[bytes], port: int, what: str, timeout_s: float) -> None:
    """Return once a SIP OPTIONS to ``127.0.0.1:port`` (UDP) is answered; raise if the child exits or
    ``timeout_s`` passes first."""
    clock = MonotonicClock()
    deadline = clock.now_ns() + int(timeout_s * 1e9)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        probe.settimeout(_POLL_S)
        options = options_request(
            SipTarget("assistant", "127.0.0.1", port), ("127.0.0.1", probe.getsockname()[1])
        )
        while clock.now_ns() < deadline:
            with contextlib.suppress(OSError):  # refused (nothing bound yet), or no answer this time
                probe.sendto(options, ("127.0.0.1", port))
                if isinstance(_parsed(probe.recv(65535)), SipResponse):
                    return
            if (code := proc.poll()) is not None:
                raise EngineUnavailable(f"{what} exited at start-up (code {code})")
    raise EngineUnavailable(f"{what} did not answer SIP on UDP port {port} within {timeout_s:.0f} s")


def _parsed(data: bytes) -> object:
    try:
        return parse_message(data)
    except ValueError:
        return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the child; kill it if it has not exited within :data:`STOP_TIMEOUT_S`."""
    proc.terminate()
    try:
        proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
