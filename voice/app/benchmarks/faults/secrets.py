"""Secrets faults: credentials given to CallSim reach the bot and nothing else.

Each fault runs a real ``callsim`` command and then reads every byte it left behind (every file of the run
folder, its stdout and stderr) for the secret strings it was given: in the target URL's userinfo and
``?token=``, and in ``--header`` values (one literal, one from the environment).  The base64 form of the
userinfo (what HTTP Basic auth would carry) counts as the secret too.

The bot is :class:`CredentialBot`: a raw-PCM assistant in a thread of the fault's process (so the peak
memory measured is the CallSim command's alone) that records the upgrade request's headers and path, and
echoes the caller's audio back half a second later, so a call completes without any model.
"""

from __future__ import annotations

import asyncio
import base64
import os
import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from voice.app.benchmarks.faults.fault import Fault, FaultOutcome, Measured, callsim_command, run_measured
from voice.lines.ws_server import ServerConnection, bound_port, serve_websocket

URL_PASSWORD = "PASSWORD321"
URL_TOKEN = "SECRET123"
BEARER = "HDRSECRET456"  # from the environment, through ${CALLSIM_FAULT_BEARER}
API_KEY = "LITERALKEY789"  # written on the command line
BEARER_ENV = "CALLSIM_FAULT_BEARER"
SECRETS = (
    URL_PASSWORD,
    URL_TOKEN,
    BEARER,
    API_KEY,
    base64.b64encode(f"u:{URL_PASSWORD}".encode()).decode(),
)
ECHO_DELAY_FRAMES = 25  # 500 ms of the caller's 20 ms frames
TIMEOUT_S = 120.0
CHECKOUT = Path(__file__).resolve().parents[4]  # the voice package this module is part of


class CredentialBot:
    """A PCM echo bot on a free localhost port that notes what each upgrade request carried."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []  # (path, headers) per connection
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="credential-bot", daemon=True)

    def __enter__(self) -> CredentialBot:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the credential bot did not start within 10 s")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with await serve_websocket(self._call, max_size=1 << 20) as server:
            self.port = bound_port(server)
            self._ready.set()
            await self._stop.wait()

    async def _call(self, ws: ServerConnection) -> None:
        request = ws.request
        if request is not None:
            self.requests.append((request.path, {k.lower(): v for k, v in request.headers.raw_items()}))
        delay: deque[bytes] = deque()
        try:
            async for message in ws:
                if isinstance(message, bytes):
                    delay.append(message)
                    if len(delay) > ECHO_DELAY_FRAMES:
                        await ws.send(delay.popleft())
        except ConnectionClosed:
            pass


def leaks(texts: Iterable[tuple[str, bytes]], secrets: Iterable[str] = SECRETS) -> list[str]:
    """``where: secret`` for every secret found in any of the named texts."""
    return [f"{where}: {s}" for where, data in texts for s in secrets if s.encode() in data]


def _outputs(folder: Path, measured: Measured) -> list[tuple[str, bytes]]:
    """Every file under ``folder`` (names too), and the command's stdout and stderr."""
    found = [("stdout", measured.stdout.encode()), ("stderr", measured.stderr.encode())]
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found.append((f"name {rel}", rel.encode()))
        if path.is_file():
            found.append((rel, path.read_bytes()))
    return found


def _bench(scratch: Path, target: str, *extra: str) -> Measured:
    cmd = callsim_command(
        "bench",
        "--target",
        target,
        "--header",
        f"Authorization: Bearer ${{{BEARER_ENV}}}",
        "--header",
        f"X-Api-Key: {API_KEY}",
        "--out",
        str(scratch / "run"),
        "--tts",
        "memory",
        "--no-transcribe",
        "--limit",
        "1",
        "--concurrency",
        "1",
        "--audio",
        "none",
        *extra,
    )
    return run_measured(cmd, timeout=TIMEOUT_S, cwd=scratch, env=_env(BEARER))


def _env(bearer: str) -> dict[str, str]:
    """The bearer in the environment, and this checkout first on the path (the command runs in scratch)."""
    return {
        BEARER_ENV: bearer,
        "PYTHONPATH": os.pathsep.join([str(CHECKOUT), os.environ.get("PYTHONPATH", "")]),
    }


def _url(port: int) -> str:
    return f"pcm+ws://u:{URL_PASSWORD}@127.0.0.1:{port}/path?token={URL_TOKEN}&lang=zh"


def credentials_reach_the_bot_only(scratch: Path) -> FaultOutcome:
    """A real bench with credentials in the URL and in headers: the bot gets them, no output holds them."""
    with CredentialBot() as bot:
        measured = _bench(scratch, _url(bot.port))
    run = scratch / "run"
    found = leaks(_outputs(run, measured))
    got = bot.requests[0] if bot.requests else ("", {})
    reached = (
        got[1].get("authorization") == f"Bearer {BEARER}"
        and got[1].get("x-api-key") == API_KEY
        and f"token={URL_TOKEN}" in got[0]
    )
    built = (run / "results.json").exists() and (run / "report.html").exists()
    outcome = f"exit {measured.returncode}; bot got headers and token: {reached}; report built: {built}; " + (
        f"LEAKED {'; '.join(found[:3])}" if found else "no secret in any file or output"
    )
    calls = sum(1 for _ in run.rglob("*.metrics.json"))
    return FaultOutcome(
        outcome,
        ok=measured.returncode == 0 and reached and built and not found,
        seconds=measured.seconds,
        peak_mb=measured.peak_mb,
        calls_lost=0 if calls == 1 else 1,
        kept=f"{calls}/1 calls",
    )


def refused_connection_is_reported_redacted(scratch: Path) -> FaultOutcome:
    """The target's port is closed: the failed call's reason, progress and errors name it redacted."""
    with CredentialBot() as bot:
        port = bot.port  # then closed: nothing listens there any more
    measured = _bench(scratch, _url(port))
    run = scratch / "run"
    outputs = _outputs(run, measured)
    found = leaks(outputs)
    # a call that never connected is recorded in its target's results.json, and made again on a rerun
    recorded = any(
        b"cannot connect to ws://***@" in data for where, data in outputs if where.endswith("results.json")
    )
    failed = measured.returncode == 3 and recorded
    outcome = f"exit {measured.returncode}; failure recorded: {failed}; " + (
        f"LEAKED {'; '.join(found[:3])}" if found else "no secret in any file or output"
    )
    return FaultOutcome(
        outcome,
        ok=failed and not found,
        seconds=measured.seconds,
        peak_mb=measured.peak_mb,
        kept="1/1 failure recorded, left for a rerun" if failed else "",
    )


def forged_header_is_refused(scratch: Path) -> FaultOutcome:
    """A header value with CR/LF (here from the environment) is a clear error before any call."""
    cmd = callsim_command(
        "bench",
        "--target",
        "pcm+ws://127.0.0.1:9/pcm",
        "--header",
        f"Authorization: Bearer ${{{BEARER_ENV}}}",
        "--out",
        str(scratch / "run"),
        "--tts",
        "memory",
        "--no-transcribe",
    )
    measured = run_measured(cmd, timeout=TIMEOUT_S, cwd=scratch, env=_env(f"{BEARER}\r\nX-Evil: 1"))
    found = leaks(_outputs(scratch, measured))
    said = "line break" in measured.stderr and "Authorization" in measured.stderr
    outcome = f"exit {measured.returncode}; " + (
        measured.stderr.strip().splitlines()[-1][:120] if measured.stderr.strip() else "no message"
    )
    return FaultOutcome(
        outcome + ("; LEAKED" if found else ""),
        ok=measured.returncode == 2 and said and not found and not (scratch / "run").exists(),
        seconds=measured.seconds,
        peak_mb=measured.peak_mb,
    )


FAULTS: list[Fault] = [
    Fault(
        "secrets-url-and-headers",
        "secrets",
        True,
        credentials_reach_the_bot_only,
        "bench a bot with u:p@ and ?token= in the URL and --header values: the bot gets them all; no file of"
        " the run (report included), no line of stdout/stderr holds any",
    ),
    Fault(
        "secrets-refused-connection",
        "secrets",
        True,
        refused_connection_is_reported_redacted,
        "the same target on a closed port: the failed call's reason and every message name it redacted",
    ),
    Fault(
        "secrets-header-crlf",
        "secrets",
        True,
        forged_header_is_refused,
        "an --header whose value (from the environment) holds CR/LF: refused with a clear error, no call",
    ),
]
