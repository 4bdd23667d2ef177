"""``callsim report``: (re)build ``report.html`` and ``report.md`` of a run from its results and recordings.

Both are derived files: delete them and run this again.  ``callsim bench`` builds them at the end of a run.
"""

from __future__ import annotations

from pathlib import Path

from voice.app.report.data import load_run
from voice.app.report.html import render_html
from voice.app.report.md import render_markdown
from voice.files import atomic_write_bytes


def build_report(folder: Path, *, audio: str = "embed") -> tuple[Path, Path]:
    """Write ``report.html`` (self-contained) and ``report.md`` into ``folder``; return their paths.

    ``audio``: ``embed`` the recordings as Ogg Opus (falls back to a link when Opus is unavailable),
    ``link`` to the WAV files next to the report, or ``none``.
    """
    run = load_run(folder)
    html, md = folder / "report.html", folder / "report.md"
    atomic_write_bytes(html, render_html(run, audio=audio).encode())
    atomic_write_bytes(md, render_markdown(run).encode())
    return html, md
