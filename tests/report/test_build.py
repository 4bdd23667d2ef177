"""The report: one self-contained HTML page and a Markdown summary, built from a run's files, rendered."""

import json
import os
import re

import pytest

from tests.runs import bench, mini
from voice.cli import main
from voice.report.build import build_report
from voice.report.check import check_report, find_chromium, screenshot_stats
from voice.report.svg import cdf, histogram, nice_step

REQUIRE_CHROMIUM = "CALLSIM_REQUIRE_CHROMIUM"


@pytest.fixture
async def run_dir(tmp_path):
    ds = [
        mini(1, pause=True),
        mini(2, "takeout", "regular", "conflict", barge=True),
        mini(3, "taxi", "emergent", "complementarity", backchannel=True),
    ]
    await bench(tmp_path, ds, concurrency=3)
    return tmp_path


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


async def test_the_markdown_summary_has_summary_breakdowns_and_calls(run_dir):
    _, md_path = build_report(run_dir, audio="none")
    md = md_path.read_text()
    for heading in ("## Summary", "## By scenario", "## By preset type", "## By relation", "## Calls"):
        assert heading in md
    assert "| pcm+ws://a.test/pcm | m-2 | takeout | regular | conflict | completed |" in md
    sections = {s.split("\n", 1)[0]: s for s in md.split("\n## ")}
    assert sections["By scenario"].count("\n| ") == 1 + 3 * 2  # header, then value × target
    assert sections["Calls"].count("\n| pcm+ws://") == 6


async def test_the_report_command_rebuilds_from_a_target_folder_and_links_audio(run_dir, capsys):
    folder = run_dir / "pcm-ws-b.test-pcm"
    assert main(["report", str(folder), "--audio", "link"]) == 0
    html = (folder / "report.html").read_text()
    assert 'href="m-1.wav"' in html and "data:audio" not in html
    assert main(["report", str(run_dir / "missing")]) == 2


def test_charts_handle_empty_and_single_values():
    assert "no data" in histogram([("a", [])], title="t", xlabel="ms")
    assert "<polyline" in cdf([("a", [500.0])], title="t", xlabel="ms")
    assert "<rect" in histogram([("a", [-120.0, 80.0]), ("b", [3000.0])], title="t", xlabel="ms")
    assert nice_step(1000, 5) == 200


async def test_the_report_renders_in_headless_chromium(run_dir, tmp_path):
    if find_chromium() is None:
        if os.environ.get(REQUIRE_CHROMIUM):
            pytest.fail(f"{REQUIRE_CHROMIUM} is set but Chromium is not installed (apt-get install chromium)")
        pytest.skip(
            f"Chromium is not installed (scripts/setup installs it; set {REQUIRE_CHROMIUM}=1 to require)"
        )
    html, _ = build_report(run_dir)
    stats = check_report(html, tmp_path / "report.png")
    assert not stats.blank and stats.width == 1280


def test_a_blank_page_is_caught(tmp_path):
    from PIL import Image

    png = tmp_path / "blank.png"
    Image.new("RGB", (200, 100), (255, 255, 255)).save(png)
    assert screenshot_stats(png).blank
