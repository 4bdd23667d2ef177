"""The ground truth of a fidelity call: what the caller should have heard, from the rules alone.

Rebuilt from the caller's event log (exact speech boundaries) and a :class:`ReferenceBehaviour`'s rules,
never from the reference assistant's code, so a bug in the reference cannot hide one in ``measure()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

import voice.metrics.measure as vm
from server.assistants.behaviour import REPLY_GAP_MS, ReferenceBehaviour
from voice.core import events as ev
from voice.core.audio import ms_to_samples, samples_to_ms
from voice.core.events import CallEvent


class TurnTruth(TypedDict):
    """What ``measure`` should report of one caller turn (ms).  As in ``measure``, a figure is there only
    where the turn has it: a barge-in's (``success``, ``stop_latency``), a pause's, a backchannel's."""

    latency: float | None
    false_starts: int
    success: NotRequired[bool]
    stop_latency: NotRequired[float | None]  # None: the reference was still talking when the call ended
    takeover: NotRequired[bool]
    carried_on: NotRequired[bool | None]  # None: the reply ended on its own, telling nothing


class CallTruth(TypedDict):
    """What ``measure`` should report of a call: its first word (ms; None: no greeting) and each turn."""

    first_word: float | None
    turns: dict[int, TurnTruth]


def caller_bursts(events: Sequence[CallEvent]) -> list[tuple[int, int]]:
    """The caller's utterances, exact to the sample: turns (split at a scripted pause) and backchannels."""
    out: list[tuple[int, int]] = []
    for e in events:
        if isinstance(e, ev.CallerSpoke):
            cs, ce, pause = e.speech_start, e.speech_end, e.pause
            out += [(cs, pause[0]), (pause[1], ce)] if pause is not None else [(cs, ce)]
        elif isinstance(e, ev.BackchannelSaid):
            out.append((e.start, e.end))
    return sorted(out)


def truth_spans(b: ReferenceBehaviour, events: Sequence[CallEvent], audible: int) -> list[list[int]]:
    """Where the reference must be heard, ``[start, end, cut_by]`` in caller samples, by its rules.

    Utterances closer than the endpoint form one turn.  A turn starting while a reply is heard cuts every
    reply at onset + S (at once with ``stop_on_backchannel``, else only if it outlasts ``confirm_ms``); a
    turn starting while the reference is silent holds a reply not yet heard.  A turn longer than
    ``confirm_ms`` is answered at its end + D, never closer than REPLY_GAP_MS after the previous reply.
    ``cut_by`` is the onset of the caller speech that stopped the reply (-1: it ran to its end).
    """
    ms = ms_to_samples
    spans = [[ms(b.greeting_ms), ms(b.greeting_ms) + audible, -1]] if b.greeting_ms is not None else []
    turns: list[list[int]] = []
    for on, end in caller_bursts(events):
        if turns and on - turns[-1][1] < ms(b.endpoint):
            turns[-1][1] = max(turns[-1][1], end)
        else:
            turns.append([on, end])

    def cut(at: int, by: int) -> None:
        for sp in spans:
            if sp[1] > at:
                sp[1], sp[2] = max(sp[0], at), by

    for on, end in turns:
        heard = any(s <= on < e for s, e, _ in spans)
        pending = [s for s, e, _ in spans if s > on and e > s]
        if not heard and pending:
            cut(min(pending), on)
        long = end - on > ms(b.confirm_ms)
        if heard and b.stop_ms is not None and (b.stop_on_backchannel or long):
            cut(on + ms(b.stop_ms), on)
        if long:
            last = max((e for s, e, _ in spans if e > s), default=-(10**9))
            start = max(end + ms(b.reply_ms), last + ms(REPLY_GAP_MS))
            spans.append([start, start + audible, -1])
    return [sp for sp in spans if sp[1] > sp[0]]


def truth(b: ReferenceBehaviour, events: Sequence[CallEvent], audible: int, length: int) -> CallTruth:
    """Every figure ``measure`` should report for a call recorded for ``length`` samples, in ms.

    By docs/metrics.md, except that a barge-in's onset is the caller's first audible sample (what
    the assistant hears), and a backchannel was carried on unless the reply stopped *for it* (False) or
    simply ended within 500 ms of it (None).  What would come after the caller hung up is never heard."""
    ms = ms_to_samples
    spans = [(s, min(e, length), by) for s, e, by in truth_spans(b, events, audible) if s < length]
    turns = [e for e in events if isinstance(e, ev.CallerSpoke)]
    bcs = {e.turn: (e.start, e.end) for e in events if isinstance(e, ev.BackchannelSaid)}
    per_turn: dict[int, TurnTruth] = {}
    for i, d in enumerate(turns):
        idx, cs, ce, pause = d.turn, d.speech_start, d.speech_end, d.pause
        hi = turns[i + 1].speech_start if i + 1 < len(turns) else 10**12
        covering = next(((s, e) for s, e, _ in spans if s <= cs < e), None)
        # the reply: speech going on at, or starting after, the caller's end (after a barge-in, once the
        # reference yielded); speech that begins and ends inside the turn is a false start
        lo = covering[1] if covering else cs
        onset = next((s for s, e, _ in spans if lo <= s < hi and e > ce), None)
        t: TurnTruth = {
            "latency": samples_to_ms(onset - ce) if onset is not None else None,
            "false_starts": sum(1 for s, e, _ in spans if lo <= s and e <= ce),
        }
        if d.mode == "barge_in" or covering:  # scripted, or the caller began while the reference spoke
            stop = samples_to_ms(covering[1] - cs) if covering else 0.0
            active = any(s <= cs < e + ms(vm.YIELD_SILENCE_MS) for s, e, _ in spans)
            t["success"] = (
                active and stop <= vm.BARGE_IN_SUCCESS_MS and (not covering or covering[1] < length)
            )
            t["stop_latency"] = None if covering and covering[1] >= length else stop
        if pause is not None:
            p0, p1 = pause
            t["takeover"] = any(p0 <= s < p1 and e - s >= ms(vm.TAKEOVER_MIN_MS) for s, e, _ in spans)
        if idx in bcs:
            bs, be = bcs[idx]
            end, by = next(((e, by) for s, e, by in spans if s <= bs < e), (-1, -1))
            lasted, stopped = end >= be + ms(vm.BACKCHANNEL_CARRY_MS), end >= 0 and by == bs
            t["carried_on"] = True if lasted else False if stopped else None
        per_turn[idx] = t
    first = samples_to_ms(spans[0][0]) if b.greeting_ms is not None and spans else None
    return {"first_word": first, "turns": per_turn}
