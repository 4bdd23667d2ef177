"""The report rendered in headless Chromium, and the blank-screenshot check."""

import os

import pytest

from voice.app.report.build import build_report
from voice.app.report.check import check_report, find_chromium, screenshot_stats

REQUIRE_CHROMIUM = "CALLSIM_REQUIRE_CHROMIUM"


@pytest.mark.models
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


@pytest.mark.models
async def test_a_reactive_runs_report_renders_in_headless_chromium(reactive_dir, tmp_path):
    if find_chromium() is None:
        pytest.skip("Chromium is not installed (scripts/setup installs it)")
    html, _ = build_report(reactive_dir)
    assert "Caller goals" in html.read_text()
    assert not check_report(html, tmp_path / "reactive.png").blank


def test_a_blank_page_is_caught(tmp_path):
    from PIL import Image

    png = tmp_path / "blank.png"
    Image.new("RGB", (200, 100), (255, 255, 255)).save(png)
    assert screenshot_stats(png).blank
