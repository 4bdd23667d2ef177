"""``report.html``: one self-contained page whose every figure comes from results.json."""

import html as html_lib
import json
import re
from collections import Counter
from html.parser import HTMLParser

from tests.runs import mini
from voice.app.report.build import build_report
from voice.app.run.score import score_target
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.speech.asr import MemoryASR


async def test_the_html_report_is_self_contained_and_shows_the_results_figures(run_dir):
    html_path, _ = build_report(run_dir)
    html = html_path.read_text()
    # self-contained: no external resources, audio embedded as Ogg Opus
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert html.count('<audio controls preload="metadata" src="data:audio/ogg;codecs=opus;base64,') == 6
    assert html.count('<svg class="timeline"') == 6 and html.count('<svg class="chart"') == 5
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
    assert 'class="pause' in html and "barge-in ✓" in html and "backchannel 嗯" in html
    assert "快递到了，放哪里？" in html and "放驿站吧。" in html and "好的" in html  # said, reference, heard
    assert len(html) < 2_000_000


def _row(html: str, first_cell: str, nth: int = 0) -> list[str]:
    """The cells of the ``nth`` table row whose first cell is ``first_cell`` (tags stripped)."""
    for row in re.findall(r"<tr>(.*?)</tr>", html):
        cells = [
            html_lib.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)
        ]
        if cells and cells[0].strip() == first_cell:
            if nth == 0:
                return cells
            nth -= 1
    raise AssertionError(f"no row starting with {first_cell!r}")


async def test_the_page_shows_the_settings_p95_and_the_barge_in_stop_latency_distribution(run_dir):
    html = build_report(run_dir, audio="none")[0].read_text()
    run = json.loads((run_dir / "results.json").read_text())
    settings = dict(
        (cells[0], cells[1])
        for cells in (_row(html, k) for k in ("seed", "concurrency", "caller voice", "repeats"))
    )
    assert settings == {
        "seed": "0 (the caller's timing and the network)",
        "concurrency": f"{run['concurrency']} calls at once",
        "caller voice": "memory",
        "repeats": "1",
    }
    assert _row(html, "line to pcm+ws://a.test/pcm")[1] == "pcm; network effects: none"
    # the summary row of target A: p50, p90, p95, p99 next to each other, read from results.json
    a = run["targets"][0]["summary"]
    row = _row(html, "pcm+ws://a.test/pcm")
    lat = a["latency_ms"]
    shown = [f"{lat[k]:.0f} ms" for k in ("p50", "p90", "p95", "p99")]
    assert any(row[i : i + 4] == shown for i in range(len(row)))
    assert row[3] == "6" and row[4] == "6/6"  # every caller turn planned was said, and answered
    assert row[5] == f"{a['false_starts']} (17% of turns)"  # 1 of 6 turns had a false start
    # the stop-latency chart and its p50 / p90 / p95
    b = a["barge_in"]
    assert "Barge-in stop latency" in html and "share of barge-ins" in html
    cues = _row(html, "pcm+ws://a.test/pcm", nth=1)  # the row after the summary's: barge-ins and cues
    stops = [f"{b[f'stop_latency_{k}_ms']:.0f} ms" for k in ("p50", "p90", "p95")]
    assert cues[1:8] == ["1", "0", "1/1 (100%)", *stops, "0"]


async def test_a_reactive_run_shows_caller_goals_and_each_calls_decisions(reactive_dir, run_dir):
    html = build_report(reactive_dir, audio="none")[0].read_text()
    goals = html.split("<h2>Caller goals</h2>")[1].split("<h2>")[0]
    assert "yes 2 · partly 0 · no 0 · unknown 0" in goals and "2/2 (100%)" in goals
    assert "<h3>Goals by persona</h3>" in goals and "each call's verdict (4)" in goals
    assert 'href="#call-1-m-2"' in goals  # each verdict links to its call
    assert html.count("<h3>The caller</h3>") == 4 and "· goal yes</span></summary>" in html
    assert "The caller&#x27;s verdict on its goal: yes after 4 turns" in html
    row = _row(html, "5")
    assert row[2:4] == ["hang_up", "llm"] and row[6].startswith("yes · ")
    scripted = build_report(run_dir, audio="none")[0].read_text()
    assert "Caller goals" not in scripted and "The caller</h3>" not in scripted


class _Page(HTMLParser):
    """What the validity test looks at: every id, every ``title`` attribute and ``<title>`` text, every
    in-page reference (``href="#…"``, ``url(#…)``)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.title_attrs: list[str] = []
        self.title_texts: list[str] = []
        self.refs: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id":
                self.ids.append(value or "")
            elif name == "title":
                self.title_attrs.append(value or "")
            elif name == "href" and (value or "").startswith("#"):
                self.refs.append((value or "")[1:])
            self.refs += re.findall(r"url\(#([^)]+)\)", value or "")
        if tag == "title":
            self._in_title = True
            self.title_texts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_texts[-1] += data


async def test_the_page_is_valid_html_with_unique_ids_filled_tooltips_and_resolvable_links(run_dir):
    dialogues = {d.id: d for d in (mini(1, pause=True), mini(2, barge=True), mini(3, backchannel=True))}
    for sub in ("pcm-ws-a.test-pcm", "pcm-ws-b.test-pcm"):  # scored: each turn's score has a tooltip
        score_target(run_dir / sub, dialogues, ChecklistJudge(), MemoryASR([], default="好的"))
    page = _Page()
    page.feed(build_report(run_dir, audio="none")[0].read_text())
    page.close()
    assert len(page.ids) > 6 and not [i for i, n in Counter(page.ids).items() if n > 1]  # calls, markers
    assert sum(i.startswith("arr-") for i in page.ids) == 6  # an arrow marker per timeline, each its own
    assert page.title_attrs and all(t.strip() for t in page.title_attrs)  # no empty tooltip
    assert len(page.title_texts) > 50 and all(t.strip() for t in page.title_texts)
    assert page.refs and set(page.refs) <= set(page.ids)  # every link and marker reference resolves
