"""Render a report in headless Chromium and check the screenshot is not blank.

A report can be valid HTML and still show nothing (a broken style, an SVG that fails to parse, a script
error hiding content); only a real browser tells.  ``scripts/check_report`` and
``tests/app/report/test_check.py``
use this.  Chromium runs without network, sandbox or profile, on a throwaway user-data directory.

"Not blank" means: enough pixels differ from the background (the most common colour), and they are not
all one colour — a page of only a background, or only a solid box, fails.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from voice.errors import CallSimError

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
WINDOW = (1280, 2000)
MIN_INK_SHARE = 0.02  # at least 2 % of the pixels are not background
MIN_COLOURS = 8  # distinct colours among the non-background pixels


class ReportCheckError(CallSimError):
    """The report could not be rendered, or rendered blank."""


@dataclass(frozen=True)
class ScreenshotStats:
    width: int
    height: int
    ink_share: float  # share of pixels that differ from the background colour
    colours: int  # distinct colours among those pixels (capped)
    background: tuple[int, int, int]

    @property
    def blank(self) -> bool:
        return self.ink_share < MIN_INK_SHARE or self.colours < MIN_COLOURS

    def __str__(self) -> str:
        return (
            f"{self.width}x{self.height}, {100 * self.ink_share:.1f}% non-background pixels, "
            f"{self.colours} colours, background rgb{self.background}"
        )


def find_chromium() -> str | None:
    return next((p for name in CHROMIUM_NAMES if (p := shutil.which(name))), None)


def screenshot(html: Path, png: Path, *, chromium: str | None = None, timeout_s: float = 120) -> None:
    """Render ``html`` at 1280×2000 into ``png`` with headless Chromium."""
    exe = chromium or find_chromium()
    if exe is None:
        raise ReportCheckError("Chromium not found (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="callsim-chromium-") as profile:
        args = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            html.resolve().as_uri(),
        ]
        try:
            proc = subprocess.run(args, capture_output=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ReportCheckError(f"Chromium did not finish within {timeout_s:.0f} s") from exc
    if not png.exists() or png.stat().st_size == 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-5:]
        raise ReportCheckError(f"Chromium wrote no screenshot (exit {proc.returncode}): {' | '.join(tail)}")


def screenshot_stats(png: Path) -> ScreenshotStats:
    """How much of the screenshot is not background, and how varied it is."""
    import numpy as np
    from PIL import Image

    with Image.open(png) as img:
        rgb = np.asarray(img.convert("RGB"))
    h, w, _ = rgb.shape
    flat = rgb.reshape(-1, 3).astype(np.int32)
    packed = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    bg = int(values[counts.argmax()])
    ink = packed != bg
    colours = min(len(values) - 1, 10_000)
    background = ((bg >> 16) & 255, (bg >> 8) & 255, bg & 255)
    return ScreenshotStats(w, h, float(ink.mean()), colours, background)


def check_report(html: Path, png: Path | None = None) -> ScreenshotStats:
    """Screenshot ``html`` (into ``png``, default next to it) and raise if the page renders blank."""
    png = png or html.with_suffix(".png")
    screenshot(html, png)
    stats = screenshot_stats(png)
    if stats.blank:
        raise ReportCheckError(f"{png}: the report renders blank ({stats})")
    return stats


def main(argv: list[str] | None = None) -> int:
    """``scripts/check_report RUN_DIR [--png FILE]``: build the report if missing, render it, check it."""
    import argparse

    p = argparse.ArgumentParser(prog="check_report", description=(__doc__ or "").splitlines()[0])
    p.add_argument("folder", type=Path, help="a run folder (or one target's folder)")
    p.add_argument("--png", type=Path, help="the screenshot's path (default: report.png in the folder)")
    args = p.parse_args(argv)
    html = args.folder / "report.html"
    try:
        if not html.exists():
            from voice.app.report.build import build_report

            html, _ = build_report(args.folder)
        png = args.png or args.folder / "report.png"
        stats = check_report(html, png)
    except CallSimError as exc:
        print(f"check_report: FAILED: {exc}")
        return 1
    print(f"check_report: OK: {png}: {stats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
