"""One baresip user agent (the Debian ``baresip-core`` package, baresip 1.0) as a test peer, on loopback only.

Each agent runs from a private config directory (``baresip -f DIR``) written by :class:`Baresip`:

- SIP on ``127.0.0.1:sip_port`` (UDP and TCP), SDP ``c=IN IP4 127.0.0.1`` and RTP to and from 127.0.0.1
  (``net_interface 127.0.0.1``: baresip 1.0 refuses ``net_interface lo``; its RTP sockets are bound to the
  wildcard address, within ``rtp_ports``, which baresip 1.0 cannot change), PCMU/PCMA only (module
  ``g711``, ``audio_codecs=PCMU,PCMA`` on the account), ``ptime=20``, no ICE, STUN or TURN module;
- its microphone is a WAV file (module ``aufile``, ``audio_source aufile,mic.wav``).  baresip 1.0's aufile
  reads the whole file at the call's start, sends it once (it does not loop), then silence for up to a
  second, then **closes the call** ("end of file": a CALL_CLOSED event with param ``end of file``, and a
  BYE).  So :class:`Baresip` plays a copy of the given WAV followed by ``mic_tail_s`` seconds of silence
  (digital zero: PCMU 0xFF), which is how long a call may outlast the WAV;
- what it hears is recorded by the audio filter ``sndfile``: ``snd/dump-<date-time>-dec.wav`` holds the
  *received* audio, decoded (8 kHz mono for PCMU/PCMA), ``...-enc.wav`` what it sent (its microphone, before
  encoding).  Each file is named by the second its call's audio started and is complete once the call has
  closed (read it after CALL_CLOSED or :meth:`Baresip.stop`);
- audio played to the speaker goes nowhere (``audio_player aubridge,nowhere``, a bridge with no source on
  the other side); baresip 1.0's aufile has no player, and the dump is taken before the player anyway;
- calls are auto-answered (``answermode=auto``) and controlled over module ``ctrl_tcp`` (netstring-framed
  JSON on ``127.0.0.1:ctrl_port``): :meth:`Baresip.dial`, :meth:`Baresip.hangup`, and its events through
  :meth:`Baresip.wait_event` (a call: CALL_REMOTE_SDP, CALL_LOCAL_SDP, CALL_RINGING for the caller,
  CALL_ESTABLISHED, CALL_RTPESTAB, CALL_CLOSED with the reason in ``param``; an auto-answered call has no
  CALL_INCOMING).  Registration happens before the control port connects: :meth:`wait_registered` polls;
- an account either registers with a registrar (``registrar=(host, port)``, ``auth_pass``, ``regint``) or
  does not register at all (``regint=0``: without it baresip 1.0 sends REGISTER to 127.0.0.1:5060);
- its output (with the SIP trace, ``-s``) goes to ``baresip.log`` in that directory: :meth:`log_text`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import wave
from pathlib import Path
from types import TracebackType
from typing import Any

BARESIP = "baresip"
MODULES = Path("/usr/lib/baresip/modules")
READY_TIMEOUT_S = 10.0  # its control port listens within ~50 ms here
COMMAND_TIMEOUT_S = 5.0
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # its terminal colours
STOP_TIMEOUT_S = 5.0  # SIGTERM, SIGTERM again, then SIGKILL: stop_process


def free_udp_tcp_port() -> int:
    """A 127.0.0.1 port free right now for both UDP and TCP (SIP listens on both)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = int(udp.getsockname()[1])
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise RuntimeError("no port free for both UDP and TCP on 127.0.0.1")


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(
    proc: subprocess.Popen[bytes], grace_s: float = 2.0, timeout_s: float = STOP_TIMEOUT_S
) -> None:
    """SIGTERM; after ``grace_s`` a second SIGTERM; after ``timeout_s`` SIGKILL to its process group.

    baresip's first SIGTERM hangs up its calls (BYE, recordings closed) and un-registers, waiting for the
    registrar's answer (for ever if the registrar is gone); its second exits at once.  The group: the
    child was started with ``start_new_session`` (kamailio's workers are in it too)."""
    for signum, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGTERM, timeout_s - grace_s)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait_s)
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout_s)


class BaresipError(RuntimeError):
    pass


class Baresip:
    """One baresip user agent; ``async with Baresip(...) as ua:`` starts it and stops it.

    ``user``: the account's user (``sip:USER@127.0.0.1``, or ``sip:USER@HOST:PORT`` of the registrar).
    ``registrar``: ``(host, port)`` to register with (digest password ``auth_pass``, every ``regint`` s);
    ``None``: no registration, reachable directly at :attr:`contact_uri`.
    ``mic``: a 16-bit mono WAV (any rate: it becomes ``ausrc_srate``, baresip resamples for the codec)
    played as its microphone, once, then ``mic_tail_s`` s of silence; ``None``: silence only.
    ``sip_port``: 0 picks a free one.  ``rtp_ports``: ``(first, last)``; ``None``: baresip's default range.
    ``workdir``: its config directory (default: a new temp dir, kept after :meth:`stop` for its recordings
    and log, removed by :meth:`cleanup`).
    """

    def __init__(
        self,
        user: str = "ua",
        *,
        registrar: tuple[str, int] | None = None,
        auth_pass: str | None = None,
        regint: int = 60,
        mic: Path | None = None,
        mic_tail_s: float = 120.0,
        auto_answer: bool = True,
        sip_port: int = 0,
        rtp_ports: tuple[int, int] | None = None,
        codecs: tuple[str, ...] = ("PCMU", "PCMA"),
        sip_trace: bool = True,
        workdir: Path | None = None,
    ) -> None:
        self.user = user
        self.registrar = registrar
        self.auth_pass = auth_pass
        self.regint = regint
        self.mic = mic
        self.mic_tail_s = mic_tail_s
        self.auto_answer = auto_answer
        self.sip_port = sip_port
        self.rtp_ports = rtp_ports
        self.codecs = codecs
        self.sip_trace = sip_trace
        self._workdir = workdir
        self._own_dir: str | None = None
        self.dir = Path()
        self.ctrl_port = 0
        self.events: list[dict[str, Any]] = []  # every event so far, in order
        self._taken: set[int] = set()  # indexes of events :meth:`wait_event` returned
        self._changed = asyncio.Condition()
        self._responses: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._command_lock = asyncio.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None

    # --- addresses and files --------------------------------------------------------------------------

    @property
    def aor(self) -> str:
        """The account's address of record (what others dial through the registrar)."""
        if self.registrar:
            host, port = self.registrar
            return f"sip:{self.user}@{host}:{port}"
        return f"sip:{self.user}@127.0.0.1"

    @property
    def contact_uri(self) -> str:
        """This agent directly, without a proxy."""
        return f"sip:{self.user}@127.0.0.1:{self.sip_port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "baresip.log"

    def log_text(self, tail_chars: int | None = None) -> str:
        """Its output so far (the SIP trace included), or its last ``tail_chars``, for a failure's message."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no baresip log)"
        return text[-tail_chars:] if tail_chars else text

    def tail(self) -> str:
        return self.log_text(20_000)

    def recordings(self, kind: str = "dec") -> list[Path]:
        """The sndfile dumps, oldest first: ``dec`` what it heard (received), ``enc`` what it sent."""
        return sorted((self.dir / "snd").glob(f"dump-*-{kind}.wav"))

    def heard(self) -> Path:
        """The last call's recording of what this agent received (decoded), complete once the call closed."""
        found = self.recordings("dec")
        if not found:
            raise BaresipError(f"{self.user}: no received-audio recording in {self.dir / 'snd'}")
        return found[-1]

    # --- start and stop -------------------------------------------------------------------------------

    async def __aenter__(self) -> Baresip:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        if shutil.which(BARESIP) is None:
            raise BaresipError("baresip is not installed (apt-get install baresip-core)")
        if self._workdir is None:
            self._own_dir = tempfile.mkdtemp(prefix=f"baresip-{self.user}-")
            self.dir = Path(self._own_dir)
        else:
            self.dir = self._workdir
            self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "snd").mkdir(exist_ok=True)
        if not self.sip_port:
            self.sip_port = free_udp_tcp_port()
        self.ctrl_port = free_tcp_port()
        rate = self._write_mic(self.dir / "mic.wav")
        (self.dir / "config").write_text(self._config(rate))
        (self.dir / "accounts").write_text(self._account() + "\n")
        (self.dir / "contacts").write_text("")
        self._log = self.log_path.open("wb")
        cmd = [BARESIP, "-f", str(self.dir), *(["-s"] if self.sip_trace else [])]
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.dir,
            start_new_session=True,  # its own process group: a stuck one is killed as a whole
        )
        try:
            await self._connect()
            if self.registrar and self.regint:
                await self.wait_registered()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Hang up (SIGTERM: baresip sends BYE and un-registers), kill if it lingers; always bounded."""
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._writer.wait_closed(), 1.0)
            self._writer = None
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(BaseException):
                await self._reader_task
            self._reader_task = None
        if self._proc is not None:
            await asyncio.to_thread(stop_process, self._proc)
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def cleanup(self) -> None:
        """Remove its config directory if :class:`Baresip` made it (keep it to read the recordings first)."""
        if self._own_dir:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # --- control ----------------------------------------------------------------------------------------

    async def command(
        self, command: str, params: str | None = None, timeout: float = COMMAND_TIMEOUT_S
    ) -> str:
        """Run a baresip long command (``dial``, ``hangup``, ``reginfo``, ``listcalls``...); its output."""
        if self._writer is None:
            raise BaresipError(f"{self.user}: not started")
        message: dict[str, Any] = {"command": command, "token": command}
        if params is not None:
            message["params"] = params
        data = json.dumps(message).encode()
        async with self._command_lock:
            self._writer.write(b"%d:%s," % (len(data), data))
            await self._writer.drain()
            try:
                response = await asyncio.wait_for(self._responses.get(), timeout)
            except TimeoutError:
                raise BaresipError(
                    f"{self.user}: no answer to {command!r} within {timeout} s\n{self.tail()}"
                ) from None
        if not response.get("ok"):
            raise BaresipError(f"{self.user}: {command} {params or ''} failed: {response.get('data')}")
        return str(response.get("data", ""))

    async def dial(self, uri: str) -> None:
        """Call ``uri`` (returns once the INVITE is on its way: wait for CALL_ESTABLISHED)."""
        await self.command("dial", uri)

    async def hangup(self) -> None:
        """Hang up the current call (a BYE, or a CANCEL before the answer)."""
        await self.command("hangup")

    async def wait_event(self, name: str, timeout: float = 10.0) -> dict[str, Any]:
        """The first event of type ``name`` (e.g. ``CALL_ESTABLISHED``) not returned before, waiting for it.

        Events that came before the call are kept: one that already happened is returned at once."""

        def first() -> dict[str, Any] | None:
            for i, event in enumerate(self.events):
                if i not in self._taken and event.get("type") == name:
                    self._taken.add(i)
                    return event
            return None

        deadline = time.monotonic() + timeout
        async with self._changed:
            while (found := first()) is None:
                left = deadline - time.monotonic()
                if left <= 0 or not self.running:
                    seen = [e.get("type") for e in self.events]
                    why = "exited" if not self.running else f"no {name} within {timeout} s"
                    raise BaresipError(f"{self.user}: {why} (events: {seen})\n{self.tail()}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), min(left, 0.5))
        return found

    async def wait_registered(self, timeout: float = 10.0) -> None:
        """Until the registrar accepted its REGISTER (``reginfo`` says OK); raise if refused (ERR) or late."""
        deadline = time.monotonic() + timeout
        while True:
            info = ANSI.sub("", await self.command("reginfo"))
            if " OK " in info:
                return
            # refused (ERR, or a REGISTER_FAIL event: the first REGISTER often goes before this connects)
            failed = " ERR " in info or any(e.get("type") == "REGISTER_FAIL" for e in self.events)
            if failed or time.monotonic() > deadline:
                raise BaresipError(f"{self.user}: not registered ({info.strip()!r})\n{self.tail()}")
            await asyncio.sleep(0.1)

    # --- internals ----------------------------------------------------------------------------------------

    def _write_mic(self, path: Path) -> int:
        """The microphone: ``mic`` once, then ``mic_tail_s`` of silence, as one WAV; returns its rate."""
        frames, rate = b"", 8000
        if self.mic is not None:
            with wave.open(str(self.mic), "rb") as w:
                if w.getnchannels() != 1 or w.getsampwidth() != 2:
                    raise BaresipError(f"{self.mic}: baresip's aufile plays 16-bit mono WAV only")
                rate = w.getframerate()
                frames = w.readframes(w.getnframes())
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(rate)
            out.writeframes(frames + bytes(2 * int(self.mic_tail_s * rate)))
        return rate

    def _account(self) -> str:
        params = [f"audio_codecs={','.join(self.codecs)}", "ptime=20"]
        params.append("answermode=auto" if self.auto_answer else "answermode=manual")
        if self.registrar:
            if self.auth_pass is not None:
                params.append(f"auth_pass={self.auth_pass}")
            params.append(f"regint={self.regint}")
        else:
            params.append("regint=0")
        return f"<{self.aor};transport=udp>;" + ";".join(params)

    def _config(self, mic_rate: int) -> str:
        lines = [
            "poll_method epoll",
            f"sip_listen 127.0.0.1:{self.sip_port}",
            "net_interface 127.0.0.1",
            "dns_server 127.0.0.1:53",  # every URI here is an address: a name would be looked up locally
            "call_local_timeout 120",
            "call_max_calls 4",
            f"audio_source aufile,{self.dir / 'mic.wav'}",
            "audio_player aubridge,nowhere",
            "audio_alert aubridge,nowhere",
            f"ausrc_srate {mic_rate}",
            "ausrc_channels 1",
            "auplay_channels 1",
            "audio_level no",
            "ausrc_format s16",
            "auplay_format s16",
            "auenc_format s16",
            "audec_format s16",
            "audio_buffer 20-160",
            "rtcp_mux no",
            "jitter_buffer_delay 5-10",
            "rtp_stats no",
            *([f"rtp_ports {self.rtp_ports[0]}-{self.rtp_ports[1]}"] if self.rtp_ports else []),
            f"module_path {MODULES}",
            "module g711.so",
            "module sndfile.so",
            "module aufile.so",
            "module aubridge.so",
            "module_tmp uuid.so",
            "module_tmp account.so",
            "module_app contact.so",
            "module_app menu.so",
            "module_app ctrl_tcp.so",
            f"ctrl_tcp_listen 127.0.0.1:{self.ctrl_port}",
            f"snd_path {self.dir / 'snd'}",
            "statmode_default off",
            "ringback_disabled yes",
        ]
        return "\n".join(lines) + "\n"

    async def _connect(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            assert self._proc is not None
            if self._proc.poll() is not None:
                code = self._proc.returncode
                raise BaresipError(f"baresip {self.user} exited at start-up (code {code})\n{self.tail()}")
            try:
                reader, self._writer = await asyncio.open_connection("127.0.0.1", self.ctrl_port)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise BaresipError(
                        f"baresip {self.user}: no control port within {READY_TIMEOUT_S} s\n{self.tail()}"
                    ) from None
                await asyncio.sleep(0.05)
        self._reader_task = asyncio.create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        """Netstrings (``LEN:JSON,``) from ctrl_tcp: command responses and events."""
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                length = int((await reader.readuntil(b":"))[:-1])
                message = json.loads((await reader.readexactly(length + 1))[:-1])
                if message.get("response"):
                    self._responses.put_nowait(message)
                elif message.get("event"):
                    async with self._changed:
                        self.events.append(message)
                        self._changed.notify_all()
