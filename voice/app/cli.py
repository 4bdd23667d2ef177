"""The ``callsim`` command line: the one place that knows both ``voice`` and ``server``.  Kept thin."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from voice.app.exit_codes import (
    COMPARE_EXIT_CODES,
    EXIT_CODES,
    EXIT_ERROR,
    EXIT_FAILED_CALLS,
    EXIT_GATE,
    EXIT_INTERRUPTED,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_SIMULATOR,
    EXIT_STORAGE,
)
from voice.errors import CallSimError, ConfigError, StorageError

if TYPE_CHECKING:
    from voice.dialogues import Dialogue
    from voice.llm.scripted_server import Responder
    from voice.metrics.gates import Verdict

DEFAULT_OUT = Path("recordings/latest")
DEFAULT_BENCH_OUT = Path("recordings/bench")
DEFAULT_LIMIT = 6


def finish(verdict: Verdict) -> int:
    """Print what broke (or the gates that held) and return the exit code of the verdict."""
    for line in verdict.lines():
        print(f"callsim: {line}", file=sys.stderr)
    if verdict.failed:
        return EXIT_FAILED_CALLS
    return EXIT_GATE if verdict.broken else EXIT_SIMULATOR if verdict.simulator else EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    """``bench`` and ``run``: the same code path (``run`` is one call at a time on a short subset)."""
    from voice.app.run.bench_options import effects_from_args, redo_command
    from voice.app.run.caller_voices import caller_engines, voices_check
    from voice.app.run.checks import callers_of, check_call_options
    from voice.app.run.config_file import located
    from voice.app.run.console import print_banner, print_nodes
    from voice.app.run.dataset import (
        BenchConfig,
        default_concurrency,
        run_bench,
        select_dialogues,
        split_values,
    )
    from voice.app.run.progress import Progress
    from voice.app.run.provenance import announce
    from voice.contract.tuning import parse_tuning
    from voice.dialogues import bundled_dialogues_path, load_dialogues
    from voice.errors import AssistantCrashed
    from voice.metrics.gates import judge_run
    from voice.metrics.results import format_table
    from voice.react.caller_options import caller_from_args
    from voice.speech.tts import voice_check

    with located(args):  # a value from --config that is refused names its line in the file
        checked = check_call_options(args)  # every option, before anything is loaded, printed or called
        voices, tts_name = callers_of(args)
        if args.policy != "rules":  # the built-in's settings, which only this module may import, likewise
            from server.policy.plugins import load_policy_factory

            load_policy_factory(args.policy)
        tuning = parse_tuning(args.assistant_set, option="--assistant-set")  # parsed once, carried typed
        path = Path(args.dialogues) if args.dialogues else bundled_dialogues_path()
        dialogues = select_dialogues(
            # a line a caller's voice cannot say: refused now
            load_dialogues(path, voices_check(voices) if voices else voice_check(tts_name)),
            ids=split_values(args.ids),
            scenarios=split_values(args.scenario),
            presets=split_values(args.preset),
            relations=split_values(args.relation),
            limit=None if args.all else args.limit,
        )
        scoring: tuple[dict[str, Dialogue], dict[str, str] | None] = ({d.id: d for d in dialogues}, None)
        if args.annotations:  # called as written; judged with the file's annotations, checked before any call
            from voice.app.run.score_cli import merge_annotations

            scoring = merge_annotations(scoring[0], args.annotations)
    targets = checked.targets
    concurrency = checked.concurrency or default_concurrency(checked.parsed)
    tts = caller_engines(voices, tts_name)
    caller = caller_from_args(args)
    asr = None
    ray = getattr(args, "ray", None)
    if ray is not None:  # the workers make their engines; say now if Ray is missing
        from voice.app.run.ray_runner import import_ray

        import_ray()
    elif not args.no_transcribe or caller is not None:  # a reactive caller hears through it
        from voice.speech.transcribers import make_transcriber

        asr = make_transcriber(args.transcriber)
    out = Path(args.out)
    config = BenchConfig(
        out=out,
        targets=targets,
        tts=tts_name,
        voices=voices,
        caller_speed=args.caller_speed,
        assistant_tts=args.assistant_tts,
        seed=args.seed,
        repeats=args.repeats,
        concurrency=concurrency,
        transcribe=not args.no_transcribe,
        source=str(path),
        effects=effects_from_args(args),
        retry_failed=args.retry_failed,
        fresh=args.fresh,
        wait_for_target=args.wait_for_target,
        caller=caller,
        policy=args.policy,
        assistant_settings=tuning,
        ray=ray,
        ray_workers=getattr(args, "ray_workers", 1),
        recordings=getattr(args, "recordings", None),
        headers=checked.headers,
        webrtc=checked.webrtc,
        sip=checked.sip,
        redo=redo_command(getattr(args, "argv", [])),
        speed_index=not args.no_speed_index,
    )
    config = dataclasses.replace(config, provenance=announce(speed_index=config.speed_index, json_out=True))
    total = len(dialogues) * args.repeats * len(targets)
    print(
        f"callsim: {len(dialogues)} dialogue(s) × {args.repeats} repeat(s) × {len(targets)} target(s) "
        f"= {total} call(s) from {path} → {out}, {concurrency} at a time",
        file=sys.stderr,
    )
    progress = Progress(total)
    try:
        results = asyncio.run(
            run_bench(dialogues, config, tts, asr, on_status=progress, transcriber=args.transcriber)
        )
    except (StorageError, AssistantCrashed):
        progress.close()
        print_banner(out / "results.json", stopped=True)  # what CallSim failed on; the command that resumes
        raise
    finally:
        progress.close()
    from voice.app.run.settings_file import write_settings
    from voice.metrics.by_voice import voice_table

    write_settings(args)  # the options it was made with, a file --config reads back
    print_banner(out / "results.json")
    for r in results:
        print(f"\n{r.target}  ({out / r.slug})")
        print(format_table(r.calls, r.summary))
        if r.summary.by_voice:
            print(f"\nby caller voice\n{voice_table(r.summary)}")
    if ray is not None:
        print_nodes(out / "results.json")
    print(f"\nresults.json in {out}" + ("" if len(results) == 1 else " and each target's folder"))
    if args.judge:
        from voice.app.run.score_cli import score_run

        score_run(out, args.judge, asr, dialogues=scoring[0], ran=scoring[1], annotations=args.annotations)
    if not args.no_report:
        from voice.app.report.build import build_report

        html, md = build_report(out, audio=args.audio)
        print(f"report: {html} and {md}")
    if len(results) == 2:
        print(f"compare the two targets: callsim compare {out}")
    code = finish(judge_run({r.target: r.summary for r in results}, args.max_failed, args.fail_if or []))
    from voice.app.run.junit import ci_outputs

    ci_outputs(results, args)  # --junit, and the hint for a target that never accepted a call
    return code


def cmd_compare(args: argparse.Namespace) -> int:
    from voice.app.report.compare import compare_sides, mismatch_text, pick_sides
    from voice.app.report.comparison import format_comparison
    from voice.metrics.gates import check_options, judge_compare
    from voice.metrics.model.jsonio import as_json_object, write_json
    from voice.metrics.results import summarize_run

    check_options(None, args.fail_if or [], compare=True)
    if args.min_n < 1:
        raise ConfigError("--min-n must be at least 1")
    a, b = pick_sides(Path(args.a), Path(args.b) if args.b else None)
    doc = compare_sides(a, b, n_resamples=args.resamples, seed=args.seed, by=args.by, min_n=args.min_n)
    if doc["mismatch"] and not args.allow_mismatch:
        print("callsim: error: " + mismatch_text(doc["mismatch"], refused=True), file=sys.stderr)
        return EXIT_MISMATCH
    if args.json:
        write_json(Path(args.json), as_json_object(doc))
    print(format_comparison(doc))
    for w in [*doc["warnings"], *([doc["speed_index"]["warning"]] if doc["speed_index"]["warning"] else [])]:
        print(f"callsim: warning: {w}", file=sys.stderr)
    if doc["mismatch"]:
        print("callsim: WARNING: " + mismatch_text(doc["mismatch"], refused=False), file=sys.stderr)
    sa, sb = (summarize_run(s.calls, s.labels) for s in (a, b))
    return finish(judge_compare((a.name, b.name), sa, sb, args.fail_if or []))


def cmd_report(args: argparse.Namespace) -> int:
    from voice.app.report.build import build_report

    print("\n".join(map(str, build_report(Path(args.folder), audio=args.audio))))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from server.__main__ import run

    return run(args)


def cmd_measure(args: argparse.Namespace) -> int:
    from voice.metrics.measure import measure
    from voice.metrics.model.call_record import call_to_json
    from voice.metrics.model.jsonio import write_json
    from voice.metrics.results import format_table, summarize
    from voice.recording import load_recording

    calls = [measure(load_recording(Path(p))) for p in args.recordings]
    if args.json:
        write_json(Path(args.json), [call_to_json(c) for c in calls])
    print(format_table(calls, summarize(calls)))
    return 0


def _call_options(
    p: argparse.ArgumentParser, *, out: Path, limit: int | None, concurrency: int | None
) -> None:
    """The options shared by ``bench`` and ``run`` (they differ only in defaults)."""
    from voice.app.run.bench_options import add_call_options

    add_call_options(
        p, out=out, limit=limit, concurrency=concurrency, exit_failed=EXIT_FAILED_CALLS, exit_gate=EXIT_GATE
    )
    p.set_defaults(func=cmd_bench)


def standin_answer(role: str) -> Responder:
    """``callsim fake-llm --role ROLE``'s answers, imported on demand: only the command line sees all 3."""
    if role == "caller":
        from voice.react.scripted_caller import answer as caller

        return caller
    if role == "policy":
        from server.policy.scripted_llm import answer as policy

        return policy
    from voice.metrics.scoring.scripted_judge import (
        answer as judge,  # argparse let only the three roles through
    )

    return judge


def build_parser() -> argparse.ArgumentParser:
    from voice.app.run.usage import RedactingParser

    p = RedactingParser(prog="callsim", description="Real-time voice call simulator for CallBench.")
    from voice.app.run.bench_options import add_version_option

    add_version_option(p)
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser(
        "bench",
        help="run a dataset against one or more assistants, concurrently, with results and a report",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _call_options(b, out=DEFAULT_BENCH_OUT, limit=None, concurrency=None)
    r = sub.add_parser(
        "run",
        help="play a few dialogues as real-time calls, one at a time (bench with other defaults)",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _call_options(r, out=DEFAULT_OUT, limit=DEFAULT_LIMIT, concurrency=1)

    c = sub.add_parser(
        "compare",
        help="differences between two assistants or runs, with bootstrap 95%% CIs",
        epilog=COMPARE_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("a", help="a run folder (with two targets if B is not given) or a target folder")
    c.add_argument("b", nargs="?", help="the other run or target folder (B − A is shown)")
    c.add_argument("--json", help="also write the comparison to this JSON file")
    c.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    c.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    groups = ["scenario", "preset_type", "relation", "persona", "voice", "voice_sex"]
    c.add_argument("--by", choices=groups, help="also compare per group (voice: the caller's; voice_sex)")
    c.add_argument(
        "--min-n",
        type=int,
        default=5,
        help="fewer calls than this on a side: the block is shown with a warning, never starred (default 5)",
    )
    c.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="compare sides run with other dialogues, network, caller voice or seeds (warns; default:"
        f" refuse, exit {EXIT_MISMATCH})",
    )
    c.add_argument(
        "--fail-if",
        action="append",
        metavar="EXPR",
        help=f"exit {EXIT_GATE} if it holds: delta.FIGURE (B − A), a.FIGURE or b.FIGURE OP NUMBER,"
        " e.g. delta.latency_p50_ms>100; repeatable",
    )
    c.set_defaults(func=cmd_compare)

    rp = sub.add_parser("report", help="(re)build report.html and report.md of a run folder")
    rp.add_argument("folder", help="a bench/run output folder, or one target's folder")
    from voice.app.run.bench_options import AUDIO_HELP

    rp.add_argument("--audio", choices=["embed", "link", "none"], default="embed", help=AUDIO_HELP)
    rp.set_defaults(func=cmd_report)

    s = sub.add_parser("serve", help="run the built-in assistant (raw PCM websocket on /pcm)")
    from server.serve_options import add_serve_options

    add_serve_options(s)
    s.set_defaults(func=cmd_serve)

    m = sub.add_parser("measure", help="recompute metrics from recordings (WAV + event log)")
    m.add_argument("recordings", nargs="+", help="a recording's .wav/.flac, .events.jsonl or common stem")
    m.add_argument("--json", help="also write the metrics to this JSON file")
    m.set_defaults(func=cmd_measure)

    from voice.app.live.command import register as register_talk
    from voice.app.run.annotate_cli import register as register_annotate
    from voice.app.run.init_cli import register as register_init
    from voice.app.run.score_cli import register as register_score
    from voice.llm.fake_cli import register as register_fake_llm
    from voice.speech.data_cli import register as register_data
    from voice.speech.say_cli import register as register_say

    registers = (
        register_data,
        register_init,
        register_score,
        register_annotate,
        register_talk,
        register_say,
    )
    for register in registers:
        register(sub)
    register_fake_llm(sub, standin_answer)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command a redo repeats
    try:
        if getattr(args, "config", None):  # bench/run --config FILE: its options under the typed ones
            from voice.app.run.config_file import apply_config

            args = apply_config(parser, args)
        code: int = args.func(args)
        return code
    except StorageError as exc:
        print(f"callsim: error: {exc}", file=sys.stderr)
        return EXIT_STORAGE
    except CallSimError as exc:
        print(f"callsim: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:  # a file or folder the OS refused outside the writers that translate it
        from voice.files import storage_error

        refused = storage_error(exc)
        print(f"callsim: error: {refused or exc}", file=sys.stderr)
        return EXIT_STORAGE if refused is not None else EXIT_ERROR
    except KeyboardInterrupt:
        print("callsim: interrupted; completed calls are kept and a rerun resumes", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
