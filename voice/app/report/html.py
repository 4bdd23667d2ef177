"""``report.html``: one self-contained page per run (inline CSS, SVG and a few lines of script).

First CallSim's own failures, then the assistant's failed calls with what to do; the run's settings,
summary and cue tables, latency, barge-in stop-latency and rhythm charts, a reactive caller's goals
(:mod:`voice.app.report.goals`), breakdowns, the call index, then per call a timeline, a player, the turns and
a
reactive caller's decisions (:mod:`voice.app.report.calls`).  Nothing is fetched from the network, so the file
can be mailed, attached to CI, or opened years later.
"""

from __future__ import annotations

from html import escape

from voice.app.report.calls import anchor, call_section, call_stub, legend, logs_hearing, table
from voice.app.report.data import (
    BREAKDOWN_COLUMNS,
    BREAKDOWN_TITLES,
    CALL_COLUMNS,
    CALL_TEXT_COLUMNS,
    CUE_COLUMNS,
    PACING_NOTE,
    SUMMARY_COLUMNS,
    TURNS_NOTE,
    Column,
    RunView,
    banner,
    describe_run,
    failed,
    latencies,
    rhythm_counts,
    run_settings,
    stop_latencies,
)
from voice.app.report.goals import (
    GOAL_COLUMNS,
    GROUP_COLUMNS,
    NOTE,
    VERDICT_HEADER,
    goal_targets,
    group_tables,
    has_goals,
    summary_rows,
    verdict_cells,
)
from voice.app.report.sampling import shown_in_full
from voice.app.report.scores import scores_html
from voice.app.report.svg import cdf, color, grouped_bars, histogram
from voice.app.report.voices import VOICE_BLOCKS, VOICE_NOTE, has_voices, voice_tables, worst_voices
from voice.metrics.model.summary import Summary

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
.banner{background:#fef2f2;border:2px solid #dc2626;border-radius:6px;padding:4px 14px;margin:10px 0}
.timeline{width:100%;height:auto;display:block;margin:8px 0;cursor:pointer}
.lane{font-size:12px;fill:#334155}.lanebg{fill:#f1f5f9}.turn{font-size:11px;font-weight:600}
.mark{font-size:10px}.axis{stroke:#94a3b8}
.pause{fill:none;stroke:#64748b;stroke-dasharray:3 2}.pause.took{fill:#dc262633;stroke:#dc2626}
.playhead{stroke:#0f172a;stroke-width:1.5}
.player{display:flex;align-items:center;gap:12px;flex-wrap:wrap}
audio{width:560px;max-width:100%}
.legend span{margin-right:14px;color:#334155;font-size:12px}
.turns td{max-width:260px}.why{color:#64748b;font-size:12px}
.diff{background:#fef3c7}.wide{overflow-x:auto;max-width:100%}td a{white-space:nowrap}
.settings td:first-child{white-space:nowrap;font-weight:600}
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


def _target_cell(run: RunView, i: int) -> str:
    return (
        f'<span class="nw"><span class="swatch" style="background:{color(i)}"></span>'
        f"{escape(run.targets[i].target)}</span>"
    )


def _per_target(run: RunView, columns: tuple[Column[Summary], ...]) -> str:
    """One row per target of summary figures (``columns`` read its summary)."""
    rows = [
        [_target_cell(run, i), *(escape(f(t.summary)) for _, f in columns)] for i, t in enumerate(run.targets)
    ]
    return table(["target", *(escape(c[0]) for c in columns)], rows, range(1, len(columns) + 1))


def _settings(run: RunView) -> str:
    rows = [[escape(k), escape(v)] for k, v in run_settings(run)]
    return table(["setting", "value"], rows).replace("<table>", '<table class="settings">', 1)


def _charts(run: RunView) -> str:
    lat = [(t.target, latencies(t)) for t in run.targets]
    stops = [(t.target, stop_latencies(t)) for t in run.targets]
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
                histogram(stops, title="Barge-in stop latency", xlabel="ms", ylabel="barge-ins"),
                cdf(
                    stops,
                    title="Barge-in stop latency, cumulative",
                    xlabel="ms",
                    ylabel="share of barge-ins",
                    noun="barge-ins",
                ),
            ]
        )
        + "</div>"
    )


def _voices(run: RunView) -> str:
    """Robustness by caller voice (:mod:`voice.app.report.voices`); "" for a run without voices."""
    if not has_voices(run):
        return ""
    out = ["<h2>Robustness by caller voice</h2>", f'<p class="meta">{escape(VOICE_NOTE)}</p>']
    out += [
        f"<p>{escape(t)}: worst on <b>{escape(v)}</b> ({escape(said)}), of {n} voices</p>"
        for t, v, said, n in worst_voices(run)
    ]
    for title, header, rows in voice_tables(run):
        out.append(f"<h3>By {escape(title)}</h3>")
        cells = [[escape(c) for c in r] for r in rows]
        out.append(table([escape(h) for h in header], cells, range(2, len(header))))
    return "".join(out)


def _breakdowns(run: RunView) -> str:
    out = []
    for name, title in BREAKDOWN_TITLES.items():
        if name in VOICE_BLOCKS:
            continue
        rows = sorted(
            (
                [escape(value), _target_cell(run, i), *(escape(f(row)) for _, f in BREAKDOWN_COLUMNS)]
                for i, t in enumerate(run.targets)
                for value, row in t.summary.breakdowns.get(name, {}).items()
            ),
            key=lambda r: r[0],
        )
        if rows:
            out.append(f"<h3>By {escape(title)}</h3>")
            header = [escape(title), "target", *(escape(c[0]) for c in BREAKDOWN_COLUMNS)]
            out.append(table(header, rows, range(2, len(header))))
    return "".join(out)


def _goals(run: RunView) -> str:
    """The Caller goals section of a reactive run: per target, per group, per call ("" for a scripted run)."""
    if not has_goals(run):
        return ""
    rows = [[_target_cell(run, i), *(escape(x) for x in cells)] for i, cells in summary_rows(run)]
    parts = [
        "<h2>Caller goals</h2>",
        table(["target", *(escape(c[0]) for c in GOAL_COLUMNS)], rows, (1, *range(3, len(GOAL_COLUMNS) + 1))),
        f'<p class="meta">{escape(NOTE)}</p>',
    ]
    for title, group in group_tables(run):
        header = [escape(title), "target", *(escape(c[0]) for c in GROUP_COLUMNS)]
        cells = [[escape(v), _target_cell(run, i), *(escape(x) for x in r)] for v, i, r in group]
        parts += [f"<h3>Goals by {escape(title)}</h3>", table(header, cells, range(2, len(header)))]
    calls = [
        [
            _target_cell(run, i),
            f'<a href="#{escape(anchor(i, c.metrics.call_id))}">{escape(c.metrics.call_id)}</a>',
            *(escape(x) for x in v),
        ]
        for i, t in goal_targets(run)
        for c in t.calls
        if (v := verdict_cells(c)) is not None
    ]
    header = ["target", "call", *(escape(h) for h in VERDICT_HEADER)]
    numeric = (5, 6, 7, 8, 9)  # turns, outcome after, caller late, fallbacks, rejected
    each = f"<summary>each call's verdict ({len(calls)})</summary>{table(header, calls, numeric)}"
    parts.append(f"<details>{each}</details>")
    return "".join(parts)


def _banner(run: RunView) -> str:
    """CallSim's own failures, first and in red: what failed, on which calls, the command that redoes them."""
    lines = banner(run)
    if not lines:
        return ""
    head, *rest = lines
    items = "".join(f"<li>{escape(line.strip())}</li>" for line in rest[:-1])
    label, _, command = rest[-1].strip().partition(": ")
    shown = f"<code>{escape(command)}</code>" if command.startswith("callsim ") else escape(command)
    items += f"<li>{escape(label)}: {shown}</li>"
    return f'<div class="banner fail" role="alert"><p><b>{escape(head)}</b></p><ul>{items}</ul></div>'


def _failed(run: RunView) -> str:
    """The assistant's failed calls, under CallSim's banner: per outcome its calls, an example, the fix."""
    head, groups = failed(run)
    if not groups:
        return ""
    items = "".join(
        f"<li>{escape(g.line())}<ul>"
        + (f"<li>e.g. {escape(g.example)}</li>" if g.example else "")
        + f"<li><b>what to do:</b> {escape(g.fix)}</li></ul></li>"
        for g in groups
    )
    return f'<div class="banner" role="alert"><p><b>{escape(head)}</b></p><ul>{items}</ul></div>'


def _index(run: RunView) -> str:
    rows = [
        [
            _target_cell(run, ti),
            f'<a href="#{escape(anchor(ti, c.metrics.call_id))}">{escape(c.metrics.call_id)}</a>',
            *(escape(f(c)) for _, f in CALL_COLUMNS),
        ]
        for ti, t in enumerate(run.targets)
        for c in t.calls
    ]
    numeric = [i + 2 for i, (name, _) in enumerate(CALL_COLUMNS) if name not in CALL_TEXT_COLUMNS]
    return table(["target", "call", *(escape(c[0]) for c in CALL_COLUMNS)], rows, numeric)


def render_html(run: RunView, *, audio: str = "embed") -> str:
    if audio not in AUDIO_MODES:
        raise ValueError(f"audio must be one of {AUDIO_MODES}")
    n_calls = sum(len(t.calls) for t in run.targets)
    facts = " · ".join(f"<b>{escape(k)}</b> {escape(v)}" for k, v in describe_run(run))
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>CallSim report: {escape(run.title)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>CallSim report: {escape(run.title)}</h1>{_banner(run)}{_failed(run)}<p class=facts>{facts}</p>",
        "<h2>Settings</h2>",
        _settings(run),
        "<h2>Summary</h2>",
        _per_target(run, SUMMARY_COLUMNS),
        '<p class="meta">Calls ran: did not fail (connected, no protocol error or timeout, the assistant '
        "did not go silent); served: ran and the assistant answered every caller turn of the call. "
        f"{escape(TURNS_NOTE)} "
        "Latency: onset of the assistant's reply minus the end of the caller's speech, measured on the "
        "caller's side (negative: it started early). False starts: assistant speech begun and abandoned "
        f"while the caller was still talking. Rhythm: mean 1-5 score per turn. {escape(PACING_NOTE)}</p>",
        "<h3>Barge-ins, pauses and backchannels</h3>",
        _per_target(run, CUE_COLUMNS),
        '<p class="meta">Barge-in success: the assistant was speaking and stopped within 1.5 s. Stop '
        "latency: from the caller's first sound to the end of the assistant's speech, over the barge-ins it "
        "stopped for (never stopped: still talking when the call ended). Unscripted: the caller's turn "
        "began while the assistant spoke.</p>",
        _charts(run),
        _goals(run),
        "<h2>CallBench dimensions</h2>",
        scores_html(run),
        _voices(run),
        "<h2>Breakdowns</h2>",
        _breakdowns(run),
        "<h2>Calls</h2>",
        _index(run),
        legend(),
    ]
    for ti, t in enumerate(run.targets):
        show_asr = logs_hearing(t)
        full = shown_in_full([c.metrics for c in t.calls])
        if len(full) < len(t.calls):
            parts.append(
                f'<p class="meta">{escape(t.target)}: {len(t.calls)} calls; in full below, {len(full)}: an'
                " even sample and the worst by failure, latency p90, rhythm, false starts and longest"
                " silence; the others are linked to their files.</p>"
            )
        for c in t.calls:
            if c.metrics.call_id in full:
                parts.append(call_section(t, ti, c, audio, open_=n_calls <= OPEN_CALLS, show_asr=show_asr))
            else:
                parts.append(call_stub(t, ti, c))
    parts.append(f"</main><script>{JS}</script></body></html>")
    return "\n".join(parts)
