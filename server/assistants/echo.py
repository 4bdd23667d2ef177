"""A trivial assistant for capacity benchmarks: it echoes the caller's audio back, a fixed delay later.

It speaks the raw PCM websocket protocol (``docs/protocol.md``) and nothing else: no VAD, no ASR, no timers.
The delay is counted in the caller's own frames (CallSim sends one 20 ms frame per message, in real time), so
echoing a frame means sending back the one received ``delay_frames`` messages earlier: one send per receive,
no scheduling, which keeps the assistant cheap enough that a benchmark measures the *caller's* capacity, not
the echo's.  By default every frame goes back, silence included, like a media stream that never pauses (a bot
mixing in background sound); ``--skip-silence`` leaves out all-zero frames, as a pipecat bot without a mixer
sends audio only while it speaks (``scripts/bench_capacity``'s default); ``--chunk-frames`` batches frames per
message.

It must run in a process of its own (``python -m server.assistants.echo``, started by
``voice.app.run.launch.echo_assistant``): it is the assistant, not CallSim, and sharing a loop with the caller
would distort the pacing being measured.  The websocket is the one every test assistant uses
(:mod:`server.assistants.serving`); ``stop`` ends the call with a closing handshake.  ``--webrtc`` serves
the same echo over WebRTC (:mod:`server.assistants.webrtc_serving`: the caller's frames come in through
Opus and a jitter buffer, silence never exactly all-zero, so ``--skip-silence`` keeps little out there);
``--sip`` answers SIP calls on ``--port`` through a gateway (:mod:`server.sip_gateway`: G.711, so again
little is all-zero).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import json
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from websockets.exceptions import ConnectionClosed

from server.assistants.serving import CallConnection, run_until_signalled, serve_pcm, with_sip
from voice.lines.ws_server import Server


class EchoBuffer:
    """The echo's delay line: frames go in as they arrive, come out ``delay_frames`` arrivals later.

    ``chunk_frames`` > 1 joins that many due frames into one message (fewer, larger messages).  With
    ``skip_silence`` an all-zero frame is never sent back (the delay line still advances).
    """

    def __init__(self, delay_frames: int, *, chunk_frames: int = 1, skip_silence: bool = False) -> None:
        if delay_frames < 0 or chunk_frames < 1:
            raise ValueError("delay_frames must be >= 0 and chunk_frames >= 1")
        self.delay_frames = delay_frames
        self.chunk_frames = chunk_frames
        self.skip_silence = skip_silence
        self._line: deque[bytes] = deque()
        self._out: list[bytes] = []

    def push(self, frame: bytes) -> bytes | None:
        """Take one received frame; return the message to send now, if any."""
        self._line.append(frame)
        if len(self._line) <= self.delay_frames:
            return None
        due = self._line.popleft()
        if self.skip_silence and not any(due):
            return self._flush() if self._out else None
        self._out.append(due)
        if len(self._out) >= self.chunk_frames:
            return self._flush()
        return None

    def _flush(self) -> bytes:
        out = b"".join(self._out)
        self._out.clear()
        return out


@dataclass(frozen=True)
class EchoSettings:
    """What the echo is told on its command line."""

    host: str = "127.0.0.1"
    port: int = 8766
    delay_ms: int = 500
    chunk_frames: int = 1
    skip_silence: bool = False

    @property
    def delay_frames(self) -> int:
        """The delay in the caller's 20 ms frames."""
        return max(0, round(self.delay_ms / 20))


async def _echo(ws: CallConnection, settings: EchoSettings) -> None:
    """One call: every binary message goes into the delay line, whatever is due goes straight back."""
    buf = EchoBuffer(
        settings.delay_frames, chunk_frames=settings.chunk_frames, skip_silence=settings.skip_silence
    )
    with contextlib.suppress(ConnectionClosed):
        async for message in ws:
            if isinstance(message, bytes):
                out = buf.push(message)
                if out:
                    await ws.send(out)
            elif _is_stop(message):
                await ws.close(1000, "caller hung up")
                return


def _is_stop(text: str) -> bool:
    try:
        obj = json.loads(text)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("event") == "stop"


async def start_echo(settings: EchoSettings) -> tuple[Server, str]:
    """Bind and serve (``port=0`` picks a free port); returns the server (close it to stop) and its URL."""
    return await serve_pcm(functools.partial(_echo, settings=settings), settings.host, settings.port)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m server.assistants.echo", description="An echo assistant for benchmarks."
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8766)
    p.add_argument("--delay-ms", type=int, default=500, help="echo delay (rounded to 20 ms frames)")
    p.add_argument("--chunk-frames", type=int, default=1, help="frames per message sent back")
    p.add_argument("--skip-silence", action="store_true", help="do not send all-zero frames back")
    p.add_argument("--webrtc", action="store_true", help="answer WebRTC offers (POST /api/offer) instead")
    p.add_argument("--sip", action="store_true", help="answer SIP calls on --port (UDP) instead")
    args = p.parse_args(argv)
    settings = EchoSettings(args.host, args.port, args.delay_ms, args.chunk_frames, args.skip_silence)
    if args.webrtc:
        from server.assistants.webrtc_serving import serve_webrtc

        handler = functools.partial(_echo, settings=settings)
        asyncio.run(serve_webrtc(handler, args.host, args.port, "echo assistant on {url}"))
        return 0
    if args.sip:  # the websocket on a port of its own, the SIP gateway on --port
        ws_settings = dataclasses.replace(settings, port=0)
        start = with_sip(lambda: start_echo(ws_settings), args.host, args.port)
        run_until_signalled(start, "echo assistant on {url}")
        return 0
    run_until_signalled(lambda: start_echo(settings), "echo assistant on {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
