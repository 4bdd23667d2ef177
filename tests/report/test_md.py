"""``report.md``: the summary, the breakdowns and the calls as Markdown tables."""

from voice.report.build import build_report


async def test_the_markdown_summary_has_summary_breakdowns_and_calls(run_dir):
    _, md_path = build_report(run_dir, audio="none")
    md = md_path.read_text()
    for heading in ("## Summary", "## By scenario", "## By preset type", "## By relation", "## Calls"):
        assert heading in md
    assert "| pcm+ws://a.test/pcm | m-2 | takeout | regular | conflict | completed |" in md
    sections = {s.split("\n", 1)[0]: s for s in md.split("\n## ")}
    assert sections["By scenario"].count("\n| ") == 1 + 3 * 2  # header, then value × target
    assert sections["Calls"].count("\n| pcm+ws://") == 6
