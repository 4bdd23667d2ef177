"""The README stands on its own: it links nothing outside the repository, and the docs it names exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_links_nothing_outside_the_repository():
    # pictures of the repository itself (docs/*.png) are shown; anything else is cited in docs/metrics.md
    links = re.findall(r"https?://|\]\((?!#)([^)]*)\)", README)
    outside = [
        link for link in links if not (re.fullmatch(r"docs/[\w.-]+\.png", link) and (ROOT / link).is_file())
    ]
    assert not outside, "a link: cite it in docs/metrics.md instead"
    assert "../" not in README


def test_every_doc_the_readme_names_exists():
    named = set(re.findall(r"docs/[\w.-]+\.(?:md|py)", README))
    assert {"docs/metrics.md", "docs/results.md", "docs/api.md", "docs/example_test_my_bot.py"} <= named
    assert not [p for p in sorted(named) if not (ROOT / p).is_file()]


def test_the_metric_references_are_in_the_repository_with_their_sources():
    refs = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert "docs/metrics.md" in (ROOT / "voice" / "metrics" / "rhythm.py").read_text(encoding="utf-8")
    for source in ("Stivers", "Full-Duplex-Bench v1.5", "FD-Bench", "GPT-4o System Card", "Talking Turns"):
        assert source in refs
    sources = refs.split("## Sources", 1)[1]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", refs.split("## Sources", 1)[0])}
    listed = {int(n) for n in re.findall(r"^(\d+)\. ", sources, re.M)}
    assert cited == listed, "every source cited is listed, and every source listed is cited"
