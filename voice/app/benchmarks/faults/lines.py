"""Hostile assistants on the lines: floods of control events and oversized messages (issue 15, item 1).

Each fault starts a small websocket bot in a thread of this process, then runs a real ``callsim bench``
against it as a subprocess (measured with :func:`~voice.app.benchmarks.faults.fault.run_measured`, so the peak
memory is CallSim's own), on a one-turn dialogue written to the scratch folder, with the cheap offline
``espeak`` voice and no transcription or report.  The bot greets, misbehaves for :data:`HOSTILE_S`
seconds, then says a reply and hangs up (if the call is still on).

A row is ok when the call ended with a recorded reason, its WAV and event log were kept, the dropped
records were counted (``capped`` in the log, ``records_capped`` in the metrics) or the oversized message
was refused with a reason that says so, and the event log stayed small; :class:`FaultOutcome.passed`
adds the memory bound (300 MB).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from websockets.exceptions import ConnectionClosed

from voice.app.benchmarks.faults.fault import (
    REPO,
    Fault,
    FaultOutcome,
    callsim_command,
    run_measured,
    sleep_s,
)
from voice.core.clock import monotonic_s
from voice.lines.codec import mulaw_encode
from voice.lines.ws_server import ServerConnection, bound_port, serve_websocket

HOSTILE_S = 8.0  # how long a flooding bot floods
# a hostile call's event log must stay under this: 1000 records of a kind, each at most ~4 KB (a flood of
# 60 KB logs leaves ~4 MB), where an uncapped log grew by ~7 MB a second
MAX_LOG_BYTES = 8 * 1024 * 1024
BENCH_TIMEOUT_S = 120.0  # the bench is killed after this (the row then fails: nothing may hang)
DIALOGUE = {
    "id": "hostile-01",
    "scenario": "takeout",
    "preset": {"type": "regular", "text": "外卖放门口就行。"},
    "owner_goal": "外卖放门口",
    "caller_goal": "把外卖送到",
    "relation": "alignment",
    "turns": [
        {"role": "assistant", "text": "您好，请问有什么事？"},
        {"role": "caller", "text": "你好，外卖到了。"},
        {"role": "assistant", "text": "好的，放门口吧。"},
    ],
}

Bot = Callable[[ServerConnection], Awaitable[None]]


def _tone(seconds: float, rate: int) -> np.ndarray[Any, np.dtype[np.int16]]:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16)


async def _pcm_say(ws: ServerConnection, seconds: float) -> None:
    pcm = _tone(seconds, 16000).tobytes()
    for i in range(0, len(pcm), 640):
        await ws.send(pcm[i : i + 640])


async def _for(seconds: float, send: Callable[[], Awaitable[None]]) -> None:
    """Call ``send`` as fast as the socket takes it, for ``seconds``."""
    end = monotonic_s() + seconds
    while monotonic_s() < end:
        await send()


def pcm_bot(misbehave: Callable[[ServerConnection], Awaitable[None]]) -> Bot:
    """A raw-PCM assistant: greets, ``misbehave``s, then replies and hangs up."""

    async def bot(ws: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.recv()  # start
            await _pcm_say(ws, 1.0)
            await misbehave(ws)
            await _pcm_say(ws, 1.0)
            await ws.send(json.dumps({"event": "hangup", "reason": "done"}))
            await ws.wait_closed()

    return bot


def twilio_bot(misbehave: Callable[[ServerConnection, str], Awaitable[None]]) -> Bot:
    """A Twilio Media Streams bot: greets, ``misbehave``s, then replies and closes the stream."""

    async def say(ws: ServerConnection, sid: str, seconds: float) -> None:
        ulaw = mulaw_encode(_tone(seconds, 8000))
        for i in range(0, len(ulaw), 160):
            payload = base64.b64encode(ulaw[i : i + 160]).decode()
            await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": payload}}))

    async def bot(ws: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.recv()  # connected
            sid = json.loads(await ws.recv())["streamSid"]
            await say(ws, sid, 1.0)
            await misbehave(ws, sid)
            await say(ws, sid, 1.0)
            await asyncio.sleep(2.0)
            await ws.close()

    return bot


@contextlib.contextmanager
def serving(bot: Bot) -> Iterator[int]:
    """Run ``bot`` as a websocket server on a free loopback port, in a thread; yields the port."""
    loop = asyncio.new_event_loop()
    started: asyncio.Future[Any] = loop.create_future()
    stop = asyncio.Event()

    async def main() -> None:
        async with await serve_websocket(bot, max_size=None) as server:  # a bot may send anything
            started.set_result(bound_port(server))
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    deadline = monotonic_s() + 10
    while not started.done() and monotonic_s() < deadline:
        sleep_s(0.01)
    try:
        yield int(started.result())
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)


def run_bench(scratch: Path, target: str) -> tuple[Any, Path]:
    """``callsim bench`` of the one-turn dialogue against ``target``; returns (measured, output folder)."""
    dialogues = scratch / "dialogues.jsonl"
    dialogues.write_text(json.dumps(DIALOGUE, ensure_ascii=False) + "\n", encoding="utf-8")
    out = scratch / "out"
    cmd = callsim_command(
        "bench", "--dialogues", str(dialogues), "--target", target, "--out", str(out),
        "--tts", "espeak", "--no-transcribe", "--no-report", "--concurrency", "1",
    )  # fmt: skip
    return run_measured(cmd, timeout=BENCH_TIMEOUT_S, cwd=scratch, env=_this_checkout()), out


def _this_checkout() -> dict[str, str]:
    """``PYTHONPATH`` so that the bench runs this checkout's CallSim, not whatever is installed."""
    root = str(REPO)
    return {"PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}


def judge(
    scratch: Path, target_of: Callable[[int], str], bot: Bot, *, expect: str, expect_flood: bool = False
) -> FaultOutcome:
    """Run the bench against ``bot``; ok as the module says.  ``expect``: ``capped`` (records were
    dropped and counted) or ``refused`` (an oversized message ended the call as a protocol error);
    ``expect_flood``: a ``protocol_error: flood`` end is right too (more marks pending than a line holds)."""
    with serving(bot) as port:
        measured, out = run_bench(scratch, target_of(port))
    logs = sorted(out.rglob("*.events.jsonl"))
    wavs = sorted(out.rglob("*.wav"))
    partials = sorted(out.rglob("*.partial"))
    problems: list[str] = []
    if measured.timed_out:
        problems.append(f"bench did not end within {BENCH_TIMEOUT_S:.0f} s")
    if "Traceback" in measured.stderr:
        problems.append("traceback: " + measured.stderr.strip().splitlines()[-1][:200])
    if len(logs) != 1 or len(wavs) != 1 or partials:
        problems.append(f"kept {len(wavs)} WAV, {len(logs)} logs, {len(partials)} partial")
        return FaultOutcome(
            "; ".join(problems), False, measured.seconds, measured.peak_mb, calls_lost=1, kept="0/1"
        )
    records = [json.loads(line) for line in logs[0].read_text(encoding="utf-8").splitlines()]
    end = next((r for r in records if r.get("kind") == "call_end"), None)
    # the capped record's counts, as voice.core.eventlog writes them: {kind: {"received": n, "kept": k}}
    capped: dict[str, dict[str, int]] = next((r["counts"] for r in records if r.get("kind") == "capped"), {})
    metrics_files = sorted(out.rglob("*.metrics.json"))
    metrics = json.loads(metrics_files[0].read_text(encoding="utf-8")) if metrics_files else {}
    size = logs[0].stat().st_size
    detail = str(end.get("detail", "")) if end else ""
    reason = "no call_end" if end is None else detail if detail.startswith(end["reason"]) else end["reason"]
    reason += f": {detail}" if detail and not detail.startswith(reason) else ""
    if end is None:
        problems.append("no call_end in the log")
    if size > MAX_LOG_BYTES:
        problems.append(f"event log of {size / 1e6:.1f} MB")
    flooded = end is not None and "flood" in end.get("detail", "")  # a flood of pending marks ends a call
    if (
        expect == "capped"
        and not (flooded and expect_flood)
        and (not capped or metrics.get("records_capped") != capped)
    ):
        problems.append("dropped records not counted in the log and the metrics")
    if expect == "refused" and (end is None or "larger than" not in end.get("detail", "")):
        problems.append("the oversized message was not refused")
    flood = ", ".join(f"{k} {v['received']:,} sent, {v['kept']:,} kept" for k, v in capped.items())
    outcome = f"{reason[:110]}; {flood or 'nothing capped'}; log {size / 1024:.0f} KB"
    if problems:
        outcome += " -- " + "; ".join(problems)
    return FaultOutcome(outcome, not problems, measured.seconds, measured.peak_mb, kept="1/1 recordings")


def _pcm(port: int) -> str:
    return f"pcm+ws://127.0.0.1:{port}/pcm"


def _twilio(port: int) -> str:
    return f"twilio+ws://127.0.0.1:{port}/twilio"


def _text_flood(message: str) -> Callable[[ServerConnection], Awaitable[None]]:
    async def misbehave(ws: ServerConnection) -> None:
        await _for(HOSTILE_S, lambda: ws.send(message))

    return misbehave


def _send_once(message: str | bytes) -> Callable[[ServerConnection], Awaitable[None]]:
    async def misbehave(ws: ServerConnection) -> None:
        await ws.send(message)
        await asyncio.sleep(HOSTILE_S)

    return misbehave


async def _twilio_unknown(ws: ServerConnection, sid: str) -> None:
    await _for(HOSTILE_S, lambda: ws.send(json.dumps({"event": "dtmf", "streamSid": sid, "x": 1})))


async def _twilio_marks(ws: ServerConnection, sid: str) -> None:
    n = 0

    async def one() -> None:
        nonlocal n
        n += 1
        await ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": f"m{n}"}}))

    await _for(HOSTILE_S, one)


def _fault(
    name: str, description: str, target: Callable[[int], str], bot: Bot, expect: str, flood: bool = False
) -> Fault:
    def run(scratch: Path) -> FaultOutcome:
        return judge(scratch, target, bot, expect=expect, expect_flood=flood)

    return Fault(name, "lines", True, run, description)


FAULTS: list[Fault] = [
    _fault(
        "pcm: tiny unknown events flood",
        f"a raw-PCM bot sends tiny unknown JSON events as fast as it can for {HOSTILE_S:.0f} s",
        _pcm, pcm_bot(_text_flood('{"event":"x"}')), "capped",
    ),
    _fault(
        "pcm: clear spam",
        f"a raw-PCM bot sends `clear` as fast as it can for {HOSTILE_S:.0f} s",
        _pcm, pcm_bot(_text_flood('{"event":"clear"}')), "capped",
    ),
    _fault(
        "pcm: 60 KB log events flood",
        f"a raw-PCM bot sends `log` events of 60 KB (just under the message limit) for {HOSTILE_S:.0f} s",
        _pcm, pcm_bot(_text_flood(json.dumps({"event": "log", "text": "x" * 60_000}))), "capped",
    ),
    _fault(
        "pcm: 1 MB log event",
        "a raw-PCM bot sends a `log` event of 1 MB",
        _pcm, pcm_bot(_send_once(json.dumps({"event": "log", "text": "x" * 1_000_000}))), "refused",
    ),
    _fault(
        "pcm: 2 MB binary message",
        "a raw-PCM bot sends 2 MB of audio in one binary message (65 s)",
        _pcm, pcm_bot(_send_once(bytes(2_000_000))), "refused",
    ),
    _fault(
        "twilio: unknown events flood",
        f"a Twilio bot sends unknown events as fast as it can for {HOSTILE_S:.0f} s",
        _twilio, twilio_bot(_twilio_unknown), "capped",
    ),
    _fault(
        "twilio: marks flood",
        f"a Twilio bot sends marks as fast as it can for {HOSTILE_S:.0f} s",
        _twilio, twilio_bot(_twilio_marks), "capped", True,
    ),
]  # fmt: skip
