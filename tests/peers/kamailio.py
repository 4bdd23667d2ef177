"""A Kamailio SIP proxy and registrar (Debian's ``kamailio`` package, 5.6) as a test peer, on loopback only.

``tests/peers/kamailio.cfg`` is copied into a temp directory with ``users.cfg`` (the fixed user table,
user => password, in the htable ``users``: no database) and started in the foreground:
``kamailio -DD -E -f CFG -A SIP_PORT=PORT -w TMP -Y TMP -P TMP/kamailio.pid`` (no root needed, nothing
written outside TMP).  It listens on ``127.0.0.1:PORT``, UDP and TCP.  REGISTER is challenged with 401
(digest), a new INVITE with 407 (the caller's password), then the callee is looked up among the
registered contacts (in memory) and the INVITE relayed, record-routed, so ACK and BYE pass through it too.
It is ready once it answers an OPTIONS; its output goes to ``kamailio.log`` (:meth:`Kamailio.log_text`).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.peers.baresip import free_udp_tcp_port, stop_process

KAMAILIO = "kamailio"
CFG = Path(__file__).with_name("kamailio.cfg")
READY_TIMEOUT_S = 10.0  # it answers within ~0.2 s here
USERS = {"bot": "bot-secret", "callsim": "callsim-secret"}


class KamailioError(RuntimeError):
    pass


@dataclass(frozen=True)
class Kamailio:
    port: int  # UDP and TCP on 127.0.0.1
    users: Mapping[str, str]  # user => password
    dir: Path  # its config, pid file and log

    @property
    def registrar(self) -> tuple[str, int]:
        """For :class:`tests.peers.baresip.Baresip`'s ``registrar``."""
        return ("127.0.0.1", self.port)

    def aor(self, user: str) -> str:
        """``sip:USER@127.0.0.1:PORT``: what a caller dials to reach a registered ``user``."""
        return f"sip:{user}@127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "kamailio.log"

    def log_text(self, tail_chars: int | None = None) -> str:
        """Its output so far, or its last ``tail_chars``, for a failure's message."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no kamailio log)"
        return text[-tail_chars:] if tail_chars else text


def options_answered(port: int, timeout_s: float = 0.5) -> bool:
    """Send an OPTIONS to ``127.0.0.1:port`` over UDP; whether any SIP response came back in time."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.settimeout(timeout_s)
        local = s.getsockname()[1]
        branch, call_id = uuid.uuid4().hex, uuid.uuid4().hex
        message = (
            f"OPTIONS sip:127.0.0.1:{port} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{local};branch=z9hG4bK{branch};rport\r\n"
            "Max-Forwards: 70\r\n"
            f"To: <sip:127.0.0.1:{port}>\r\n"
            f"From: <sip:probe@127.0.0.1:{local}>;tag={branch[:8]}\r\n"
            f"Call-ID: {call_id}@127.0.0.1\r\n"
            "CSeq: 1 OPTIONS\r\n"
            "Content-Length: 0\r\n\r\n"
        )
        try:
            s.sendto(message.encode(), ("127.0.0.1", port))
            return s.recv(65535).startswith(b"SIP/2.0 ")
        except OSError:  # a timeout, or ICMP port unreachable before it listens
            return False


def users_cfg(users: Mapping[str, str]) -> str:
    """The htable's rows as cfg statements, for ``#!include_file`` in ``event_route[htable:mod-init]``."""
    for name, password in users.items():
        if not name.isalnum() or '"' in password or "\\" in password or "$" in password:
            raise ValueError(f"user {name!r}: letters and digits only, a password without quotes, \\ or $")
    return "".join(f'$sht(users=>{name}) = "{password}";\n' for name, password in users.items())


@contextlib.asynccontextmanager
async def kamailio(
    users: Mapping[str, str] = USERS, *, port: int = 0, workdir: Path | None = None
) -> AsyncIterator[Kamailio]:
    """Run Kamailio on ``127.0.0.1:port`` (0: a free one) with ``users``; yield it once it answers OPTIONS."""
    if shutil.which(KAMAILIO) is None:
        raise KamailioError("kamailio is not installed (apt-get install kamailio)")
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kamailio-")))
        workdir.mkdir(parents=True, exist_ok=True)
        port = port or free_udp_tcp_port()
        peer = Kamailio(port=port, users=dict(users), dir=workdir)
        cfg = workdir / "kamailio.cfg"
        shutil.copyfile(CFG, cfg)
        (workdir / "users.cfg").write_text(users_cfg(users))
        cmd = [
            KAMAILIO,
            "-DD",  # in the foreground, its worker processes forked under it
            "-E",
            "-f",
            str(cfg),
            "-A",
            f"SIP_PORT={port}",
            "-w",
            str(workdir),
            "-Y",
            str(workdir),
            "-P",
            str(workdir / "kamailio.pid"),
            "-m",
            "32",  # MB of shared memory (the default 64 is plenty too)
            "-M",
            "4",
        ]
        log = stack.enter_context(peer.log_path.open("wb"))
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while not await asyncio.to_thread(options_answered, port):
                if proc.poll() is not None:
                    raise KamailioError(
                        f"kamailio exited at start-up (code {proc.returncode})\n{peer.log_text(20_000)}"
                    )
                if time.monotonic() > deadline:
                    raise KamailioError(
                        f"kamailio did not answer OPTIONS within {READY_TIMEOUT_S} s\n{peer.log_text(20_000)}"
                    )
            yield peer
        finally:
            await asyncio.to_thread(stop_process, proc)
