"""How late the reactive caller answers beyond the think time it drew (issue 26): ``scripts/bench_caller``.

Per setting — an assistant (the built-in, or the echo in a process of its own) and a stand-in caller model
answering after 0 s, 0.3 s or 1 s (:mod:`voice.react.scripted_caller`) — it runs the bundled set with the
reactive
caller on a real clock (``callsim bench``, with caches of its own: no answer or voiced line is reused from
an earlier run) and reads each call's event log: the caller's lateness per turn said after a reply (the
``caller_late`` events, a rest's gap included; 0 for a turn said on time) as p50/p90/max, the time to the
call's outcome, CPU seconds per call (this process, the built-in or the echo), the share of early decisions
thrown away (``caller_early``), and, for a turn after a missed reply (no think time to hide in), the time
from the core's request to the turn's first sample.  The goal on 2 vCPUs: p50 ≤ 150 ms and p90 ≤ 400 ms
beyond the think time with the instant stand-in; with a 1 s model, no more than 1 s + 150 ms at p50.

The figures come from :func:`summarize`, which reads event logs only (tested with hand-made ones);
:func:`main` makes the calls through ``callsim bench`` (``--quick``: one dialogue, the echo, the instant
stand-in, one to two minutes; figures in docs/caller-latency.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from voice.app.benchmarks.sysstats import fmt, process_cpu_s, table
from voice.core import events as ev
from voice.core.audio import SAMPLE_RATE
from voice.metrics.reduce import percentile

DELAYS_S = (0.0, 0.3, 1.0)
ASSISTANTS = ("builtin", "echo")
ECHO_DELAY_MS = 1000  # the echo's reply: the caller's turn played back this much later
"""With no delay the echo plays a turn back over itself, and whether its last frames land after the caller's
turn (a reply) or not (no reply: the call fails as ``assistant_silent``) is a race; delayed, each reply is
the last second of the caller's own turn, heard after it."""


@dataclass(frozen=True)
class Row:
    """One setting's figures (ms unless named otherwise)."""

    setting: str
    calls: int
    turns: int  # caller turns said after a reply
    late_p50_ms: float | None
    late_p90_ms: float | None
    late_max_ms: float | None
    outcome_p50_s: float | None  # time to the call's end
    cpu_per_call_s: float | None
    early_asked: int
    early_wasted_share: float | None  # of the early decisions made, the share thrown away
    silence_p50_ms: float | None = None  # a turn after a missed reply: from the request to its audio
    silence_max_ms: float | None = None


def lateness_ms(events: Sequence[ev.CallEvent]) -> list[float]:
    """Per caller turn said after a reply: how late it started beyond ``reply end + think`` (0: on time)."""
    late: dict[int, int] = {}
    for e in events:  # a turn's start and, voiced clause first, its rest's gap
        if isinstance(e, ev.CallerLate):
            late[e.turn] = late.get(e.turn, 0) + e.late
    said = [e.turn for e in events if isinstance(e, ev.CallerSpoke) and e.mode == "after_reply"]
    return [late.get(turn, 0) * 1000 / SAMPLE_RATE for turn in said]


def after_silence_ms(events: Sequence[ev.CallEvent]) -> list[float]:
    """Per caller turn said after a missed reply (no think time to hide in): from the request the core
    raised to the turn's first sample, all of it the simulator's."""
    asked: dict[int, int] = {}
    out = []
    for e in events:
        if isinstance(e, ev.TurnRequested):
            asked[e.turn] = e.t  # the last: a request asked again after a wait starts afresh
        elif isinstance(e, ev.CallerSpoke) and e.mode == "after_timeout" and e.turn in asked:
            out.append((e.audio_start - asked[e.turn]) * 1000 / SAMPLE_RATE)
    return out


def summarize(setting: str, logs: Sequence[Sequence[ev.CallEvent]], cpu_s: float | None = None) -> Row:
    """The figures of one setting from its calls' event logs (``cpu_s``: CPU seconds the setting used)."""
    late = [ms for log in logs for ms in lateness_ms(log)]
    ends = [e.t / SAMPLE_RATE for log in logs for e in log if isinstance(e, ev.CallEnded)]
    early = [e for log in logs for e in log if isinstance(e, ev.CallerEarly)]
    wasted = sum(1 for e in early if not e.kept)
    silence = [ms for log in logs for ms in after_silence_ms(log)]
    return Row(
        setting,
        len(logs),
        len(late),
        percentile(late, 50),
        percentile(late, 90),
        max(late, default=None),
        percentile(ends, 50),
        cpu_s / len(logs) if cpu_s is not None and logs else None,
        len(early),
        wasted / len(early) if early else None,
        percentile(silence, 50),
        max(silence, default=None),
    )


def render(rows: Sequence[Row]) -> str:
    """The rows as a text table."""
    header = (
        "setting",
        "calls",
        "turns",
        "late p50",
        "p90",
        "max",
        "outcome p50 s",
        "CPU/call s",
        "early, wasted",
        "after silence p50/max",
    )
    return table(
        header,
        (
            (
                r.setting,
                str(r.calls),
                str(r.turns),
                fmt(r.late_p50_ms, ".0f"),
                fmt(r.late_p90_ms, ".0f"),
                fmt(r.late_max_ms, ".0f"),
                fmt(r.outcome_p50_s),
                fmt(r.cpu_per_call_s, ".2f"),
                f"{r.early_asked}, {fmt(r.early_wasted_share, '.0%')}",
                f"{fmt(r.silence_p50_ms, '.0f')}/{fmt(r.silence_max_ms, '.0f')}",
            )
            for r in rows
        ),
    )


def read_logs(folder: Path) -> list[list[ev.CallEvent]]:
    """Every call's event log under a run folder (its recordings, loaded whole)."""
    from voice.recording import load_recording

    return [load_recording(p).events for p in sorted(folder.rglob("*.events.jsonl"))]


@contextlib.contextmanager
def _assistant(name: str, echo_delay_ms: int = ECHO_DELAY_MS) -> Iterator[tuple[str, int | None]]:
    """The ``--target`` for ``name`` and the pid whose CPU counts too: builtin as is (``callsim bench``
    starts it as a child of this process, counted once it has ended); the echo started in a process of its
    own."""
    if name == "builtin":
        yield "builtin", None
        return
    from voice.app.run.launch import echo_assistant

    with echo_assistant(echo_delay_ms) as (url, pid):
        yield f"pcm+{url}", pid


def bench_args(target: str, model_url: str, limit: int, out: Path, concurrency: int = 1) -> list[str]:
    """The ``callsim bench`` arguments of one setting: the reactive caller (patient, over the stand-in)
    calling ``target``, ``concurrency`` calls at a time, the run's speed index left to this bench, no
    report."""
    args = ["bench", "--target", target, "--out", str(out), "--limit", str(limit)]
    args += ["--concurrency", str(concurrency), "--fresh"]  # a kept folder is measured again, never resumed
    args += ["--caller", "openai:rules", "--caller-base-url", model_url, "--persona", "patient"]
    return [*args, "--no-report", "--no-speed-index"]


def _cpu(pids: Sequence[int | None]) -> float | None:
    """CPU seconds used so far by ``pids`` together, this process's ended children included (the built-in
    assistant runs as one, and has ended by the time a setting is read); None if one cannot tell."""
    used = [process_cpu_s(pid, children=pid == os.getpid()) for pid in pids if pid is not None]
    return None if any(u is None for u in used) else sum(u for u in used if u is not None)


@contextlib.contextmanager
def cold_caches() -> Iterator[Path]:
    """A cache root of its own while a setting runs: no model answer and no caller line is reused from an
    earlier run (each would take no time), while the models themselves are the user's (linked, not
    copied).  Yields the root; ``$CALLSIM_CACHE`` is restored after."""
    from voice.files import cache_root

    models = cache_root() / "models"
    before = os.environ.get("CALLSIM_CACHE")
    with tempfile.TemporaryDirectory(prefix="bench_caller-cache-") as tmp:
        root = Path(tmp)
        if models.is_dir():
            (root / "models").symlink_to(models, target_is_directory=True)
        os.environ["CALLSIM_CACHE"] = str(root)
        try:
            yield root
        finally:
            if before is None:
                os.environ.pop("CALLSIM_CACHE", None)
            else:
                os.environ["CALLSIM_CACHE"] = before


def run_setting(assistant: str, delay_s: float, limit: int, out: Path, concurrency: int = 1) -> Row:
    """The bundled set (``limit`` dialogues) against ``assistant``, the stand-in taking ``delay_s``,
    ``concurrency`` reactive calls at once."""
    from voice.app.cli import main as callsim
    from voice.llm.scripted_server import StandInLLM
    from voice.react import scripted_caller

    setting = f"{assistant}, model {delay_s:g} s" + (f", {concurrency} at once" if concurrency > 1 else "")
    model_server = StandInLLM().respond(scripted_caller.answer, delay_s=delay_s)
    with cold_caches(), model_server as model, _assistant(assistant) as (target, pid):
        pids = (os.getpid(), pid)
        cpu0 = _cpu(pids)
        code = callsim(bench_args(target, model.url, limit, out, concurrency))
        cpu1 = _cpu(pids)
    if code != 0:
        raise SystemExit(f"bench_caller: callsim bench exited {code} for {setting}")
    cpu = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
    return summarize(setting, read_logs(out), cpu)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/bench_caller", description=__doc__.split("\n")[0])
    p.add_argument("--assistant", action="append", choices=ASSISTANTS, help="repeatable (default: both)")
    p.add_argument(
        "--delay", action="append", type=float, help="the model's seconds per answer (default 0, 0.3, 1)"
    )
    p.add_argument("--limit", type=int, default=2, help="dialogues per setting (default %(default)s)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="one dialogue, the echo, the instant stand-in (one to two minutes)",
    )
    p.add_argument("--concurrency", type=int, default=1, help="reactive calls at once (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--keep", metavar="DIR", help="keep each setting's run folder under DIR (default: not)")
    args = p.parse_args(argv)
    if args.concurrency < 1:
        p.error(f"--concurrency {args.concurrency}: 1 or more")
    if args.quick:
        args.assistant, args.delay, args.limit = args.assistant or ["echo"], args.delay or [0.0], 1
    from voice.app.run.provenance import bench_provenance

    bench_provenance("scripts/bench_caller", argv, json_out=args.json)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench_caller-") as tmp:
        for assistant in args.assistant or ASSISTANTS:
            for delay in args.delay or DELAYS_S:
                at_once = f"-x{args.concurrency}" if args.concurrency > 1 else ""
                out = Path(args.keep or tmp) / f"{assistant}-{delay:g}{at_once}"
                rows.append(run_setting(assistant, delay, args.limit, out, args.concurrency))
    print(json.dumps([asdict(r) for r in rows], indent=2) if args.json else render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
