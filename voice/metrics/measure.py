"""Recorded timeline → per-turn and per-call metrics, measured where the caller listens.

Input is a :class:`~voice.recording.Recording` only (WAV + event log), so every figure can be recomputed
later without re-running the call.  The caller's speech intervals come from the event log (the caller is
CallSim: its speech boundaries are exact); the assistant's speech comes from voice activity detection on
the assistant channel as heard, refined to the sample.  Definitions are in docs/metrics.md.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from voice.core import events as ev
from voice.core.audio import Pcm, ms_to_samples, samples_to_ms
from voice.metrics.call_metrics import BargeIn, CallMetrics, TurnMetrics
from voice.metrics.goal import caller_goal
from voice.metrics.rhythm import score_turn
from voice.recording import Recording
from voice.speech.vad import speech_segments

Segment = tuple[int, int]

BARGE_IN_SUCCESS_MS = 1500.0  # the assistant must fall silent within this long after a barge-in onset
YIELD_SILENCE_MS = 300.0  # silence that counts as having stopped (longer than a sentence gap)
TAKEOVER_MIN_MS = 300.0  # assistant speech shorter than this inside a pause is not a takeover
BACKCHANNEL_CARRY_MS = 500.0  # the reply must keep going at least this long past a backchannel's end
PACING_KEYS = ("p50", "p99", "max")  # the driver's frame lateness in a recording's meta (``pacing_late_ms``)


def heard_span(
    speech_ms: Sequence[tuple[float, float]], onset: float | None, until: float
) -> tuple[float, float] | None:
    """What the caller heard from ``onset`` on, in ms: to the end of the last assistant speech segment that
    starts before ``until`` (the next caller turn, or the end of the call).  None without an onset."""
    if onset is None:
        return None
    return onset, max((e for s, e in speech_ms if onset <= s < until), default=max(onset, until))


def reply_spans_ms(m: CallMetrics) -> list[tuple[float, float] | None]:
    """Per caller turn, where its reply was heard (None: unanswered): what is transcribed as the reply and
    what a judge reads."""
    ends = [t.caller_start_ms for t in m.turns[1:]] + [m.duration_ms] * bool(m.turns)
    return [
        heard_span(m.assistant_speech_ms, t.reply_onset_ms, nxt) for t, nxt in zip(m.turns, ends, strict=True)
    ]


def assistant_segments(pcm: Pcm) -> list[Segment]:
    """The assistant's speech as heard, in samples (webrtcvad, 60 ms minimum, 200 ms gaps merged)."""
    return speech_segments(pcm, min_speech_ms=60, min_silence_ms=200)


def merge_segments(segments: Sequence[Segment], gap: int) -> list[Segment]:
    """Join segments separated by less than ``gap`` samples."""
    out: list[Segment] = []
    for s, e in segments:
        if out and s - out[-1][1] < gap:
            out[-1] = (out[-1][0], max(e, out[-1][1]))
        else:
            out.append((s, e))
    return out


def overlap(segments: Sequence[Segment], lo: int, hi: int) -> int:
    """Samples of ``segments`` inside ``[lo, hi)``."""
    return sum(max(0, min(e, hi) - max(s, lo)) for s, e in segments)


def first_onset(segments: Sequence[Segment], lo: int, hi: int) -> int | None:
    """First segment start in ``[lo, hi)``."""
    return next((s for s, _ in segments if lo <= s < hi), None)


def _ms(samples: int, rate: int) -> float:
    return round(samples_to_ms(samples, rate), 3)


def measure(rec: Recording, segments: Sequence[Segment] | None = None) -> CallMetrics:
    """Compute every metric of one call from its recording.

    ``segments`` are the assistant's speech as heard (:func:`assistant_segments`), when the caller already
    has them: voice detection runs once per call.
    """
    rate = rec.sample_rate
    segs = list(segments) if segments is not None else assistant_segments(rec.assistant)
    runs = merge_segments(segs, ms_to_samples(YIELD_SILENCE_MS, rate))
    events = rec.events
    start = next((e for e in events if isinstance(e, ev.CallStarted)), None)
    turns_ev = [e for e in events if isinstance(e, ev.CallerSpoke)]
    barge = {e.turn: e.at for e in events if isinstance(e, ev.BargedIn)}
    backch = {e.turn: (e.start, e.end) for e in events if isinstance(e, ev.BackchannelSaid)}
    plans = {e.turn: e for e in events if isinstance(e, ev.TurnPlanned)}
    end = next((e for e in events if isinstance(e, ev.CallEnded)), None)
    clears = [e.t for e in events if isinstance(e, ev.PlayoutCleared)]
    gaps = _simulator_gaps(events, turns_ev)
    n = len(rec.assistant)
    turns: list[TurnMetrics] = []
    caller_speech: list[Segment] = list(backch.values())
    prev_onset: int | None = None  # the previous turn's reply onset (samples), None before any reply
    # after a hang-up that ended the call properly, the caller said nothing more: later turns are not turns
    # of the call (whether hanging up was right is a question of content, not timing)
    hangup = _assistant_hangup(events) if end is not None and not end.failed else None
    cut = [d for d in turns_ev if hangup is not None and d.speech_end > hangup]
    turns_ev = [d for d in turns_ev if d not in cut]  # not turns of the call: the assistant had hung up
    asr = _assistant_asr(events, [d.speech_start for d in turns_ev])
    for i, d in enumerate(turns_ev):
        idx, cs, ce, pause = d.turn, d.speech_start, d.speech_end, d.pause
        nxt = turns_ev[i + 1].speech_start if i + 1 < len(turns_ev) else n
        silent = ([pause] if pause is not None else []) + gaps.get(idx, [])  # the caller's own pauses
        # a barge-in: scripted (a cue), or the caller's turn began while the assistant was speaking
        at = barge.get(idx, cs if _covering(runs, cs) is not None else None)
        bi = _barge_in(runs, at, n, rate, scripted=idx in barge) if at is not None else None
        # the reply is speech still going at, or starting after, the caller's end; after a barge-in, only
        # what starts once the assistant yielded.  Speech that begins and ends inside the turn: false starts.
        lo = max(cs, _stop_point(runs, at)) if at is not None else cs
        onset = next((s for s, e in segs if lo <= s < nxt and e > ce), None)
        false_starts = sum(1 for s, e in segs if lo <= s and e <= ce)
        takeover = None
        if silent:
            min_len = ms_to_samples(TAKEOVER_MIN_MS, rate)
            takeover = any(p0 <= s < p1 and e - s >= min_len for p0, p1 in silent for s, e in segs)
        carried = None
        if idx in backch:
            bs, be = backch[idx]
            # a reply still owed to the previous turn when the backchannel came is not a reaction to it
            owed = i > 0 and (prev_onset is None or prev_onset > bs)
            carry = ms_to_samples(BACKCHANNEL_CARRY_MS, rate)
            carried = _carried_on(runs, bs, be, cs, clears, carry, count_resumed=not owed)
        prev_onset = onset
        plan = plans.get(idx)
        turns.append(
            _scored(
                turn=idx,
                mode=d.mode,
                text=plan.text if plan else "",
                caller_start_ms=_ms(cs, rate),
                caller_end_ms=_ms(ce, rate),
                reply_onset_ms=_ms(onset, rate) if onset is not None else None,
                latency_ms=_ms(onset - ce, rate) if onset is not None else None,
                overlap_ms=_ms(overlap(segs, cs, ce), rate),
                barge_in=bi,
                false_starts=false_starts,
                pause_takeover=takeover,
                backchannel_carried_on=carried,
                reference=plan.reference if plan else None,
                assistant_asr_text=asr.get(i),
            )
        )
        caller_speech += _without((cs, ce), silent)
    first_caller = turns_ev[0].speech_start if turns_ev else n
    expects_greeting = start.greeting if start is not None else True
    greeting = first_onset(segs, 0, first_caller) if expects_greeting else None
    return CallMetrics(
        call_id=rec.call_id,
        dialogue_id=start.dialogue if start is not None else rec.call_id,
        outcome=end.reason if end else "unknown",
        failed=end.failed if end else True,
        duration_ms=_ms(n, rate),
        first_word_ms=_ms(greeting, rate) if greeting is not None else None,
        turns=turns,
        caller_turns_planned=len(plans),
        greeting_text=start.greeting_reference if start is not None else None,
        overlap_ms=_ms(sum(overlap(segs, s, e) for s, e in caller_speech), rate),
        longest_silence_ms=_longest_gap(sorted(caller_speech + segs), rate),
        assistant_speech_ms=[(_ms(s, rate), _ms(e, rate)) for s, e in segs],
        hangup_ms=_ms(hangup, rate) if hangup is not None else None,
        caller_turns_cut=len(cut) + (max(0, len(plans) - len(cut) - len(turns)) if hangup is not None else 0),
        detail=(end.detail if end else "") or _hangup_reason(events),
        goal=caller_goal(events, n, rate),
        records_capped=next((_counts(e.counts) for e in events if isinstance(e, ev.RecordsCapped)), {}),
        pacing_late_ms=_pacing(rec.meta.get("pacing_late_ms")),
    )


def _simulator_gaps(
    events: Sequence[ev.CallEvent], turns: Sequence[ev.CallerSpoke]
) -> dict[int, list[Segment]]:
    """Per turn, the gaps inside it where a piece of a turn voiced clause by clause came late (its
    ``caller_late`` events after the turn's first sample; the turn's ``pause`` keeps only the longest)."""
    began = {d.turn: d.audio_start for d in turns}
    out: dict[int, list[Segment]] = {}
    for e in events:
        if isinstance(e, ev.CallerLate) and e.turn in began and e.due > began[e.turn]:
            out.setdefault(e.turn, []).append((e.due, e.t))
    return out


def _without(span: Segment, holes: Sequence[Segment]) -> list[Segment]:
    """``span`` less the ``holes`` (which may overlap)."""
    out, lo = [], span[0]
    for h0, h1 in sorted(holes):
        if h0 > lo:
            out.append((lo, min(h0, span[1])))
        lo = max(lo, h1)
    if lo < span[1]:
        out.append((lo, span[1]))
    return [(a, b) for a, b in out if b > a]


def _pacing(meta: Any) -> dict[str, float] | None:
    """The driver's frame-pacing figures from a recording's meta, if it has them (all three, as numbers)."""
    ok = isinstance(meta, Mapping) and all(isinstance(meta.get(k), int | float) for k in PACING_KEYS)
    return {k: float(meta[k]) for k in PACING_KEYS} if ok else None


def _counts(counts: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    return {
        str(k): {str(f): int(n) for f, n in v.items()} for k, v in counts.items() if isinstance(v, Mapping)
    }


def _scored(**fields: Any) -> TurnMetrics:
    turn = TurnMetrics(**fields)
    r = score_turn(turn)
    return dataclasses.replace(turn, rhythm=r.score, rhythm_reasons=r.reasons)


def _assistant_asr(events: Sequence[ev.CallEvent], starts: Sequence[int]) -> dict[int, str]:
    """What the assistant says it heard, by position in ``starts`` (the caller turns' first audible samples).

    The texts of its ``log`` messages of kind ``caller`` (``docs/protocol.md``); each belongs to the last
    caller turn that had begun when it arrived.  Several for one turn (it took the turn for two) are joined.
    """
    heard: dict[int, list[str]] = {}
    for e in events:
        log = ev.assistant_log(e)
        if log is None or log.get("kind") != "caller" or not isinstance(log.get("text"), str):
            continue
        i = bisect.bisect_right(starts, e.t) - 1
        if i >= 0:
            heard.setdefault(i, []).append(log["text"])
    return {i: " / ".join(texts) for i, texts in heard.items()}


def _longest_gap(intervals: Sequence[Segment], rate: int) -> float | None:
    """Longest stretch covered by no interval, between the first start and the last end."""
    spans = [(s, e) for s, e in intervals if e > s]
    if not spans:
        return None
    longest, reach = 0, spans[0][1]
    for s, e in spans[1:]:
        longest = max(longest, s - reach)
        reach = max(reach, e)
    return _ms(longest, rate)


def _assistant_hangup(events: Sequence[ev.CallEvent]) -> int | None:
    """Where the assistant hung up or closed the line (the caller falls silent there), if it did."""
    for e in events:
        if (isinstance(e, ev.HungUp) and e.by == "assistant") or isinstance(e, ev.LineDropped):
            return e.t
        if isinstance(e, ev.HungUp | ev.CallEnded):
            return None  # the caller hung up first: what follows is not the assistant's doing
    return None


def _hangup_reason(events: Sequence[ev.CallEvent]) -> str:
    """The reason the assistant gave when it hung up, if it did (the call's detail says nothing else); a
    reason that only says it hung up (``assistant hung up``) is not repeated after "the assistant hung up"."""
    reason = next((e.reason for e in events if isinstance(e, ev.HungUp) and e.by == "assistant"), "").strip()
    said = reason.lower().rstrip(".").removeprefix("the ").removeprefix("assistant ")
    if said in ("hung up", "hangup", "hang up"):
        return "the assistant hung up"
    return f"the assistant hung up: {reason}" if reason else ""


def _covering(runs: Sequence[Segment], at: int) -> Segment | None:
    """The assistant's speech run that covers sample ``at``, if any."""
    return next(((s, e) for s, e in runs if s <= at < e), None)


def _stop_point(runs: Sequence[Segment], at: int) -> int:
    """Where the assistant's speech run covering sample ``at`` ends (``at`` itself if none covers it)."""
    covering = _covering(runs, at)
    return covering[1] if covering is not None else at


def _barge_in(runs: Sequence[Segment], at: int, n: int, rate: int, *, scripted: bool) -> BargeIn:
    yield_gap = ms_to_samples(YIELD_SILENCE_MS, rate)
    active = any(s <= at < e + yield_gap for s, e in runs)  # speaking, or paused shorter than a yield
    covering = _covering(runs, at)
    latency: float | None
    if covering is None:
        latency = 0.0  # already silent at the barge-in onset
    elif covering[1] >= n:
        latency = None  # still talking when the recording ended: it never stopped
    else:
        latency = _ms(covering[1] - at, rate)
    success = active and latency is not None and latency <= BARGE_IN_SUCCESS_MS
    return BargeIn(_ms(at, rate), active, latency, success, scripted)


def _carried_on(
    runs: Sequence[Segment],
    start: int,
    end: int,
    next_turn: int,
    clears: Sequence[int],
    carry: int,
    count_resumed: bool = True,
) -> bool | None:
    """Did the assistant keep talking through a backchannel said during ``[start, end)``?

    True if its speech run active at ``start`` goes on at least ``carry`` past ``end``.  If the run ends
    sooner, it stopped because of the backchannel (False) when it sent ``clear`` or spoke again before the
    caller's next turn; otherwise its reply simply ended there and the backchannel tells nothing (None).
    Speaking again is evidence only with ``count_resumed``: when the caller's previous turn was still
    unanswered at the backchannel (the assistant talked on through it), what follows is that answer.
    """
    run = next(((s, e) for s, e in runs if s <= start < e), None)
    if run is None:
        return None
    if run[1] >= end + carry:
        return True
    # a clear arrives once the audio before it has played, so it lands at (or just after) the last sound
    cleared = any(start <= c <= run[1] + carry for c in clears)
    resumed = count_resumed and any(run[1] < s < next_turn for s, _ in runs)
    return False if cleared or resumed else None
