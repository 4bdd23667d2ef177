"""A trivial assistant for capacity benchmarks: it echoes the caller's audio back, a fixed delay later.

It speaks the raw PCM websocket protocol (``docs/protocol.md``) and nothing else: no VAD, no ASR, no timers.
The delay is counted in the caller's own frames (CallSim sends one 20 ms frame per message, in real time), so
echoing a frame means sending back the one received ``delay_frames`` messages earlier: one send per receive,
no scheduling, which keeps the assistant cheap enough that a benchmark measures the *caller's* capacity, not
the echo's.  By default every frame goes back, silence included, like a media stream that never pauses (a bot
mixing in background sound); ``--skip-silence`` leaves out all-zero frames, as a pipecat bot without a mixer
sends audio only while it speaks (``scripts/bench_capacity``'s default); ``--chunk-frames`` batches frames per
message.

It must run in a process of its own (``python -m server.assistants.echo``): it is the assistant, not CallSim,
and sharing a loop with the caller would distort the pacing being measured.  Compression is not offered, as a
media stream would not use it; any path is accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from websockets.frames import Frame, apply_mask
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol

FRAME_BYTES = 640  # 20 ms of 16 kHz PCM16, what CallSim sends per message
MAX_MESSAGE_BYTES = 1 << 20
CLOSE_TIMEOUT_S = 5.0
_CONT, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


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
    host: str = "127.0.0.1"
    port: int = 8766
    delay_ms: int = 500
    chunk_frames: int = 1
    skip_silence: bool = False

    @property
    def delay_frames(self) -> int:
        return max(0, round(self.delay_ms / 20))


class FrameCodec:
    """Minimal RFC 6455 framing for an open connection: parse the client's frames, build the server's.

    ``websockets`` parses frames with generators and builds them through several objects, ~20 us a
    message, which on a small machine is CPU the callers being measured do not get.  Once the handshake
    is done (by ``websockets``), the echo only needs this: a length, an optional mask (unmasked with the
    library's C ``apply_mask``), a payload.  Frames larger than ``max_size`` raise ``ValueError``.
    """

    def __init__(self, max_size: int = MAX_MESSAGE_BYTES) -> None:
        self.max_size = max_size
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bool, bytes]]:
        """Take received bytes; return the complete frames in them as ``(opcode, fin, payload)``."""
        buf = self._buf
        buf += data
        out: list[tuple[int, bool, bytes]] = []
        pos = 0
        while len(buf) - pos >= 2:
            b0, b1 = buf[pos], buf[pos + 1]
            size, head = b1 & 0x7F, 2
            if size == 126:
                if len(buf) - pos < 4:
                    break
                size, head = int.from_bytes(buf[pos + 2 : pos + 4], "big"), 4
            elif size == 127:
                if len(buf) - pos < 10:
                    break
                size, head = int.from_bytes(buf[pos + 2 : pos + 10], "big"), 10
            if size > self.max_size:
                raise ValueError(f"frame of {size} bytes exceeds {self.max_size}")
            key = 4 if b1 & 0x80 else 0
            end = pos + head + key + size
            if len(buf) < end:
                break
            payload = bytes(buf[pos + head + key : end])
            if key:
                payload = apply_mask(payload, bytes(buf[pos + head : pos + head + 4]))
            out.append((b0 & 0x0F, bool(b0 & 0x80), payload))
            pos = end
        del buf[:pos]
        return out

    @staticmethod
    def frame(opcode: int, payload: bytes) -> bytes:
        """One unmasked, final server frame."""
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, n))
        elif n < 1 << 16:
            head = bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 127)) + n.to_bytes(8, "big")
        return head + payload


class EchoProtocol(asyncio.Protocol):
    """One call, driven straight from the socket: no task, future or queue per message.

    ``websockets``' sans-I/O protocol does the HTTP upgrade; after it, :class:`FrameCodec` parses what
    arrives in ``data_received`` and the echo is written in the same callback.  ``stop`` (or the
    caller's close frame) ends the call with a closing handshake; pings are answered.
    """

    def __init__(self, settings: EchoSettings) -> None:
        self._handshake: ServerProtocol | None = ServerProtocol(max_size=MAX_MESSAGE_BYTES)
        self._codec = FrameCodec()
        self._buf = EchoBuffer(
            settings.delay_frames, chunk_frames=settings.chunk_frames, skip_silence=settings.skip_silence
        )
        self._transport: asyncio.Transport | None = None
        self._partial: bytes | None = None  # a fragmented binary message being assembled
        self._closing = False
        self.frames_in = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if self._handshake is not None:
            self._upgrade(data)
            return
        try:
            frames = self._codec.feed(data)
        except ValueError:
            self._close()
            return
        for opcode, fin, payload in frames:
            self._frame(opcode, fin, payload)

    def _upgrade(self, data: bytes) -> None:
        ws = self._handshake
        assert ws is not None and self._transport is not None
        ws.receive_data(data)
        for event in ws.events_received():
            if isinstance(event, Request):
                ws.send_response(ws.accept(event))
            elif isinstance(event, Frame):  # sent along with the request: not expected, but valid
                self._frame(int(event.opcode), event.fin, bytes(event.data))
        for chunk in ws.data_to_send():
            if chunk:
                self._transport.write(chunk)
            else:  # the handshake was refused
                self._close()
                return
        if ws.state is State.OPEN:
            self._handshake = None

    def _frame(self, opcode: int, fin: bool, payload: bytes) -> None:
        if opcode == _BINARY or (opcode == _CONT and self._partial is not None):
            if not fin:
                self._partial = (self._partial or b"") + payload
                return
            if self._partial is not None:
                payload, self._partial = self._partial + payload, None
            self.frames_in += 1
            out = self._buf.push(payload)
            if out and not self._closing:
                self._write(FrameCodec.frame(_BINARY, out))
        elif opcode == _TEXT and _is_stop(payload) and not self._closing:
            self._closing = True
            self._write(FrameCodec.frame(_CLOSE, (1000).to_bytes(2, "big") + b"caller hung up"))
            asyncio.get_running_loop().call_later(CLOSE_TIMEOUT_S, self._close)
        elif opcode == _CLOSE:
            if not self._closing:  # the caller closed first: answer, then close the connection
                self._write(FrameCodec.frame(_CLOSE, payload[:2]))
            self._close()
        elif opcode == _PING:
            self._write(FrameCodec.frame(_PONG, payload))

    def _write(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def _close(self) -> None:
        self._closing = True
        if self._transport is not None:
            self._transport.close()


def _is_stop(text: bytes) -> bool:
    try:
        obj = json.loads(text)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("event") == "stop"


async def start_echo(settings: EchoSettings) -> asyncio.Server:
    """Bind and serve (``port=0`` picks a free port); close the returned server to stop."""
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: EchoProtocol(settings), settings.host, settings.port)


async def _serve_forever(settings: EchoSettings) -> None:
    server = await start_echo(settings)
    port = server.sockets[0].getsockname()[1] if server.sockets else settings.port  # port 0: the real one
    print(f"echo assistant on ws://{settings.host}:{port}/pcm", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m server.assistants.echo", description="An echo assistant for benchmarks."
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8766)
    p.add_argument("--delay-ms", type=int, default=500, help="echo delay (rounded to 20 ms frames)")
    p.add_argument("--chunk-frames", type=int, default=1, help="frames per message sent back")
    p.add_argument("--skip-silence", action="store_true", help="do not send all-zero frames back")
    args = p.parse_args(argv)
    settings = EchoSettings(args.host, args.port, args.delay_ms, args.chunk_frames, args.skip_silence)
    asyncio.run(_serve_forever(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
