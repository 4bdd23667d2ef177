"""``report.html``: one self-contained page per run (inline CSS, SVG and a few lines of script).

Summary and breakdown tables, latency and rhythm charts, then per call a timeline of both sides with
latency and barge-in marks, the turn texts next to what the assistant was heard saying and the reference,
and a player for the stereo recording (caller left, assistant right) embedded as Ogg Opus.  Nothing is
fetched from the network, so the file can be mailed, attached to CI, or opened years later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from voice.errors import RecordingError
from voice.metrics.results import fmt_ms, fmt_score
from voice.report.audio import data_uri, encode_opus
from voice.report.data import (
    BREAKDOWN_COLUMNS,
    BREAKDOWN_TITLES,
    CALL_COLUMNS,
    SUMMARY_COLUMNS,
    RunView,
    TargetView,
    describe_run,
    latencies,
    rhythm_counts,
)
from voice.report.svg import cdf, color, grouped_bars, histogram
from voice.report.timeline import ASSISTANT, BACKCHANNEL, BARGE, CALLER, timeline_from_recording, timeline_svg
from voice.run.recording import load_recording, recording_paths

AUDIO_MODES = ("embed", "link", "none")
OPEN_CALLS = 12  # with more calls than this, per-call sections start collapsed

CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",
 "WenQuanYi Micro Hei",sans-serif;
 color:#0f172a;background:#f8fafc;margin:0}
main{max-width:1240px;margin:0 auto;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid #cbd5e1}
h3{font-size:15px;margin:16px 0 6px}
.facts{color:#475569;margin:0 0 8px}.facts b{color:#0f172a;font-weight:600}
table{border-collapse:collapse;background:#fff;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f5f9;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.nw{white-space:nowrap}
tr:nth-child(even) td{background:#f8fafc}
.swatch{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.chart{width:calc((100% - 26px) / 3);min-width:360px;background:#fff;border:1px solid #e2e8f0;
 border-radius:6px}
.ctitle{font-size:13px;font-weight:600;fill:#0f172a}.clabel{font-size:11px;fill:#475569}
.tick{font-size:10px;fill:#475569}
details.call{background:#fff;border:1px solid #e2e8f0;border-radius:6px;margin:10px 0;padding:6px 12px}
details.call>summary{cursor:pointer;font-weight:600}
.meta{color:#475569;font-weight:400}.fail{color:#dc2626}
.timeline{width:100%;height:auto;display:block;margin:8px 0;cursor:pointer}
.lane{font-size:12px;fill:#334155}.lanebg{fill:#f1f5f9}.turn{font-size:11px;font-weight:600}
.mark{font-size:10px}.axis{stroke:#94a3b8}
.pause{fill:none;stroke:#64748b;stroke-dasharray:3 2}.pause.took{fill:#dc262633;stroke:#dc2626}
.playhead{stroke:#0f172a;stroke-width:1.5}
.player{display:flex;align-items:center;gap:12px;flex-wrap:wrap}
audio{width:560px;max-width:100%}
.legend span{margin-right:14px;color:#334155;font-size:12px}
.turns td{max-width:260px}.why{color:#64748b;font-size:12px}
"""

# Moves the playhead with the audio; a click on a timeline plays from that moment.
JS = """
document.querySelectorAll('details.call').forEach(function (sec) {
  var a = sec.querySelector('audio'), svg = sec.querySelector('svg.timeline');
  if (!a || !svg) return;
  var ph = svg.querySelector('.playhead'), x0 = +svg.dataset.x0, x1 = +svg.dataset.x1, dur = +svg.dataset.dur;
  a.addEventListener('timeupdate', function () {
    var x = x0 + (x1 - x0) * Math.min(1, a.currentTime * 1000 / dur);
    ph.setAttribute('x1', x); ph.setAttribute('x2', x); ph.style.display = '';
  });
  svg.addEventListener('click', function (e) {
    var p = svg.createSVGPoint(); p.x = e.clientX; p.y = e.clientY;
    var q = p.matrixTransform(svg.getScreenCTM().inverse());
    a.currentTime = Math.max(0, Math.min(1, (q.x - x0) / (x1 - x0))) * dur / 1000; a.play();
  });
});
"""


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    """An HTML table of already-escaped cells; columns from ``numeric_from`` are right-aligned."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=n' if i >= numeric_from else ''}>{c}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _target_cell(run: RunView, i: int) -> str:
    return (
        f'<span class="nw"><span class="swatch" style="background:{color(i)}"></span>'
        f"{escape(run.targets[i].target)}</span>"
    )


def _summary(run: RunView) -> str:
    rows = [
        [_target_cell(run, i), *(escape(f(t.summary)) for _, f in SUMMARY_COLUMNS)]
        for i, t in enumerate(run.targets)
    ]
    return _table(["target", *(escape(c[0]) for c in SUMMARY_COLUMNS)], rows)


def _charts(run: RunView) -> str:
    lat = [(t.target, latencies(t)) for t in run.targets]
    return (
        '<div class="charts">'
        + "".join(
            [
                histogram(lat, title="Response latency (answered turns)", xlabel="ms"),
                cdf(lat, title="Response latency, cumulative", xlabel="ms"),
                grouped_bars(
                    ["1", "2", "3", "4", "5"],
                    [(t.target, rhythm_counts(t)) for t in run.targets],
                    title="Dialogue-rhythm score per turn",
                    xlabel="score",
                    ylabel="turns",
                ),
            ]
        )
        + "</div>"
    )


def _breakdowns(run: RunView) -> str:
    out = []
    for name, title in BREAKDOWN_TITLES.items():
        rows = sorted(
            (
                [escape(value), _target_cell(run, i), *(escape(f(row)) for _, f in BREAKDOWN_COLUMNS)]
                for i, t in enumerate(run.targets)
                for value, row in t.summary.get(name, {}).items()
            ),
            key=lambda r: r[0],
        )
        if rows:
            out.append(f"<h3>By {escape(title)}</h3>")
            out.append(_table([escape(title), "target", *(escape(c[0]) for c in BREAKDOWN_COLUMNS)], rows, 2))
    return "".join(out)


def _anchor(ti: int, call_id: str) -> str:
    return f"call-{ti}-{call_id}"


def _index(run: RunView) -> str:
    rows = [
        [
            _target_cell(run, ti),
            f'<a href="#{escape(_anchor(ti, c["call_id"]))}">{escape(c["call_id"])}</a>',
            *(escape(f(c)) for _, f in CALL_COLUMNS),
        ]
        for ti, t in enumerate(run.targets)
        for c in t.calls
    ]
    return _table(["target", "call", *(escape(c[0]) for c in CALL_COLUMNS)], rows, 6)


def _turn_rows(c: Mapping[str, Any]) -> str:
    rows = []
    for t in c["turns"]:
        bi = t.get("barge_in")
        barge = "-"
        if bi:
            stop = bi.get("stop_latency_ms")
            barge = (
                "assistant already silent"
                if not bi.get("active")
                else ("✓ " if bi.get("success") else "✗ ")
                + ("never stopped" if stop is None else f"stopped in {stop:.0f} ms")
            )
        cues = [barge if bi else ""]
        if t.get("pause_takeover") is not None:
            cues.append("pause taken over ✗" if t["pause_takeover"] else "pause respected ✓")
        if t.get("backchannel_carried_on") is not None:
            cues.append(
                "carried on after backchannel ✓"
                if t["backchannel_carried_on"]
                else "stopped at backchannel ✗"
            )
        reasons = "; ".join(t.get("rhythm_reasons") or ())
        rhythm = "-" if t.get("rhythm") is None else f"{t['rhythm']}/5"
        rows.append(
            [
                str(t["turn"] + 1),
                escape(str(t.get("mode", ""))),
                escape(str(t.get("text", ""))),
                f'<span class="nw">{escape(fmt_ms(t["latency_ms"], " ms"))}</span>'
                if t.get("latency_ms") is not None
                else "no reply",
                escape(", ".join(x for x in cues if x) or "-"),
                f"{rhythm}" + (f'<div class="why">{escape(reasons)}</div>' if reasons else ""),
                escape(t.get("heard_text") or ("-" if t.get("heard_text") is None else "(nothing heard)")),
                escape(t.get("reference") or "-"),
            ]
        )
    header = [
        "#",
        "mode",
        "caller said",
        "latency",
        "barge-in / pause / backchannel",
        "rhythm",
        "assistant (heard)",
        "reference",
    ]
    return _table(header, rows, 99).replace("<table>", '<table class="turns">', 1)


def _player(t: TargetView, call_id: str, rec_channels: tuple[Any, Any, int] | None, audio: str) -> str:
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


def _call_section(t: TargetView, ti: int, c: Mapping[str, Any], audio: str, open_: bool) -> str:
    call_id = c["call_id"]
    facts = " · ".join(
        f(c) for name, f in CALL_COLUMNS if name in ("scenario", "preset", "relation", "outcome")
    )
    p50 = c.get("latency_p50_ms")
    head = (
        f'<summary>{escape(call_id)} <span class="meta">— {escape(t.target)} · {escape(facts)}'
        f" · latency p50 {escape(fmt_ms(p50, ' ms'))} · rhythm {fmt_score(c.get('rhythm'))}</span></summary>"
    )
    body: list[str] = []
    if c.get("failed"):
        body.append(f'<p class="fail">failed: {escape(str(c["outcome"]))}</p>')
    channels = None
    try:
        rec = load_recording(t.folder / call_id)
        channels = (rec.caller, rec.assistant, rec.sample_rate)
        body.append(
            timeline_svg(
                timeline_from_recording(rec, c.get("assistant_speech_ms")),
                c["turns"],
                first_word_ms=c.get("first_word_ms"),
            )
        )
    except RecordingError:
        body.append('<p class="meta">no recording (the call never connected)</p>')
    body.append(_player(t, call_id, channels, audio))
    body.append(_turn_rows(c))
    return (
        f'<details class="call" id="{escape(_anchor(ti, call_id))}"{" open" if open_ else ""}>'
        + head
        + "".join(body)
        + "</details>"
    )


def _legend() -> str:
    items = [
        (CALLER, "caller speech"),
        (BACKCHANNEL, "caller backchannel"),
        (ASSISTANT, "assistant speech (as heard)"),
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


def render_html(run: RunView, *, audio: str = "embed") -> str:
    if audio not in AUDIO_MODES:
        raise ValueError(f"audio must be one of {AUDIO_MODES}")
    n_calls = sum(len(t.calls) for t in run.targets)
    facts = " · ".join(f"<b>{escape(k)}</b> {escape(v)}" for k, v in describe_run(run))
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>CallSim report: {escape(run.title)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>CallSim report: {escape(run.title)}</h1><p class=facts>{facts}</p>",
        "<h2>Summary</h2>",
        _summary(run),
        "<p class=\"meta\">Latency: onset of the assistant's reply minus the end of the caller's speech, "
        "measured on the caller's side (negative: it started early). "
        "Barge-in success: the assistant stopped within 1.5 s. Rhythm: mean 1-5 score per turn.</p>",
        _charts(run),
        "<h2>Breakdowns</h2>",
        _breakdowns(run),
        "<h2>Calls</h2>",
        _index(run),
        _legend(),
    ]
    for ti, t in enumerate(run.targets):
        for c in t.calls:
            parts.append(_call_section(t, ti, c, audio, n_calls <= OPEN_CALLS))
    parts.append(f"</main><script>{JS}</script></body></html>")
    return "\n".join(parts)
