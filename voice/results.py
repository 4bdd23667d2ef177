"""Metrics → JSON-ready dicts, run summaries and the printed table."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voice.audio import atomic_write_bytes
from voice.measure import CallMetrics, percentile


def call_to_json(m: CallMetrics) -> dict[str, Any]:
    d = dataclasses.asdict(m)
    d["turns_completed"] = m.turns_completed
    d["latency_p50_ms"] = percentile(m.latencies_ms, 50)
    d["latency_p90_ms"] = percentile(m.latencies_ms, 90)
    d["rhythm"] = m.rhythm
    return d


def summarize(calls: Sequence[CallMetrics]) -> dict[str, Any]:
    """Overall figures across calls: latency percentiles over every replied turn, barge-in success, …"""
    lat = [x for c in calls for x in c.latencies_ms]
    barge = [b for c in calls for b in c.barge_ins]
    stops = [b.stop_latency_ms for b in barge if b.stop_latency_ms is not None]
    pauses = [t.pause_takeover for c in calls for t in c.turns if t.pause_takeover is not None]
    backch = [
        t.backchannel_carried_on for c in calls for t in c.turns if t.backchannel_carried_on is not None
    ]
    firsts = [c.first_word_ms for c in calls if c.first_word_ms is not None]
    turns = sum(len(c.turns) for c in calls)
    rhythm = [t.rhythm for c in calls for t in c.turns if t.rhythm is not None]
    silences = [c.longest_silence_ms for c in calls if c.longest_silence_ms is not None]
    return {
        "calls": len(calls),
        "calls_failed": sum(1 for c in calls if c.failed),
        "caller_turns": sum(c.caller_turns_planned for c in calls),
        "caller_turns_spoken": turns,
        "turns_completed": sum(c.turns_completed for c in calls),
        "latency_ms": {
            "n": len(lat),
            "p50": percentile(lat, 50),
            "p90": percentile(lat, 90),
            "p99": percentile(lat, 99),
            "mean": sum(lat) / len(lat) if lat else None,
        },
        "barge_in": {
            "n": len(barge),
            "successes": sum(1 for b in barge if b.success),
            "success_rate": sum(1 for b in barge if b.success) / len(barge) if barge else None,
            "stop_latency_p50_ms": percentile(stops, 50),
            "stop_latency_p90_ms": percentile(stops, 90),
        },
        "pause_takeover_rate": sum(pauses) / len(pauses) if pauses else None,
        "backchannel_carry_on_rate": sum(backch) / len(backch) if backch else None,
        "first_word_p50_ms": percentile(firsts, 50),
        "rhythm_mean": sum(rhythm) / len(rhythm) if rhythm else None,
        "rhythm_histogram": {str(k): rhythm.count(k) for k in range(1, 6)},
        "overlap_ms_total": sum(c.overlap_ms for c in calls),
        "longest_silence_ms_max": max(silences) if silences else None,
    }


def write_json(path: Path, obj: Any) -> None:
    """Atomically write pretty JSON (UTF-8, Chinese kept readable)."""
    atomic_write_bytes(path, (json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n").encode())


def _f(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.0f}{unit}"


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _rate(k: int, n: int) -> str:
    return "-" if n == 0 else f"{k}/{n}"


def format_table(calls: Sequence[CallMetrics], summary: dict[str, Any]) -> str:
    """A plain-text table: one row per call, then the overall row."""
    header = ("dialogue", "outcome", "turns", "p50 ms", "p90 ms", "barge-in", "1st word ms", "rhythm")
    rows: list[tuple[str, ...]] = []
    for c in calls:
        b = c.barge_ins
        rows.append(
            (
                c.call_id,
                c.outcome + (" (FAILED)" if c.failed else ""),
                f"{c.turns_completed}/{c.caller_turns_planned}",
                _f(percentile(c.latencies_ms, 50)),
                _f(percentile(c.latencies_ms, 90)),
                _rate(sum(1 for x in b if x.success), len(b)),
                _f(c.first_word_ms),
                _r(c.rhythm),
            )
        )
    lat, bi = summary["latency_ms"], summary["barge_in"]
    rows.append(
        (
            "ALL",
            f"{summary['calls'] - summary['calls_failed']}/{summary['calls']} ok",
            f"{summary['turns_completed']}/{summary['caller_turns']}",
            _f(lat["p50"]),
            _f(lat["p90"]),
            _rate(bi["successes"], bi["n"]),
            _f(summary["first_word_p50_ms"]),
            _r(summary["rhythm_mean"]),
        )
    )
    widths = [max(_width(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: tuple[str, ...]) -> str:
        return "  ".join(cell + " " * (widths[i] - _width(cell)) for i, cell in enumerate(r)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), sep, *(line(r) for r in rows[:-1]), sep, line(rows[-1])])


def _width(text: str) -> int:
    """Display width: CJK characters take two columns."""
    return sum(2 if ord(ch) > 0x2E7F else 1 for ch in text)
