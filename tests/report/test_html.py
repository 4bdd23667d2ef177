"""``report.html``: one self-contained page whose every figure comes from results.json."""

import json
import re

from voice.report.build import build_report


async def test_the_html_report_is_self_contained_and_shows_the_results_figures(run_dir):
    html_path, _ = build_report(run_dir)
    html = html_path.read_text()
    # self-contained: no external resources, audio embedded as Ogg Opus
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert html.count('<audio controls preload="metadata" src="data:audio/ogg;codecs=opus;base64,') == 6
    assert html.count('<svg class="timeline"') == 6 and html.count('<svg class="chart"') == 3
    # every figure shown comes from results.json
    a = json.loads((run_dir / "pcm-ws-a.test-pcm" / "results.json").read_text())
    p50 = a["summary"]["latency_ms"]["p50"]
    assert f"{p50:.0f} ms" in html
    for call in a["calls"]:
        assert f'id="call-0-{call["call_id"]}"' in html
        for t in call["turns"]:
            if t["latency_ms"] is not None:
                assert f"{t['latency_ms']:.0f} ms" in html
    # cues are drawn: the mid-turn pause, the barge-in, the backchannel
    assert 'class="pause"' in html and "barge-in ✓" in html and "backchannel 嗯" in html
    assert "快递到了，放哪里？" in html and "放驿站吧。" in html and "好的" in html  # said, reference, heard
    assert len(html) < 2_000_000
