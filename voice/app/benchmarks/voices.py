"""Every caller voice measured the same way: Whisper's CER on the bundled lines and the stress set, median F0,
synthesis time; ``voice/data/voices.json`` is this module's output, never typed in.

``scripts/bench_asr_cer --speech caller --voice NAME|all`` runs :func:`run_voices` (``--update-voices``
writes the file that :mod:`voice.speech.voices` reads: the CER that decides the default mix).  Synthesis
is timed on the uncached engine, one thread, so ``synth_rtf`` is the seconds of synthesis per second of
speech a cold cache costs; each line's audio is the same as the cached one (the engines are deterministic).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.core.clock import MonotonicClock
from voice.files import atomic_write_bytes
from voice.speech.asr import ASREngine
from voice.speech.text import cer_counts
from voice.speech.voices import CATALOGUE, CER_LIMIT, VOICES_FILE, Voice, VoiceJson, WorstJson, get_voice

F0_RANGE_HZ = (60.0, 420.0)
_FRAME = 640  # 40 ms at 16 kHz
VOICES_PATH = Path(__file__).resolve().parents[2] / "data" / VOICES_FILE
_CLOCK = MonotonicClock()


def median_f0(pcms: Sequence[Pcm]) -> float | None:
    """The median fundamental frequency over the voiced 40 ms frames of ``pcms`` (autocorrelation peak
    within :data:`F0_RANGE_HZ`, a frame voiced when that peak holds 50 % of its energy and it is loud)."""
    lo, hi = int(SAMPLE_RATE / F0_RANGE_HZ[1]), int(SAMPLE_RATE / F0_RANGE_HZ[0])
    found: list[float] = []
    for pcm in pcms:
        x = np.asarray(pcm, dtype=np.float64) / 32768.0
        for start in range(0, len(x) - _FRAME, _FRAME // 2):
            frame = x[start : start + _FRAME] - np.mean(x[start : start + _FRAME])
            energy = float(np.dot(frame, frame))
            if energy < 1e-3 * _FRAME * 0.01:
                continue
            ac = np.correlate(frame, frame, mode="full")[_FRAME - 1 :]
            lag = lo + int(np.argmax(ac[lo:hi]))
            if ac[lag] >= 0.5 * ac[0]:
                found.append(SAMPLE_RATE / lag)
    return float(np.median(found)) if found else None


@dataclass(frozen=True)
class VoiceFigures:
    """One voice on one set of lines."""

    voice: str
    lines: int
    chars: int
    errors: int
    audio_s: float
    synth_s: float
    pcms: tuple[Pcm, ...]
    worst: tuple[tuple[float, str, str], ...]

    @property
    def cer(self) -> float:
        return self.errors / self.chars if self.chars else 0.0


def measure_voice(voice: Voice, texts: Sequence[str], asr: ASREngine, worst: int = 3) -> VoiceFigures:
    """Speak every line in ``voice`` (uncached, timed), transcribe it, count the edits."""
    engine = voice.make(cache=False)
    if (load := getattr(engine, "load", None)) is not None:
        load()
    errors = chars = 0
    synth = audio = 0.0
    pcms: list[Pcm] = []
    per_line: list[tuple[float, str, str]] = []
    for text in texts:
        started = _CLOCK.now_ns()
        pcm = engine.synthesize(text)
        synth += (_CLOCK.now_ns() - started) / 1e9
        audio += len(pcm) / SAMPLE_RATE
        heard = asr.transcribe(pcm)
        e, c = cer_counts(text, heard)
        errors, chars = errors + e, chars + c
        pcms.append(pcm)
        per_line.append((e / max(c, 1), text, heard))
    per_line.sort(key=lambda t: -t[0])
    return VoiceFigures(
        voice.name, len(texts), chars, errors, audio, synth, tuple(pcms), tuple(per_line[:worst])
    )


def voices_named(spec: str) -> list[Voice]:
    """``all`` (the catalogue), or a comma list of voice names."""
    if spec == "all":
        return list(CATALOGUE.values())
    return [get_voice(name.strip()) for name in spec.split(",") if name.strip()]


def run_voices(
    spec: str,
    sets: dict[str, Sequence[str]],
    asr: ASREngine,
    *,
    cpu: str,
    update: bool = False,
    out: Callable[[str], None] = print,
) -> dict[str, VoiceJson]:
    """Every voice of ``spec`` on every named set of lines: the table printed, the figures returned (and
    written to ``voices.json`` with ``update``; the bundled lines must be among the sets, as ``bundled``)."""
    from voice.text.table import text_table

    figures: dict[str, VoiceJson] = {}
    rows = []
    for voice in voices_named(spec):
        entry: VoiceJson = {"sex": voice.sex, "engine": voice.engine}
        cells = [voice.name, voice.sex or "-"]
        pcms: list[Pcm] = []
        synth = audio = 0.0
        bundled_cer = 1.0  # as kept (rounded); a voice not measured on the bundled lines is out of the mix
        for set_name, texts in sets.items():
            f = measure_voice(voice, texts, asr)
            cer = round(f.cer, 4)
            bundled_cer = cer if set_name == "bundled" else bundled_cer
            worst: list[WorstJson] = [{"cer": round(c, 3), "text": t, "heard": h} for c, t, h in f.worst]
            entry[f"cer_{set_name}"] = cer
            entry[f"lines_{set_name}"] = f.lines
            entry[f"worst_{set_name}"] = worst
            pcms += f.pcms
            synth, audio = synth + f.synth_s, audio + f.audio_s
            cells.append(f"{f.cer:.3f}")
        f0 = median_f0(pcms)
        synth_rtf = round(synth / audio, 3) if audio else None
        per_line = round(synth / max(1, sum(len(t) for t in sets.values())), 3)
        entry["f0_median_hz"] = None if f0 is None else round(f0, 1)
        entry["synth_rtf"] = synth_rtf
        entry["synth_s_per_line"] = per_line
        entry["cpu"] = cpu
        figures[voice.name] = entry
        cells += [
            "-" if f0 is None else f"{f0:.0f}",
            f"{synth_rtf:.2f}",
            f"{per_line:.2f}",
            "yes" if bundled_cer <= CER_LIMIT else "no",
        ]
        rows.append(cells)
        out(f"  {voice.name}: " + ", ".join(f"{k} {v}" for k, v in entry.items() if k.startswith("cer_")))
    header = ["voice", "sex", *(f"CER {s}" for s in sets), "F0 Hz", "synth s/s", "synth s/line", "mix"]
    out(text_table(header, rows))
    out(f"on {cpu}; the default mix: CER on the bundled lines at most {CER_LIMIT:g}")
    if update:
        if "bundled" not in sets:
            raise SystemExit("--update-voices needs the bundled lines (no --texts, no --limit)")
        doc = {
            "measured_by": "scripts/bench_asr_cer --speech caller --voice all --update-voices",
            "cer_limit": CER_LIMIT,
            "voices": figures,
        }
        text = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        atomic_write_bytes(VOICES_PATH, text.encode("utf-8"))
        out(f"wrote {VOICES_PATH}")
    return figures
