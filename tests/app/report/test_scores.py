"""The CallBench dimensions in report.html and report.md, from what ``callsim score`` wrote."""

from tests.runs import bench
from voice.app.report.build import build_report
from voice.app.run.score import score_target
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.metrics.scoring.checklist import ChecklistJudge
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
    assert "judge checklist/5" in section and "reference" in section
    assert "scores by checklist/5" in html  # each call's turns, with reasons on hover
    assert "## CallBench dimensions" in md and "| dialogue rhythm |" in md
    from voice.metrics.scoring.calibration import judge_label

    label = judge_label("checklist/5")  # the judge named with its blind figures, from calibration.json
    assert "blind separation" in label and f"judge {label}" in section and f"(judge {label}; 1 calls)" in md
    assert "with no grounds to judge" in md  # turns the annotations and the dialogue give nothing for
    assert '<td title="no grounds to judge: ' in html and ">n/g</td>" in html


async def test_the_judges_verdicts_show_per_target_and_per_call_with_their_reasons(
    tmp_path, llm, no_openai_env
):
    from tests.app.run.test_score import llm_judge_answer
    from voice.metrics.scoring.llm import LLMJudge

    d = {x.id: x for x in load_dialogues(bundled_dialogues_path())}
    await bench(tmp_path, [d["takeout-regular-01"], d["harassment-regular-01"]])
    llm.respond(llm_judge_answer)
    judge = LLMJudge.from_spec("openai:fake", base_url=llm.url, cache_dir=tmp_path / "cache")
    score_target(tmp_path / "pcm-ws-a.test-pcm", d, judge, MemoryASR([], default="好的"))
    score_target(tmp_path / "pcm-ws-b.test-pcm", d, ChecklistJudge(), MemoryASR([], default="好的"))
    html, md = (p.read_text() for p in build_report(tmp_path, audio="none"))
    section = html.split("<h2>CallBench dimensions</h2>")[1].split("<h2>Breakdowns</h2>")[0]
    assert section.count("<th>verdict (judge)</th>") == 2  # one verdict table per target
    a, b = section.split("<h3>")[1:3]
    assert "<td>caller&#x27;s goal met</td><td>1</td><td>0</td><td>1</td><td>-</td><td>0</td>" in a
    assert "<td>50% met, 50% met or partly</td>" in a
    assert "<summary>each call's verdict (2)</summary>" in a
    assert "<td>takeout-regular-01</td><td>yes: the caller&#x27;s goal: yes</td>" in a
    assert "<td>harassment-regular-01</td><td>no: the caller&#x27;s goal: no</td>" in a
    assert "<td>caller&#x27;s goal met</td><td>0</td><td>0</td><td>0</td><td>-</td><td>2</td><td>- met" in b
    assert "not judged: whether the caller&#x27;s goal was met needs" in b  # the checklist says why not
    # each call's own section repeats its verdict above its turn scores
    assert "judge's verdict: caller's goal met: no: the caller&#x27;s goal: no<br>" in html
    assert "preset respected: yes: kept to the preset</p>" in html
    assert "- caller's goal met (judge): yes 1, partly 0, no 1, not judged 0; met rate 50%" in md
    assert "| harassment-regular-01 | no: the caller's goal: no | yes: kept to the preset |" in md


async def test_a_scores_file_without_a_verdict_shows_none(tmp_path):
    d = {x.id: x for x in load_dialogues(bundled_dialogues_path())}
    await bench(tmp_path, [d["taxi-regular-01"]])
    folder = tmp_path / "pcm-ws-a.test-pcm"
    score_target(folder, d, ChecklistJudge(), MemoryASR([], default="好的"))
    path = folder / "taxi-regular-01.scores.json"
    path.write_text(path.read_text().replace('"goal": {', '"goal": null, "old": {'))
    html = build_report(tmp_path, audio="none")[0].read_text()
    assert "each call's verdict" not in html and "judge's verdict" not in html
    assert "scores by checklist/5" in html  # the turns still show
