"""The per-call sections of ``report.html``: timeline, recording, and the turns side by side.

Each call is a ``<details>`` block: a two-lane timeline of who spoke when (with latency, barge-in, pause,
backchannel and false-start marks), a player for the stereo recording, then one row per caller turn: what the
caller said, what the assistant says it heard (its own ASR, when it sends ``log`` messages of kind
``caller``), the latency, the cues, the rhythm score with its reasons, what the assistant was heard saying and
the reference reply; with a reactive caller, its verdict on its goal and each decision it made.  Every figure
is read from the call's entry in ``results.json``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from html import escape

from voice.app.report.audio import data_uri, encode_opus
from voice.app.report.data import CALL_COLUMNS, TargetView
from voice.app.report.goals import DECISION_HEADER, decision_rows, verdict_line, wait_lines
from voice.app.report.scores import call_scores_html
from voice.app.report.timeline import (
    ASSISTANT,
    BACKCHANNEL,
    BARGE,
    CALLER,
    FALSE_START,
    timeline_from_recording,
    timeline_svg,
)
from voice.core.audio import Pcm
from voice.errors import RecordingError
from voice.metrics.call_metrics import TurnMetrics
from voice.metrics.figures import fmt_ms, fmt_score
from voice.metrics.model.call_record import CallRecord
from voice.metrics.reduce import percentile
from voice.recording import load_recording, recording_paths
from voice.speech.text import normalize_zh


def table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Collection[int] = ()) -> str:
    """An HTML table of already-escaped cells (the columns in ``numeric`` right-aligned), scrolling sideways
    when wider than the page."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=n' if i in numeric else ''}>{c}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def anchor(ti: int, call_id: str) -> str:
    return f"call-{ti}-{call_id}"


def logs_hearing(t: TargetView) -> bool:
    """Whether the target's assistant logged what it heard in any call (then every call shows the column)."""
    return any(x.assistant_asr_text is not None for c in t.calls for x in c.metrics.turns)


def _cues(t: TurnMetrics) -> str:
    cues = []
    if n := t.false_starts:
        cues.append(f"{n} false start{'s' if n > 1 else ''} ✗")
    bi = t.barge_in
    if bi is not None:
        stop = bi.stop_latency_ms
        what = "barge-in" if bi.scripted else "unscripted barge-in"
        if not bi.active:
            cues.append(f"{what}: assistant already silent")
        else:
            ok = "✓" if bi.success else "✗"
            cues.append(f"{what} {ok} " + ("never stopped" if stop is None else f"stopped in {stop:.0f} ms"))
    if t.pause_takeover is not None:
        cues.append("pause taken over ✗" if t.pause_takeover else "pause respected ✓")
    if t.backchannel_carried_on is not None:
        cues.append(
            "carried on after backchannel ✓" if t.backchannel_carried_on else "stopped at backchannel ✗"
        )
    return escape(", ".join(cues) or "-")


def _asr_cell(t: TurnMetrics) -> str:
    """What the assistant says it heard, marked when it differs from what the caller said (text only)."""
    heard = t.assistant_asr_text
    if heard is None:
        return '<span class="meta">(nothing logged)</span>'
    if normalize_zh(heard) == normalize_zh(t.text):
        return escape(heard)
    return f'<span class="diff" title="differs from what the caller said">{escape(heard)}</span>'


def turn_rows(c: CallRecord, *, show_asr: bool) -> str:
    """One row per caller turn; with ``show_asr`` a column for what the assistant logged hearing."""
    rows = []
    for t in c.metrics.turns:
        reasons = "; ".join(t.rhythm_reasons)
        rhythm = "-" if t.rhythm is None else f"{t.rhythm}/5"
        heard = t.heard_text
        rows.append(
            [
                str(t.turn + 1),
                escape(t.mode),
                escape(t.text),
                *([_asr_cell(t)] if show_asr else []),
                f'<span class="nw">{escape(fmt_ms(t.latency_ms, " ms"))}</span>'
                if t.latency_ms is not None
                else "no reply",
                _cues(t),
                rhythm + (f'<div class="why">{escape(reasons)}</div>' if reasons else ""),
                escape(heard or ("-" if heard is None else "(nothing heard)")),
                escape(t.reference or "-"),
            ]
        )
    header = [
        "#",
        "mode",
        "caller said",
        *(["assistant heard (its own ASR)"] if show_asr else []),
        "latency",
        "false starts / barge-in / pause / backchannel",
        "rhythm",
        "assistant said (as heard)",
        "reference",
    ]
    return table(header, rows).replace("<table>", '<table class="turns">', 1)


Channels = tuple[Pcm, Pcm, int]  # the recording's caller and assistant, and its sample rate


def player(t: TargetView, call_id: str, rec_channels: Channels | None, audio: str) -> str:
    wav, _ = recording_paths(t.folder, call_id)
    href = escape(f"{t.rel}/{wav.name}" if t.rel else wav.name)
    if audio == "none" or not wav.exists():
        return ""
    if audio == "embed" and rec_channels is not None:
        data = encode_opus(*rec_channels)
        if data is not None:
            return (
                f'<div class="player"><audio controls preload="metadata" src="{data_uri(data)}"></audio>'
                f'<span class="meta">stereo: caller left, assistant right · <a href="{href}">WAV</a>'
                "</span></div>"
            )
    return f'<p><a href="{href}">recording (WAV, caller left, assistant right)</a></p>'


def _ending(c: CallRecord) -> str:
    """Why the call ended, when it is worth saying: a failure, or an end that was not the script's."""
    detail = c.metrics.detail
    outcome = escape(c.metrics.outcome) + (f": {escape(detail)}" if detail else "")
    if c.metrics.failed:
        return f'<p class="fail">failed: {outcome}</p>'
    if c.metrics.outcome != "completed" or detail:
        return f'<p class="meta">ended: {outcome}</p>'
    return ""


def caller_goal(c: CallRecord) -> str:
    """A reactive call's caller: its verdict, each decision (what it heard, said, and from what), its waits.

    Shown under the turns because the decisions explain them: a turn the caller repeated, a hang-up, a
    line the model was refused.  Empty for a scripted call.
    """
    line = verdict_line(c)
    if line is None:
        return ""
    rows = [[escape(x) for x in r] for r in decision_rows(c)]
    waits = wait_lines(c)
    late = (
        '<p class="meta">the caller was late (its model or voice was slow; not counted against the '
        f"assistant): {escape('; '.join(waits))}</p>"
        if waits
        else ""
    )
    decisions = table(DECISION_HEADER, rows).replace("<table>", '<table class="turns">', 1) if rows else ""
    return f"<h3>The caller</h3><p>{escape(line)}</p>{decisions}{late}"


def call_section(t: TargetView, ti: int, c: CallRecord, audio: str, *, open_: bool, show_asr: bool) -> str:
    m = c.metrics
    call_id = m.call_id
    facts = " · ".join(
        f(c) for name, f in CALL_COLUMNS if name in ("scenario", "preset", "relation", "outcome")
    )
    served = " · served" if m.served else " · not served"
    fs = m.false_starts
    p50 = fmt_ms(percentile(m.latencies_ms, 50), " ms")
    goal = f" · goal {(m.goal.met or 'none')}" if m.goal else ""
    head = (
        f'<summary>{escape(call_id)} <span class="meta">— {escape(t.target)} · {escape(facts)}{served}'
        f" · latency p50 {escape(p50)} · rhythm {fmt_score(m.rhythm)}"
        + (f" · {fs} false start{'s' if fs > 1 else ''}" if fs else "")
        + escape(goal)
        + "</span></summary>"
    )
    body: list[str] = [_ending(c)]
    channels = None
    try:
        rec = load_recording(t.folder / call_id)
        channels = (rec.caller, rec.assistant, rec.sample_rate)
        body.append(
            timeline_svg(
                # none measured: detected again (the same detection: a call whose assistant never spoke)
                timeline_from_recording(rec, m.assistant_speech_ms or None),
                m.turns,
                first_word_ms=m.first_word_ms,
                uid=anchor(ti, call_id),
            )
        )
    except RecordingError:
        body.append('<p class="meta">no recording (the call never connected)</p>')
    body.append(player(t, call_id, channels, audio))
    body.append(turn_rows(c, show_asr=show_asr))
    body.append(caller_goal(c))
    body.append(call_scores_html(t, call_id))
    return (
        f'<details class="call" id="{escape(anchor(ti, call_id))}"{" open" if open_ else ""}>'
        + head
        + "".join(body)
        + "</details>"
    )


def call_stub(t: TargetView, ti: int, c: CallRecord) -> str:
    """A call a big report does not show in full: its figures in one line and links to its files."""
    m = c.metrics
    call_id = m.call_id
    audio, log = recording_paths(t.folder, call_id)
    links = [
        f'<a href="{escape(f"{t.rel}/{p.name}" if t.rel else p.name)}">{escape(p.suffix.lstrip("."))}</a>'
        for p in (audio, log)
        if p.exists()
    ]
    p50 = fmt_ms(percentile(m.latencies_ms, 50), " ms")
    return (
        f'<p class="call" id="{escape(anchor(ti, call_id))}"><b>{escape(call_id)}</b>'
        f' <span class="meta">— {escape(m.outcome)} · latency p50 {escape(p50)}'
        f" · rhythm {fmt_score(m.rhythm)} · {' · '.join(links) or 'no recording'}</span></p>"
    )


def legend() -> str:
    items = [
        (CALLER, "caller speech"),
        (BACKCHANNEL, "caller backchannel"),
        (ASSISTANT, "assistant speech (as heard)"),
        (FALSE_START, "false start: begun and abandoned while the caller spoke"),
        (BARGE, "barge-in; bar = time until the assistant stopped"),
    ]
    spans = "".join(
        f'<span><i class="swatch" style="background:{c}"></i>{escape(n)}</span>' for c, n in items
    )
    return (
        f'<p class="legend">{spans}<span>arrows: response latency (green ≥ 4, amber 3, red ≤ 2 rhythm)</span>'
        "<span>dashed box: mid-turn pause</span>"
        "<span>hover for texts; click a timeline to play from there</span></p>"
    )
