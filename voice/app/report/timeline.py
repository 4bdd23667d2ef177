"""A call's timeline for the report: who spoke when, with latency, barge-in, pause, backchannel and
false-start marks.

The lanes come from the recording, exactly as measurement sees it: the caller's speech from the event log
(``caller_turn`` speech boundaries split at a mid-turn pause, and ``backchannel`` intervals), the assistant's
from :func:`voice.metrics.measure.assistant_segments` on the channel as heard.  The marks come from the call's
metrics (latency, barge-in, takeover, carry-on, false starts, rhythm), never recomputed here: a false start
is marked on the assistant segments that measurement's rule picks out (:func:`false_start_segments`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from voice.core import events as ev
from voice.core.audio import samples_to_ms
from voice.metrics.call_metrics import TurnMetrics
from voice.metrics.measure import assistant_segments
from voice.recording import Recording

CALLER = "#2563eb"
BACKCHANNEL = "#7dd3fc"
ASSISTANT = "#ea580c"
FALSE_START = "#fdba74"  # an abandoned start: paler than the assistant's speech, outlined in BARGE
BARGE = "#dc2626"
LATENCY = "#334155"
GOOD, FAIR, POOR = "#059669", "#d97706", "#dc2626"

W = 1200
X0, X1 = 86, W - 16  # plot area
CALLER_Y, ASSISTANT_Y, LANE_H = 30, 84, 24
MARK_Y = 68  # latency arrows, between the lanes
AXIS_Y = 118
H = 138


@dataclass(frozen=True)
class Timeline:
    """Speech intervals of one call in ms: caller turns (with turn index), backchannels, pauses, assistant."""

    duration_ms: float
    caller: list[tuple[float, float, int]]
    backchannels: list[tuple[float, float, int, str]]
    pauses: list[tuple[float, float, int]]
    assistant: list[tuple[float, float]]


def timeline_from_recording(
    rec: Recording, assistant_ms: Sequence[Sequence[float]] | None = None
) -> Timeline:
    """The call's lanes; ``assistant_ms`` is the assistant's speech as measured (else detected again)."""
    rate = rec.sample_rate

    def ms(x: float) -> float:
        return round(samples_to_ms(x, rate), 1)

    caller: list[tuple[float, float, int]] = []
    pauses: list[tuple[float, float, int]] = []
    backchannels: list[tuple[float, float, int, str]] = []
    for e in rec.events:
        if isinstance(e, ev.CallerSpoke):
            s, end = ms(e.speech_start), ms(e.speech_end)
            if e.pause is not None:
                p0, p1 = ms(e.pause[0]), ms(e.pause[1])
                caller += [(s, p0, e.turn), (p1, end, e.turn)]
                pauses.append((p0, p1, e.turn))
            else:
                caller.append((s, end, e.turn))
        elif isinstance(e, ev.BackchannelSaid):
            backchannels.append((ms(e.start), ms(e.end), e.turn, e.text))
    if assistant_ms is None:
        assistant = [(ms(s), ms(e)) for s, e in assistant_segments(rec.assistant)]
    else:
        assistant = [(round(s, 1), round(e, 1)) for s, e in assistant_ms]
    return Timeline(ms(len(rec.assistant)), caller, backchannels, pauses, assistant)


def false_start_segments(
    assistant: Sequence[tuple[float, float]], t: TurnMetrics
) -> list[tuple[float, float]]:
    """The assistant's segments that were turn ``t``'s false starts (none unless it counted some).

    Measurement's rule on the measured segments: speech that starts once the caller's turn has begun (once
    the assistant yielded, after a barge-in: its onset plus the stop latency) and ends before the caller's
    speech ends.  Times are compared to 0.1 ms, the timeline's rounding.
    """
    if not t.false_starts:
        return []
    lo, end = float(t.caller_start_ms), float(t.caller_end_ms)
    bi = t.barge_in
    if bi is not None:
        if bi.stop_latency_ms is None:
            return []  # it never stopped: nothing it began afterwards
        lo = max(lo, float(bi.at_ms) + float(bi.stop_latency_ms))
    return [(s, e) for s, e in assistant if s >= lo - 0.1 and e <= end + 0.1]


def rhythm_color(score: object) -> str:
    if not isinstance(score, int):
        return LATENCY
    return GOOD if score >= 4 else FAIR if score == 3 else POOR


def _turn_title(turn: int, t: TurnMetrics | None) -> str:
    """Turn ``turn``'s texts and figures (``t``: its metrics; None: a turn the call has none of)."""
    if t is None:
        return f"T{turn + 1} (): \nno reply"
    lines = [f"T{t.turn + 1} ({t.mode}): {t.text}"]
    lines.append("no reply" if t.latency_ms is None else f"latency {t.latency_ms:.0f} ms")
    if t.rhythm is not None:
        reasons = "; ".join(t.rhythm_reasons)
        lines.append(f"rhythm {t.rhythm}/5" + (f" ({reasons})" if reasons else ""))
    if t.heard_text is not None:
        lines.append(f"heard: {t.heard_text}")
    if t.reference:
        lines.append(f"reference: {t.reference}")
    return "\n".join(lines)


def timeline_svg(
    tl: Timeline, turns: Sequence[TurnMetrics], *, first_word_ms: float | None = None, uid: str = "0"
) -> str:
    """The two-lane SVG; ``data-*`` attributes let the page's script move a playhead with the audio.

    ``uid`` makes the id of its arrow marker unique in the page (``arr-<uid>``): every timeline of a report
    sits in one HTML document, where an id may appear once."""
    dur = max(tl.duration_ms, 1.0)
    arrow = escape(f"arr-{uid}")

    def x(ms: float) -> float:
        return X0 + max(0.0, min(ms, dur)) / dur * (X1 - X0)

    by_turn = {t.turn: t for t in turns}
    out = [
        f'<svg class="timeline" viewBox="0 0 {W} {H}" xmlns="http://www.w3.org/2000/svg"'
        f' data-x0="{X0}" data-x1="{X1}" data-dur="{dur:.1f}">',
        f'<defs><marker id="{arrow}" viewBox="0 0 6 6" refX="5" refY="3" markerWidth="6" markerHeight="6"'
        ' orient="auto-start-reverse"><path d="M0,0 L6,3 L0,6 z" fill="context-stroke"/></marker></defs>',
        f'<text x="8" y="{CALLER_Y + 16}" class="lane">caller</text>',
        f'<text x="8" y="{ASSISTANT_Y + 16}" class="lane">assistant</text>',
        f'<rect x="{X0}" y="{CALLER_Y}" width="{X1 - X0}" height="{LANE_H}" class="lanebg"/>',
        f'<rect x="{X0}" y="{ASSISTANT_Y}" width="{X1 - X0}" height="{LANE_H}" class="lanebg"/>',
    ]
    step = next(s for s in (1000, 2000, 5000, 10000, 20000, 30000, 60000, 1e9) if dur / s <= 16)
    k = 0.0
    while k <= dur:
        out.append(f'<line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{AXIS_Y}" y2="{AXIS_Y + 4}" class="axis"/>')
        out.append(
            f'<text x="{x(k):.1f}" y="{AXIS_Y + 16}" class="tick" text-anchor="middle">{k / 1000:g}s</text>'
        )
        k += step
    out.append(f'<line x1="{X0}" x2="{X1}" y1="{AXIS_Y}" y2="{AXIS_Y}" class="axis"/>')
    for s, e in tl.assistant:
        out.append(
            f'<rect x="{x(s):.1f}" y="{ASSISTANT_Y}" width="{max(x(e) - x(s), 0.8):.1f}" height="{LANE_H}"'
            f' fill="{ASSISTANT}"><title>assistant speech {s / 1000:.2f}–{e / 1000:.2f} s</title></rect>'
        )
    for t in turns:
        for s, e in false_start_segments(tl.assistant, t):
            title = (
                f"false start (T{t.turn + 1}): assistant speech {s / 1000:.2f}–{e / 1000:.2f} s began and"
                " ended while the caller was still speaking"
            )
            out.append(
                f'<rect x="{x(s):.1f}" y="{ASSISTANT_Y}" width="{max(x(e) - x(s), 0.8):.1f}"'
                f' height="{LANE_H}" fill="{FALSE_START}" stroke="{BARGE}" stroke-width="1.5"'
                f' class="falsestart">'
                f"<title>{escape(title)}</title></rect>"
            )
            out.append(
                f'<text x="{x(s):.1f}" y="{ASSISTANT_Y - 3}" class="mark" fill="{BARGE}">'
                f"false start<title>{escape(title)}</title></text>"
            )
    labelled: set[int] = set()
    for s, e, turn in tl.caller:
        measured = by_turn.get(turn)
        title = escape(_turn_title(turn, measured))
        out.append(
            f'<rect x="{x(s):.1f}" y="{CALLER_Y}" width="{max(x(e) - x(s), 0.8):.1f}" height="{LANE_H}"'
            f' fill="{CALLER}"><title>{title}</title></rect>'
        )
        if turn not in labelled:
            labelled.add(turn)
            score = measured.rhythm if measured else None
            label = f"T{turn + 1}" + (f" · {score}/5" if score is not None else "")
            out.append(
                f'<text x="{x(s):.1f}" y="{CALLER_Y - 6}" class="turn" fill="{rhythm_color(score)}">'
                f"{label}<title>{title}</title></text>"
            )
    for s, e, turn in tl.pauses:
        took = bool((measured := by_turn.get(turn)) and measured.pause_takeover)
        why = "the assistant took the turn in this pause" if took else "mid-turn pause, not taken over"
        out.append(
            f'<rect x="{x(s):.1f}" y="{CALLER_Y}" width="{max(x(e) - x(s), 0.8):.1f}" height="{LANE_H}"'
            f' class="{"pause took" if took else "pause"}"><title>{why}</title></rect>'
        )
    for s, e, turn, text in tl.backchannels:
        carried = measured.backchannel_carried_on if (measured := by_turn.get(turn)) else None
        what = {True: "carried on", False: "stopped", None: "reply had ended"}[carried]
        out.append(
            f'<rect x="{x(s):.1f}" y="{CALLER_Y + 4}" width="{max(x(e) - x(s), 0.8):.1f}"'
            f' height="{LANE_H - 8}"'
            f' fill="{BACKCHANNEL}" stroke="{BARGE if carried is False else CALLER}">'
            f"<title>backchannel {escape(text)}: the assistant {what}</title></rect>"
        )
    for t in turns:
        out += _barge_in_marks(t, x)
        lat, onset, end = t.latency_ms, t.reply_onset_ms, t.caller_end_ms
        if lat is None or onset is None:
            out.append(
                f'<text x="{x(end) + 3:.1f}" y="{MARK_Y + 4}" class="mark" fill="{POOR}">no reply</text>'
            )
            continue
        col, title = rhythm_color(t.rhythm), escape(_turn_title(t.turn, t))
        out.append(
            f'<line x1="{x(end):.1f}" x2="{x(onset):.1f}" y1="{MARK_Y}" y2="{MARK_Y}" stroke="{col}"'
            f' stroke-width="1.6" marker-end="url(#{arrow})"><title>{title}</title></line>'
        )
        out.append(
            f'<text x="{(x(end) + x(onset)) / 2:.1f}" y="{MARK_Y - 4}" class="mark" text-anchor="middle"'
            f' fill="{col}">{lat:.0f} ms</text>'
        )
    if first_word_ms is not None:
        out.append(
            f'<line x1="{x(first_word_ms):.1f}" x2="{x(first_word_ms):.1f}" y1="{ASSISTANT_Y - 4}"'
            f' y2="{ASSISTANT_Y}" stroke="{LATENCY}">'
            f"<title>first word at {first_word_ms:.0f} ms</title></line>"
        )
    out.append(
        f'<line class="playhead" x1="{X0}" x2="{X0}" y1="{CALLER_Y - 4}" y2="{AXIS_Y}" style="display:none"/>'
    )
    out.append("</svg>")
    return "\n".join(out)


def _barge_in_marks(t: TurnMetrics, x: Callable[[float], float]) -> list[str]:
    """A dashed line at the barge-in onset and a bar for how long the assistant kept talking."""
    bi = t.barge_in
    if bi is None:
        return []
    at, stop = float(bi.at_ms), bi.stop_latency_ms
    if not bi.active:
        title, label, col = (
            f"barge-in at {at / 1000:.2f} s: the assistant was already silent",
            "barge-in –",
            LATENCY,
        )
    else:
        stop_text = "never stopped" if stop is None else f"stopped {stop:.0f} ms later"
        ok = "success" if bi.success else "failure"
        title, label = (
            f"barge-in at {at / 1000:.2f} s: {stop_text} ({ok})",
            f"barge-in {'✓' if bi.success else '✗'}",
        )
        col = BARGE
    out = [
        f'<line x1="{x(at):.1f}" x2="{x(at):.1f}" y1="{CALLER_Y - 2}" y2="{ASSISTANT_Y + LANE_H + 2}"'
        f' stroke="{col}" stroke-dasharray="4 3" stroke-width="1.5"><title>{title}</title></line>',
        f'<text x="{x(at) + 3:.1f}" y="{ASSISTANT_Y - 3}" class="mark" fill="{col}">'
        f"{label}<title>{title}</title></text>",
    ]
    if bi.active and stop is not None and stop > 0:
        out.append(
            f'<rect x="{x(at):.1f}" y="{ASSISTANT_Y + LANE_H + 2}" width="{x(at + stop) - x(at):.1f}"'
            f' height="4" fill="{BARGE}"><title>{title}</title></rect>'
        )
    return out
