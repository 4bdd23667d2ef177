"""What a run does before its first call: it holds its folder against a second run, waits for targets that
start with it (CI), and clears what ``--fresh`` replaces.

Kept apart from the run's own flow (:func:`voice.app.run.dataset.run_bench`), so that the flow reads as its
steps, each a call into the room that does it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
from collections.abc import Iterator, Sequence
from pathlib import Path

from voice.errors import ConfigError, LineError
from voice.lines.sip_probe import options_answered
from voice.lines.sip_target import parse_sip_uri
from voice.lines.targets import SIP, Target

# what a run writes last, about all of its calls: a fresh run removes it first, as it no longer describes them
RUN_SUMMARY_FILES = ("results.json", "report.html", "report.md")


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on a run folder: two runs writing one folder would corrupt each other.

    ``flock`` is released by the kernel when the process dies, even by ``kill -9``, so a killed run never
    leaves a stale lock behind.
    """
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".callsim.lock", "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise ConfigError(f"{folder} is in use by another callsim run") from exc
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


async def wait_for_targets(targets: Sequence[Target], timeout_s: float, poll_s: float = 0.2) -> None:
    """Wait until every target accepts a TCP connection (CI starting the bot and the bench together); a SIP
    target over UDP, until it answers an OPTIONS.

    Polls each target's host and port until it connects or ``timeout_s`` (for all of them) has passed; then
    a :class:`LineError` naming the target and the last refusal.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    for target in targets:
        host, port = target.address()
        if target.protocol == SIP and parse_sip_uri(target.url).transport == "UDP":  # no connection: OPTIONS
            if not await options_answered(parse_sip_uri(target.url), max(0.05, deadline - loop.time())):
                raise LineError(
                    f"--wait-for-target: {target} did not answer SIP OPTIONS within {timeout_s:g} s"
                )
            continue
        while True:
            try:
                left = max(0.05, deadline - loop.time())
                _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), left)
                writer.close()
                break
            except (OSError, TimeoutError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if loop.time() >= deadline:
                raise LineError(
                    f"--wait-for-target: {target} did not accept a connection within {timeout_s:g} s"
                    f" (last try: {last})"
                )
            await asyncio.sleep(min(poll_s, max(0.0, deadline - loop.time())))


def clear_run_summary(folder: Path) -> None:
    """Remove the run's summary and report (``--fresh``), which describe the calls about to be made again."""
    for name in RUN_SUMMARY_FILES:
        (folder / name).unlink(missing_ok=True)
