"""The batch's faults: bad dialogue files, damaged resumes, a full or read-only disk, killed processes, an
assistant that crashes mid-run, connections that fail without saying why.

Each fault runs ``callsim bench`` (or ``data validate``) as a process of its own through
:func:`~voice.app.benchmarks.faults.fault.run_measured`, against the echo assistant (cheap, no models) with
the
espeak caller voice, and checks what a user would see: an exit code, a one-line error without a traceback,
which calls were kept, and whether a rerun makes every call (``calls_lost``: calls a rerun could not make).

A full disk is a small tmpfs (``mount -t tmpfs -o size=...``, when we may mount: root) or else a file-size
limit (``RLIMIT_FSIZE``: a WAV over the limit fails with EFBIG, which CallSim treats as a refused write); a
read-only folder is that tmpfs remounted read-only mid-run, or else a folder made read-only by ``chmod``
(which binds only a non-root user).  The outcome says which was used.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from voice.app.benchmarks.faults.calls import (
    BENCH_TIMEOUT_S,
    ESPEAK,
    bench,
    dialogue,
    done_calls,
    dumps,
    echo,
    last_line,
    traceback_in,
    write_lines,
)
from voice.app.benchmarks.faults.fault import Fault, FaultOutcome, callsim_command, run_measured
from voice.app.benchmarks.faults.processes import builtin_killed, killed_bench

# --- bad dialogue files ------------------------------------------------------------------------------------


def _bad_file(name: str, line: Callable[[], str], expect: str) -> Callable[[Path], FaultOutcome]:
    """A file with one bad dialogue next to a good one: ``data validate`` names it (exit 1), ``bench``
    refuses the file before any call (exit 2), and neither prints a traceback."""

    def run(scratch: Path) -> FaultOutcome:
        path = write_lines(scratch / f"{name}.jsonl", [line(), dumps(dialogue("good-1"))])
        checked = run_measured(callsim_command("data", "validate", str(path)), timeout=60)
        ran = bench(path, scratch / "out", "pcm+ws://127.0.0.1:9/pcm", timeout=60)
        said = next((x for x in checked.stdout.splitlines() if f"{path}:1:" in x), "")
        ok = (
            checked.returncode == 1 and expect in said and ran.returncode == 2
            and not traceback_in(checked) and not traceback_in(ran)
        )  # fmt: skip
        outcome = said.removeprefix(f"{path}:")[:110] or last_line(checked)
        seconds = checked.seconds + ran.seconds
        return FaultOutcome(outcome, ok, seconds, max(checked.peak_mb, ran.peak_mb), 0, "refused up front")

    return run


def _deep() -> str:
    return "[" * 100_000 + "]" * 100_000


def _huge_int() -> str:
    d = dialogue("huge-int")
    d["turns"][0]["pause_before_ms"] = 0
    return dumps(d).replace('"pause_before_ms": 0', '"pause_before_ms": ' + "9" * 5000)


def _with(call_id: str = "bad-1", **turn: Any) -> Callable[[], str]:
    def line() -> str:
        d = dialogue(call_id)
        d["turns"][0].update(turn)
        return json.dumps(d)  # ASCII escapes: how a lone surrogate reaches a file

    return line


# --- a damaged resume ------------------------------------------------------------------------------------


def damaged_metrics(scratch: Path) -> FaultOutcome:
    """Metrics files of a finished run replaced by ``{}`` and by truncated JSON: the rerun makes those calls
    again with a note, and no KeyError."""
    path = write_lines(scratch / "d.jsonl", [dumps(dialogue(f"call-{i}")) for i in (1, 2, 3)])
    out = scratch / "out"
    with echo() as target:
        first = bench(path, out, target)
        files = sorted(out.glob("*/*.metrics.json"))
        if len(files) != 3:
            return FaultOutcome(f"first run: {last_line(first)}", False, first.seconds, first.peak_mb)
        files[0].write_text("{}")
        files[1].write_text(files[1].read_text()[:40])
        again = bench(path, out, target)
    made = [c for c, d in done_calls(out).items() if d.get("outcome") == "completed"]
    note = next((x for x in again.stderr.splitlines() if "unreadable metrics" in x), "")
    ok = again.returncode == 0 and bool(note) and not traceback_in(again)
    outcome = "rerun made 2 again: unreadable metrics" if ok else last_line(again)
    return FaultOutcome(
        outcome, ok, first.seconds + again.seconds, again.peak_mb, 3 - len(made), f"{len(made)}/3"
    )


# --- the disk ----------------------------------------------------------------------------------------------


def _may_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[bool]:
    """A tmpfs of ``size`` at ``folder`` (yields True), or nothing if we may not mount (yields False)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = _may_mount() and _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    try:
        yield mounted
    finally:
        if mounted:
            _mount("-o", "remount,rw", str(folder))
            subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], check=False, capture_output=True).returncode == 0


def _fsize_limited(limit_bytes: int) -> list[str]:
    """A ``callsim`` command prefix whose files may not grow past ``limit_bytes`` (EFBIG, SIGXFSZ ignored)."""
    code = (
        "import os, resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit_bytes}, {limit_bytes})); "
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    )
    return [sys.executable, "-c", code, "-m", "voice.app.cli"]


def disk_full(scratch: Path) -> FaultOutcome:
    """The output disk fills up mid-run: the batch stops with exit 6 and one line, the calls finished are
    kept, a partial results.json is written (or the error says why not); a rerun with room makes the rest."""
    path = write_lines(scratch / "d.jsonl", [dumps(dialogue(f"call-{i}")) for i in range(1, 6)])
    out = scratch / "disk"
    args = ["bench", "--dialogues", str(path), "--out", str(out), "--all", "--concurrency", "1", *ESPEAK]
    with echo() as target, small_disk(out, "600k") as mounted:
        if mounted:
            how, cmd = "tmpfs 600 KB", callsim_command(*args, "--target", target)
        else:
            how, cmd = "RLIMIT_FSIZE 200 KB", [*_fsize_limited(200_000), *args, "--target", target]
        full = run_measured(cmd, timeout=BENCH_TIMEOUT_S)
        kept = len(done_calls(out))
        stopped = full.returncode == 6 and "the batch stopped" in full.stderr and not traceback_in(full)
        if mounted:
            _mount("-o", "remount,size=64m", str(out))
        again = bench(path, out, target)
        made = len(done_calls(out))
    ok = stopped and again.returncode == 0
    outcome = f"{how}: exit {full.returncode}, " + ("stopped cleanly" if stopped else last_line(full))
    return FaultOutcome(
        outcome, ok, full.seconds, full.peak_mb, 5 - made, f"{kept} kept, {made}/5 after rerun"
    )


def read_only(scratch: Path) -> FaultOutcome:
    """The target folder turns read-only after the first call: exit 6 and one line, the first call kept,
    the error says results.json could not be written; a rerun once writable makes every call."""
    path = write_lines(scratch / "d.jsonl", [dumps(dialogue(f"call-{i}")) for i in range(1, 4)])
    out, frozen = scratch / "ro", []
    out.mkdir()
    mounted = _may_mount()
    with echo() as target:
        stop = threading.Event()

        def freeze() -> None:  # a read-only bind mount of the target folder onto itself (or chmod)
            while not stop.wait(0.05):
                folder = next((p for p in out.iterdir() if p.is_dir()), None)
                if folder is not None and any(folder.glob("*.metrics.json")):
                    if mounted and _mount("--bind", str(folder), str(folder)):
                        frozen.append(folder)
                        _mount("-o", "remount,bind,ro", str(folder))
                    else:
                        folder.chmod(0o555)
                    return

        watcher = threading.Thread(target=freeze, daemon=True)
        watcher.start()
        ro = bench(path, out, target)
        stop.set()
        watcher.join()
        kept = len(done_calls(out))
        for folder in frozen:
            subprocess.run(["umount", str(folder)], check=False, capture_output=True)
        for p in out.iterdir():
            p.chmod(0o755)
        again = bench(path, out, target)
    made = len(done_calls(out))
    stopped = ro.returncode == 6 and "the batch stopped" in ro.stderr and not traceback_in(ro)
    ok = stopped and kept >= 1 and again.returncode == 0
    how = "read-only bind mount" if frozen else "chmod 555"
    outcome = f"{how}: exit {ro.returncode}, " + ("stopped cleanly" if stopped else last_line(ro))
    return FaultOutcome(outcome, ok, ro.seconds, ro.peak_mb, 3 - made, f"{kept} kept, {made}/3 after rerun")


# --- connections that fail ---------------------------------------------------------------------------------


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A TCP server that accepts connections and never answers (the websocket upgrade times out)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(sock.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(sock.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        for s in held:
            s.close()
        sock.close()


def _reason_of(scratch: Path, target: str, expect: tuple[str, ...]) -> FaultOutcome:
    path = write_lines(scratch / "d.jsonl", [dumps(dialogue("call-1"))])
    ran = bench(path, scratch / "out", target)
    results = [json.loads(p.read_text()) for p in (scratch / "out").glob("*/results.json")]
    detail = str(results[0]["calls"][0].get("detail", "")) if results and results[0]["calls"] else ""
    ok = ran.returncode == 3 and any(word in detail for word in expect) and not traceback_in(ran)
    return FaultOutcome(detail[-110:] or "(empty reason)", ok, ran.seconds, ran.peak_mb, 0, "results.json")


def connect_timeout(scratch: Path) -> FaultOutcome:
    """An assistant that accepts TCP but never answers the upgrade: the reason says it timed out."""
    with silent_server() as port:
        return _reason_of(scratch, f"pcm+ws://127.0.0.1:{port}/pcm", ("timed out",))


def wss_failure(scratch: Path) -> FaultOutcome:
    """``wss://`` to a server that speaks plain ws: the reason names the failed handshake."""
    with echo() as target:
        return _reason_of(scratch, target.replace("+ws://", "+wss://"), ("Reset", "SSL", "reset", "EOF"))


FAULTS: list[Fault] = [
    Fault("bad file: 240-character id", "batch", True, _bad_file("long-id", _with("a" * 240), "at most 100"),
          "an id too long for a file name"),
    Fault("bad file: id with / and :", "batch", True, _bad_file("bad-chars", _with("a/b:c"), "must match"),
          "an id that is not a portable file name"),
    Fault("bad file: lone surrogate", "batch", True,
          _bad_file("surrogate", _with(text="喂\ud800你好"), "lone surrogate"), "invalid Unicode"),
    Fault("bad file: 10k-character turn", "batch", True,
          _bad_file("long-turn", _with(text="喂" * 10_000), "at most 500"), "a turn no TTS should be fed"),
    Fault("bad file: deep nesting", "batch", True, _bad_file("deep", _deep, "nested too deeply"),
          "JSON nested 100,000 deep"),
    Fault("bad file: 5,000-digit integer", "batch", True, _bad_file("huge-int", _huge_int, "4300 digits"),
          "an integer past Python's conversion limit"),
    Fault("resume: {} and truncated metrics", "batch", True, damaged_metrics, "a damaged folder resumes"),
    Fault("disk full mid-run", "batch", True, disk_full, "ENOSPC (tmpfs) or EFBIG (RLIMIT_FSIZE)"),
    Fault("read-only folder mid-run", "batch", True, read_only, "EROFS (tmpfs remount) or EACCES (chmod)"),
    Fault("connect timeout reason", "batch", True, connect_timeout, "a bot that never answers the upgrade"),
    Fault("wss:// failure reason", "batch", True, wss_failure, "TLS to a plain-ws server"),
    Fault("kill -9 of bench: orphans", "batch", False, killed_bench(signal.SIGKILL), "orphans?"),
    Fault("SIGTERM of bench: orphans", "batch", False, killed_bench(signal.SIGTERM), "orphans?"),
    Fault("built-in killed mid-run", "batch", False, builtin_killed, "its call redone on resume"),
]  # fmt: skip
