"""Scoring fidelity calls: every figure ``measure()`` gives of a call next to its truth, and the statistics.

The bench (:mod:`voice.app.benchmarks.fidelity.run`) builds the grid of cases and runs the calls; the truth
model
(:mod:`voice.app.benchmarks.fidelity.truth`) says what each call should have measured.  This module sits
between
them and the reader: :func:`compare` pairs each measured figure with its truth (and, from the reference's
``log`` reports, splits an error into delivery and measurement), :func:`summarize` gathers the pairs of many
calls into a :class:`Summary` (|error| percentiles, classification accuracy, the worst cases) and
:func:`format_summary` prints it.  It runs after the calls (measuring never delays a live call) and on saved
calls alike (``--remeasure``), so it depends on finished recordings only, never on running anything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

import voice.metrics.measure as vm
from server.assistants.behaviour import ReferenceBehaviour, reply_voice
from voice.app.benchmarks.fidelity.truth import TurnTruth, truth, truth_spans
from voice.core import events as ev
from voice.core.audio import active_bounds, ms_to_samples, samples_to_ms
from voice.core.events import CallEvent, assistant_log
from voice.metrics.reduce import percentiles
from voice.recording import Recording


@dataclass(frozen=True)
class Case:
    """One call of the grid: a behaviour, and the pause and seed of its dialogue."""

    behaviour: ReferenceBehaviour
    pause_ms: int
    seed: int

    @property
    def name(self) -> str:
        b = self.behaviour
        stop = "never" if b.stop_ms is None else f"{b.stop_ms:g}"
        flags = f"to{int(b.takeover_pauses)}-bc{int(b.stop_on_backchannel)}"
        return f"d{b.reply_ms:g}-s{stop}-{flags}-p{self.pause_ms}-r{self.seed}"


@dataclass
class CallResult:
    """A finished call, just run or loaded from disk: what :func:`compare` scores."""

    case: Case
    rec: Recording
    outcome: str
    failed: bool
    pacing_max_ms: float


NUMERIC = ("first word", "response latency", "barge-in stop latency")
MEASURE_ONLY = ("first word (vs arrival)", "response latency (vs arrival)")
BOOLEAN = (
    "answered",
    "barge-in success",
    "pause takeover",
    "backchannel carried on",
    "false starts",
)  # exact
DELIVERY = ("reply arrival - due", "clear arrival - due", "reference schedule - spec")


@dataclass(frozen=True)
class Pair:
    metric: str
    case: str
    turn: int | None
    measured: Any
    truth: Any


NO_TRUTH: TurnTruth = {"latency": None, "false_starts": 0}  # a turn the truth does not know


class Errors(TypedDict):
    """A timing figure's |measured - truth| (ms), as printed and in the JSON (``abs_error_ms``)."""

    n: int
    p50: float | None
    p99: float | None
    max: float | None
    bias: float | None  # the median signed error
    one_sided_none: int  # pairs where only one of the two is None


class AfterConstant(TypedDict):
    """A timing figure's error once the transport's constant is taken out (``after_constant_ms``)."""

    n: int
    constant: float | None
    p50: float | None
    p99: float | None
    max: float | None


class Agreement(TypedDict):
    """A classification's exact agreement (``classification``); ``wrong``: "truth->measured" counts."""

    n: int
    correct: int
    accuracy: float | None
    wrong: Counter[str]


class Worst(TypedDict):
    """One of the largest errors, with how late the caller loop ran in that call."""

    metric: str
    case: str
    turn: int | None
    measured: Any
    truth: Any
    caller_late_ms: float


class SummaryJson(TypedDict):
    """What ``scripts/bench_fidelity --json`` prints of one transport."""

    transport: str
    after_constant_ms: dict[str, AfterConstant]
    calls: int
    failed_calls: list[str]
    skipped: list[str]
    wall_s: float
    caller_pacing_max_late_ms: float
    abs_error_ms: dict[str, Errors]
    classification: dict[str, Agreement]
    delivery_ms: dict[str, Errors]
    worst: list[Worst]


def compare(result: CallResult) -> list[Pair]:
    """Every figure of one call next to its truth; where the reference's audio actually arrived; and each
    onset next to that arrival, which leaves measure()'s own error (the "vs arrival" rows)."""
    b, rec, name = result.case.behaviour, result.rec, result.case.name
    bounds = active_bounds(reply_voice(b.reply_len_ms))
    assert bounds is not None
    audible = bounds[1] - bounds[0]
    m, t = vm.measure(rec), truth(b, rec.events, audible, len(rec.assistant))
    delivery, arrived = _delivery(name, rec.events, truth_spans(b, rec.events, audible))
    first = getattr(m, "first_word_ms", None)
    pairs = [Pair("first word", name, None, first, t["first_word"])]
    if (at := arrived.get(ms_to_samples(t["first_word"] or 0))) is not None:
        pairs.append(Pair("first word (vs arrival)", name, None, first, samples_to_ms(at)))
    for tm in m.turns:
        tt = t["turns"].get(tm.turn, NO_TRUTH)
        bi, latency = tm.barge_in, tt["latency"]
        rows: list[tuple[str, Any, Any]] = [("response latency", tm.latency_ms, latency)]
        if latency is not None and (at := arrived.get(ms_to_samples(tm.caller_end_ms + latency))) is not None:
            rows.append(
                ("response latency (vs arrival)", tm.latency_ms, samples_to_ms(at) - tm.caller_end_ms)
            )
        rows.append(("answered", tm.latency_ms is not None, latency is not None))
        rows.append(("false starts", tm.false_starts, tt["false_starts"]))
        if "stop_latency" in tt or bi is not None:
            rows.append(("barge-in stop latency", bi.stop_latency_ms if bi else None, tt.get("stop_latency")))
            rows.append(("barge-in success", bi.success if bi else None, tt.get("success")))
        if "takeover" in tt or tm.pause_takeover is not None:
            rows.append(("pause takeover", tm.pause_takeover, tt.get("takeover")))
        if "carried_on" in tt or tm.backchannel_carried_on is not None:
            rows.append(("backchannel carried on", tm.backchannel_carried_on, tt.get("carried_on")))
        pairs += [Pair(metric, name, tm.turn, mv, tv) for metric, mv, tv in rows]
    return pairs + delivery


def _delivery(
    name: str, events: Sequence[CallEvent], spans: list[list[int]]
) -> tuple[list[Pair], dict[int, int]]:
    """The reference reports (``log``) right after sending a reply's first chunk or a clear, so the arrival
    just before a report is that message's: compare it with when it was due, and map where each reply was
    to be heard to where it was.  Its schedule against the spec's: a difference is the reference's bug,
    except for a reply held when the caller went on less than a frame before it (the spec drops it; the
    reference learns of the caller a frame late, sends its first chunk, then clears it)."""
    out: list[Pair] = []
    rx: ev.AudioReceived | None = None
    clear: ev.PlayoutCleared | None = None
    arrived: dict[int, int] = {}
    logs = [assistant_log(e) for e in events]
    held = {int(x["at"]) for x in logs if x is not None and x.get("why") == "caller_resumed"}

    def pair(metric: str, measured: int, due: int) -> Pair:
        return Pair(metric, name, None, samples_to_ms(measured), samples_to_ms(due))

    for e, log in zip(events, logs, strict=True):
        if isinstance(e, ev.AudioReceived):
            rx = e
        elif isinstance(e, ev.PlayoutCleared):
            clear = e
        elif log is not None and log.get("ref") == "reply" and rx is not None:
            heard, due, at = int(log["heard_at"]), int(log["chunk_at"]), rx.arrival
            near = min((sp[0] for sp in spans), key=lambda s: abs(s - heard), default=heard)
            out.append(pair("reply arrival - due", at, due))
            out += [] if heard in held else [pair("reference schedule - spec", heard, near)]
            arrived[heard] = at + heard - due
        elif log is not None and log.get("ref") == "clear" and clear is not None:
            out.append(pair("clear arrival - due", clear.t, int(log["at"])))
    return out, arrived


@dataclass
class Summary:
    calls: int
    failed: list[str]
    skipped: list[str]
    wall_s: float
    pairs: list[Pair] = field(default_factory=list)
    stalls: dict[str, float] = field(default_factory=dict)  # per case: the caller loop's worst lateness
    transport: str = "pcm"  # the line between CallSim and the reference (raw PCM websocket, webrtc, ...)

    def numeric(self, metric: str) -> Errors:
        """|measured - truth| p50, p99, max; bias: median signed error; one_sided_none: one of them None."""
        ps = [p for p in self.pairs if p.metric == metric and (p.measured, p.truth) != (None, None)]
        signed = np.asarray([p.measured - p.truth for p in ps if None not in (p.measured, p.truth)], float)
        q = [None if v is None else round(v, 3) for v in percentiles(np.abs(signed), (50, 99, 100))]
        bias = round(float(np.median(signed)), 3) if len(signed) else None
        n = len(signed)
        return {"n": n, "p50": q[0], "p99": q[1], "max": q[2], "bias": bias, "one_sided_none": len(ps) - n}

    def after_constant(self, metric: str) -> AfterConstant:
        """The transport's constant (the median signed error: what the line itself adds, e.g. Opus and a
        jitter buffer each way) and |error - constant| p50, p99, max: how exactly CallSim measures then."""
        signed = np.asarray(
            [
                p.measured - p.truth
                for p in self.pairs
                if p.metric == metric and None not in (p.measured, p.truth)
            ],
            float,
        )
        if not len(signed):
            return {"n": 0, "constant": None, "p50": None, "p99": None, "max": None}
        constant = float(np.median(signed))
        q = percentiles(np.abs(signed - constant), (50, 99, 100))
        p50, p99, top = (None if v is None else round(v, 3) for v in q)
        return {"n": len(signed), "constant": round(constant, 3), "p50": p50, "p99": p99, "max": top}

    def boolean(self, metric: str) -> Agreement:
        """Exact agreement (None, "tells nothing", is a value of its own); wrong: "truth->measured" counts."""
        ps = [p for p in self.pairs if p.metric == metric]
        wrong = Counter(f"{p.truth}->{p.measured}" for p in ps if p.measured != p.truth)
        ok = len(ps) - sum(wrong.values())
        return {
            "n": len(ps),
            "correct": ok,
            "accuracy": round(ok / len(ps), 4) if ps else None,
            "wrong": wrong,
        }

    def worst(self, k: int = 8) -> list[Worst]:
        def err(p: Pair) -> float:
            if p.metric in BOOLEAN or None in (p.measured, p.truth):
                return 1e9 if p.measured != p.truth else -1.0
            return float(abs(p.measured - p.truth))

        ranked = sorted((p for p in self.pairs if p.metric not in DELIVERY), key=err, reverse=True)
        return [
            {
                "metric": p.metric,
                "case": p.case,
                "turn": p.turn,
                "measured": p.measured,
                "truth": p.truth,
                "caller_late_ms": round(self.stalls.get(p.case, 0.0), 1),
            }
            for p in ranked[:k]
            if err(p) > 0
        ]

    def to_json(self) -> SummaryJson:
        return {
            "transport": self.transport,
            "after_constant_ms": {m: self.after_constant(m) for m in NUMERIC},
            "calls": self.calls,
            "failed_calls": self.failed,
            "skipped": self.skipped,
            "wall_s": round(self.wall_s, 1),
            "caller_pacing_max_late_ms": max(self.stalls.values(), default=0),
            "abs_error_ms": {m: self.numeric(m) for m in NUMERIC + MEASURE_ONLY},
            "classification": {m: self.boolean(m) for m in BOOLEAN},
            "delivery_ms": {m: self.numeric(m) for m in DELIVERY},
            "worst": self.worst(),
        }


def format_summary(s: Summary) -> str:
    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.2f}"

    late = max(s.stalls.values(), default=0.0)
    lines = [
        f"transport: {s.transport}; calls: {s.calls}, failed: {len(s.failed)}, "
        f"infeasible behaviours skipped: {len(s.skipped)}, "
        f"wall {s.wall_s:.0f} s, caller loop late up to {late:.1f} ms"
    ]
    cols = f"{'n':>6}{'p50':>9}{'p99':>9}{'max':>9}{'bias':>9}{'None≠':>7}"
    for title, metrics in (
        ("|measured - truth| (ms)", NUMERIC),
        ("measure() alone (ms)", MEASURE_ONLY),
        ("delivery |error| (ms)", DELIVERY),
    ):
        lines += ["", f"{title:<30}{cols}"]
        for m in metrics:
            r = s.numeric(m)
            row = "".join(f"{f(v):>9}" for v in (r["p50"], r["p99"], r["max"], r["bias"]))
            lines.append(f"{m:<30}{r['n']:>6}{row}{r['one_sided_none']:>7}")
    lines += ["", f"{'classification':<30}{'n':>6}{'correct':>9}{'accuracy':>10}  wrong (truth->measured)"]
    for m in BOOLEAN:
        a = s.boolean(m)
        acc = "-" if a["accuracy"] is None else f"{100 * a['accuracy']:.1f}%"
        lines.append(
            f"{m:<30}{a['n']:>6}{a['correct']:>9}{acc:>10}  "
            + ", ".join(f"{k} x{v}" for k, v in a["wrong"].items())
        )
    worst = [
        f"  {w['metric']}: {w['case']} turn {w['turn']}: {w['measured']} vs {w['truth']}"
        f" (caller loop late up to {w['caller_late_ms']} ms)"
        for w in s.worst()
    ]
    lines += ["", "largest errors (measured vs truth):", *worst] if worst else []
    lines += ["", "failed calls:", *(f"  {x}" for x in s.failed)] if s.failed else []
    return "\n".join(lines)  # fmt: skip


def format_transports(summaries: Sequence[Summary]) -> str:
    """One row per transport and timing figure: the constant the line adds, CallSim's error after it."""
    head = f"{'transport':<10}{'figure':<24}{'n':>5}{'constant':>10}{'p50':>8}{'p99':>8}{'max':>8}  failed"
    rows = [head]
    for s in summaries:
        for m in NUMERIC:
            r = s.after_constant(m)
            columns = ((r["constant"], 10), (r["p50"], 8), (r["p99"], 8), (r["max"], 8))
            cells = "".join(f"{'-' if v is None else format(v, '.1f'):>{w}}" for v, w in columns)
            rows.append(f"{s.transport:<10}{m:<24}{r['n']:>5}{cells}  {len(s.failed)}/{s.calls}")
    return "\n".join(rows)


def summarize(
    results: Sequence[CallResult], skipped: Sequence[str] = (), wall_s: float = 0.0, transport: str = "pcm"
) -> Summary:
    """Compare every call with its truth (after all calls: measuring never delays a live call)."""
    failed = [f"{r.case.name}: {r.outcome}" for r in results if r.failed]
    pairs = [p for r in results for p in compare(r)]
    stalls = {r.case.name: r.pacing_max_ms for r in results}
    return Summary(len(results), failed, list(skipped), wall_s, pairs, stalls, transport)
