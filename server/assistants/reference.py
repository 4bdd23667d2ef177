"""Reference assistants: ground truth for CallSim's figures, over the same websocket path as any assistant.

A reference assistant behaves exactly as told
(:class:`~server.assistants.behaviour.ReferenceBehaviour`, the spec and its causality limits, kept in
their own module): its reply is heard exactly ``reply_ms`` after the caller's speech ends, it falls silent
exactly ``stop_ms`` after the caller cuts in (or never), it talks into the caller's mid-turn pauses or not, it
stops at backchannels or not.  What CallSim measures of it can then be checked against what it did
(:mod:`voice.app.benchmarks.fidelity.run`).

"Exactly" means on the caller's timeline, to the sample.  CallSim sends caller frame ``k`` (samples ``[320k,
320(k+1))``) at ``t0 + (k+1) * 20 ms`` and plays each received chunk from its arrival.  So the reference (a)
finds the caller's speech boundaries in the received stream by the caller's own rule (a sample sounds when
``|x| >= ACTIVE_THRESHOLD``), (b) maps caller sample ``n`` to its own monotonic clock through the
least-delayed frame (:class:`OriginEstimator`), and (c) sends the first chunk of each reply at the instant its
first audible sample must be heard; later chunks go a little early and queue behind it in CallSim's playout
buffer.  A stop truncates the reply at the cut sample and a ``clear`` arrives then.

The decisions are an I/O-free state machine on samples (:class:`ReferenceCore`: fed the caller's frames, it
returns commands).  :func:`serve_reference` wraps it in a websocket server; the unit tests run the same core
in memory, each chunk delivered at its sample (``tests/fakes.py``), so the assistant the tests talk to is the
one the fidelity bench calls.  Both shells send what :func:`reply_audio` and :func:`reply_chunk` say.  One
connection is one call; the behaviour is the server's default or comes with the call, as
``start.dialogue.reference`` (:meth:`ReferenceBehaviour.to_json`), so one server can play many behaviours at
once.  This module is the assistant's runtime: how it keeps to the spec, live.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
from dataclasses import dataclass
from typing import Any

from websockets.exceptions import ConnectionClosed

from server.assistants.behaviour import REPLY_GAP_MS, ReferenceBehaviour, RefNote, reply_voice
from server.assistants.serving import CallConnection, run_until_signalled, serve_pcm, with_sip
from voice.core.audio import (
    FRAME_SAMPLES,
    Pcm,
    active_bounds,
    from_bytes,
    ms_to_samples,
    samples_to_ns,
    to_bytes,
)
from voice.core.clock import Clock, MonotonicClock
from voice.core.gcpause import freeze_long_lived
from voice.lines.ws_server import Server

SEND_LEAD_MS = 10.0  # chunks after the first are sent this early; the playout buffer queues them


class OriginEstimator:
    """Maps caller sample ``n`` to this process's monotonic clock, and says when to send to be heard at ``n``.

    The frame ending at caller sample ``e`` left CallSim at ``t0 + e / 16 kHz`` and reached us later by the
    forward delay; the least-delayed frame seen so far gives ``origin`` = ``t0`` + the smallest forward
    delay.  Audio sent at ``origin + n / 16 kHz`` then reaches CallSim that forward delay plus the backward
    delay late: the link's round trip (``rtt_ns``, the fastest websocket ping) is sent that much earlier.
    Before any frame, the arrival of ``start`` stands in (CallSim takes ``t0`` right after sending it).
    """

    def __init__(self, provisional_ns: int) -> None:
        self.origin_ns = provisional_ns
        self.rtt_ns = 0
        self._anchored = False

    def frame(self, arrival_ns: int, end_sample: int) -> None:
        candidate = arrival_ns - samples_to_ns(end_sample)
        if not self._anchored or candidate < self.origin_ns:
            self.origin_ns, self._anchored = candidate, True

    def round_trip(self, rtt_ns: int) -> None:
        self.rtt_ns = rtt_ns if self.rtt_ns == 0 else min(self.rtt_ns, rtt_ns)

    def time_of(self, sample: int) -> int:
        """Where caller sample ``sample`` falls on this clock (as seen here)."""
        return self.origin_ns + samples_to_ns(sample)

    def send_at(self, sample: int) -> int:
        """When to send so that CallSim stamps the arrival with caller sample ``sample``."""
        return self.time_of(sample) - self.rtt_ns


@dataclass
class Reply:
    """One reply on the caller's timeline: audible over ``[start, end)``; ``end`` moves up on a stop."""

    index: int
    start: int
    end: int


@dataclass(frozen=True)
class Play:
    reply: Reply


@dataclass(frozen=True)
class Stop:
    at: int  # caller sample where every reply falls silent


@dataclass(frozen=True)
class Note:
    data: RefNote  # sent to CallSim as a ``log`` event (recorded, never measured)


@dataclass(frozen=True)
class Hangup:
    reason: str  # sent to CallSim as a ``hangup`` event, now


Command = Play | Stop | Note | Hangup


def reply_audio(behaviour: ReferenceBehaviour) -> tuple[Pcm, tuple[int, int]]:
    """The reply's audio and its audible span ``[first, last + 1)``, as every shell of the core plays it."""
    voice = reply_voice(behaviour.reply_len_ms)
    bounds = active_bounds(voice)
    assert bounds is not None
    return voice, bounds


def reply_chunk(voice: Pcm, audible: tuple[int, int], reply: Reply, i: int) -> Pcm:
    """Samples ``[i, i + FRAME_SAMPLES)`` of ``reply``'s audio as sent now: cut at ``reply.end`` (a stop)."""
    base = reply.start - audible[0]  # caller sample where the reply audio begins
    return voice[i : i + FRAME_SAMPLES][: max(0, reply.end - (base + i))]


@dataclass
class _Turn:
    onset: int
    over: bool  # began while a reply was audible
    confirmed: bool = False


class ReferenceCore:
    """The reference's decisions, fed the caller's stream frame by frame; no clock, no socket."""

    def __init__(self, behaviour: ReferenceBehaviour, audible: tuple[int, int]) -> None:
        self.b = behaviour
        self.audible = audible  # [first, last + 1) audible samples of the reply audio
        self.heard = 0  # caller samples received
        self.replies: list[Reply] = []
        self._endpoint = ms_to_samples(behaviour.endpoint)
        self._confirm = ms_to_samples(behaviour.confirm_ms)
        self._turn: _Turn | None = None
        self._last_end = 0  # one past the last sounding caller sample
        self._answered = 0  # caller turns answered
        self._hung_up = False

    def start(self) -> list[Command]:
        if self.b.greeting_ms is None:
            return []
        return [self._reply(ms_to_samples(self.b.greeting_ms))]

    def feed(self, pcm: Pcm) -> list[Command]:
        """Take the next frame of the caller's stream; return what to do about it."""
        s = self.heard
        self.heard += len(pcm)
        if self._hung_up:
            return []
        bounds = active_bounds(pcm)
        out: list[Command] = []
        if self._turn is not None:
            silent_until = s + bounds[0] if bounds is not None else self.heard
            if silent_until - self._last_end >= self._endpoint:
                out += self._turn_end(self._turn)
        if bounds is not None:
            if self._turn is None:
                out += self._turn_start(s + bounds[0])
            self._last_end = s + bounds[1]
            turn = self._turn
            assert turn is not None
            if turn.over and not turn.confirmed and self._last_end - 1 >= turn.onset + self._confirm:
                turn.confirmed = True
                if not self.b.stop_on_backchannel and self.b.stop_ms is not None:
                    out += self._stop(turn.onset + ms_to_samples(self.b.stop_ms), "barge_in", turn.onset)
        return out

    def _audible_at(self, n: int) -> bool:
        return any(r.start <= n < r.end for r in self.replies)

    def _turn_start(self, onset: int) -> list[Command]:
        self._turn = _Turn(onset, over=self._audible_at(onset))
        out: list[Command] = []
        pending = [r for r in self.replies if r.start > onset and r.end > r.start]
        if pending and not self._turn.over:  # the caller went on before the reply was heard: hold it
            out += self._stop(min(r.start for r in pending), "caller_resumed", onset)
        if self._turn.over and self.b.stop_on_backchannel and self.b.stop_ms is not None:
            out += self._stop(onset + ms_to_samples(self.b.stop_ms), "caller_speech", onset)
        return out

    def _turn_end(self, turn: _Turn) -> list[Command]:
        self._turn = None
        end = self._last_end
        note = Note({"ref": "turn", "onset": turn.onset, "end": end, "decided": self.heard})
        if end - turn.onset <= self._confirm:
            return [note]  # a backchannel is not a turn: no reply
        if self.b.hangup_after_turns is not None and self._answered >= self.b.hangup_after_turns:
            self._hung_up = True
            return [note, Hangup("done")]
        self._answered += 1
        heard = [r.end for r in self.replies if r.end > r.start]
        after = max(heard, default=-(10**9)) + ms_to_samples(REPLY_GAP_MS)
        return [note, self._reply(max(end + ms_to_samples(self.b.reply_ms), after))]

    def _reply(self, start: int) -> Play:
        length = self.audible[1] - self.audible[0]
        reply = Reply(len(self.replies), start, start + length)
        self.replies.append(reply)
        return Play(reply)

    def _stop(self, at: int, why: str, onset: int) -> list[Command]:
        cut = [r for r in self.replies if r.end > at]
        for r in cut:
            r.end = max(r.start, at)
        if not cut:
            return [Note({"ref": "no_stop", "why": why, "onset": onset, "at": at})]
        return [Stop(at), Note({"ref": "stop", "why": why, "onset": onset, "at": at, "decided": self.heard})]


class _Call:
    """One connection: stamps what arrives, runs the core, sends each reply chunk when it must arrive."""

    def __init__(self, ws: CallConnection, behaviour: ReferenceBehaviour, clock: Clock) -> None:
        self.ws, self.clock = ws, clock
        self.voice, audible = reply_audio(behaviour)
        self.core = ReferenceCore(behaviour, audible)
        self.origin = OriginEstimator(clock.now_ns())
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        self._spawn(self._probe())
        self._do(self.core.start())
        async for message in self.ws:
            now = self.clock.now_ns()
            if isinstance(message, bytes):
                pcm = from_bytes(message)
                self.origin.frame(now, self.core.heard + len(pcm))
                self._do(self.core.feed(pcm))
            elif json.loads(message).get("event") == "stop":
                break

    async def _probe(self, pings: int = 5) -> None:
        """Measure the link's round trip before the greeting (a client that never pongs: no correction)."""
        for _ in range(pings):
            with contextlib.suppress(TimeoutError, ConnectionClosed):
                latency = await asyncio.wait_for(await self.ws.ping(), 0.5)
                self.origin.round_trip(int(latency * 1e9))
            await asyncio.sleep(0.02)

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()

    def _do(self, commands: list[Command]) -> None:
        for c in commands:
            if isinstance(c, Play):
                self._spawn(self._play(c.reply))
            elif isinstance(c, Stop):
                self._spawn(self._clear(c.at))
            elif isinstance(c, Hangup):
                self._spawn(self._send({"event": "hangup", "reason": c.reason}))
            else:
                self._spawn(self._log(c.data))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _log(self, data: RefNote) -> None:
        await self._send({"event": "log", **data})

    async def _send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(message))

    async def _until(self, sample: int, lead_ns: int = 0, *, precise: bool = True) -> int:
        """Wait until caller sample ``sample`` is due here (less ``lead_ns``); return how late we are (ns).

        The due time is re-read on every wake-up: frames arriving meanwhile may still sharpen the origin.
        The last 2 ms are spun on the event loop (as :class:`~voice.core.clock.MonotonicClock` does) when
        ``precise``; otherwise a millisecond-grained sleep is enough.
        """
        while True:
            due = self.origin.send_at(sample) - lead_ns
            remaining = due - self.clock.now_ns()
            if remaining <= 0:
                return -remaining
            if remaining > 2_000_000:
                await asyncio.sleep(min(remaining - 1_500_000, 20_000_000) / 1e9)
            elif precise:
                await asyncio.sleep(0)
            else:
                return 0

    async def _play(self, reply: Reply) -> None:
        base = reply.start - self.core.audible[0]  # caller sample where the reply audio begins
        lead = samples_to_ns(ms_to_samples(SEND_LEAD_MS))
        for i in range(0, len(self.voice), FRAME_SAMPLES):
            # Only the first chunk's arrival fixes where the reply is heard; the rest queue behind it.
            late = await self._until(base + i, 0 if i == 0 else lead, precise=i == 0)
            chunk = reply_chunk(self.voice, self.core.audible, reply, i)
            if len(chunk) == 0:
                return
            try:
                await self.ws.send(to_bytes(chunk))
            except ConnectionClosed:
                return
            if i == 0:
                await self._log({"ref": "reply", "index": reply.index, "heard_at": reply.start,
                                 "chunk_at": base, "late_ms": round(late / 1e6, 3)})  # fmt: skip

    async def _clear(self, at: int) -> None:
        late = await self._until(at)
        await self._send({"event": "clear"})
        await self._log({"ref": "clear", "at": at, "late_ms": round(late / 1e6, 3)})


async def handle_call(ws: CallConnection, default: ReferenceBehaviour | None) -> None:
    """One call on ``ws``: its first message is ``start`` (with ``dialogue.reference``, or ``default``)."""
    call: _Call | None = None
    try:
        start = json.loads(await ws.recv())
        spec = (start.get("dialogue") or {}).get("reference")
        behaviour = ReferenceBehaviour.from_json(spec) if spec is not None else default
        if behaviour is None:
            raise ValueError("no behaviour: pass dialogue.reference in start or give the server a default")
        call = _Call(ws, behaviour, MonotonicClock())
        await call.run()
    except (ValueError, TypeError, AttributeError, json.JSONDecodeError) as exc:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(json.dumps({"event": "error", "message": f"reference assistant: {exc}"}))
    except ConnectionClosed:
        pass
    finally:
        if call is not None:
            call.close()
        await ws.close()


async def serve_reference(
    host: str = "127.0.0.1", port: int = 0, behaviour: ReferenceBehaviour | None = None
) -> tuple[Server, str]:
    """Start a reference assistant server; returns it (``async with`` it, or ``close()``) and its URL."""
    reply_voice((behaviour or ReferenceBehaviour(600, None, True, False)).reply_len_ms)  # warm, off the clock
    return await serve_pcm(functools.partial(handle_call, default=behaviour), host, port)


def main(argv: list[str] | None = None) -> None:
    """``python -m server.assistants.reference [--port P] [--behaviour JSON] [--webrtc|--sip]``: serve
    until signalled, over the raw PCM websocket, over WebRTC with ``--webrtc`` (:mod:`.webrtc_serving`), or
    over SIP with ``--sip`` (a SIP gateway on ``--port``, :mod:`server.sip_gateway`).

    Prints the URL it listens on.
    """
    ap = argparse.ArgumentParser(
        prog="python -m server.assistants.reference", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--behaviour", type=json.loads, default=None, help="default behaviour as JSON")
    ap.add_argument("--webrtc", action="store_true", help="answer WebRTC offers (POST /api/offer) instead")
    ap.add_argument("--sip", action="store_true", help="answer SIP calls on --port (UDP) instead")
    args = ap.parse_args(argv)
    default = ReferenceBehaviour.from_json(args.behaviour) if args.behaviour is not None else None
    if args.webrtc:
        from server.assistants.webrtc_serving import serve_webrtc

        reply_voice((default or ReferenceBehaviour(600, None, True, False)).reply_len_ms)  # warm it
        freeze_long_lived()
        asyncio.run(serve_webrtc(functools.partial(handle_call, default=default), args.host, args.port))
        return
    # A full collection would walk every imported object with the loop standing still: freeze them first.
    ws_port = 0 if args.sip else args.port  # with --sip, the SIP gateway takes --port
    start = functools.partial(serve_reference, args.host, ws_port, default)
    serve = with_sip(start, args.host, args.port) if args.sip else start
    run_until_signalled(serve, "{url}", freeze_long_lived)


if __name__ == "__main__":
    main()


__all__ = [
    "OriginEstimator",
    "ReferenceCore",
    "handle_call",
    "reply_audio",
    "reply_chunk",
    "serve_reference",
]
