"""The CallBench dimensions in report.html and report.md, from what ``callsim score`` wrote."""

from tests.runs import bench
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.report.build import build_report
from voice.run.score import score_target
from voice.speech.asr import MemoryASR


async def test_scored_runs_show_the_seven_dimensions_and_each_turns_scores(tmp_path):
    d = {x.id: x for x in load_dialogues(bundled_dialogues_path())}
    await bench(tmp_path, [d["taxi-regular-01"]])
    html = build_report(tmp_path, audio="none")[0].read_text()
    assert "not scored yet (callsim score FOLDER)" in html
    for sub in ("pcm-ws-a.test-pcm", "pcm-ws-b.test-pcm"):
        score_target(tmp_path / sub, d, ChecklistJudge(), MemoryASR([], default="好的"))
    html, md = (p.read_text() for p in build_report(tmp_path, audio="none"))
    section = html.split("<h2>CallBench dimensions</h2>")[1].split("<h2>Breakdowns</h2>")[0]
    assert section.count("<th>dimension</th>") == 2 and "preset compliance" in section
    assert "judge checklist/1" in section and "reference" in section
    assert "scores by checklist/1" in html  # each call's turns, with reasons on hover
    assert "## CallBench dimensions" in md and "| dialogue rhythm |" in md
