"""``callsim compare`` with the judge's call verdicts: goal met and preset respected rates, side by side."""

import json
from dataclasses import replace

from tests.app.run.test_score import llm_judge_answer
from tests.runs import bench
from voice.app.cli import main
from voice.app.report.compare import compare_judge_goals, compare_sides, pick_sides
from voice.app.report.comparison import judge_goal_rows
from voice.app.run.resume import dialogue_sha
from voice.app.run.score import score_target
from voice.dialogues import AssistantTurn, bundled_dialogues_path, load_dialogues
from voice.dialogues.annotations import TurnAnnotations
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.metrics.scoring.llm import LLMJudge
from voice.speech.asr import MemoryASR

DIALOGUES = {x.id: x for x in load_dialogues(bundled_dialogues_path())}


def all_met(body):
    """The fake model for side B: every caller's goal met."""
    answer = llm_judge_answer(body)
    answer["call_verdict"]["caller_goal_met"] = "yes"
    return answer


async def test_the_judges_goal_rates_are_compared_with_a_bootstrap_interval(
    tmp_path, llm, no_openai_env, capsys
):
    await bench(tmp_path, [DIALOGUES["takeout-regular-01"], DIALOGUES["harassment-regular-01"]])
    for sub, answer in (("pcm-ws-a.test-pcm", llm_judge_answer), ("pcm-ws-b.test-pcm", all_met)):
        llm.respond(answer)
        judge = LLMJudge.from_spec("openai:fake", base_url=llm.url, cache="off")
        score_target(tmp_path / sub, DIALOGUES, judge, MemoryASR([], default="好的"))
    a, b = pick_sides(tmp_path, None)
    goals = compare_judge_goals(a, b, n_resamples=200)
    assert goals is not None and list(goals) == ["met_rate", "met_or_partly_rate", "preset_respected_rate"]
    assert (goals["met_rate"]["a"], goals["met_rate"]["b"], goals["met_rate"]["diff"]) == (0.5, 1.0, 0.5)
    assert goals["preset_respected_rate"]["diff"] == 0.0
    doc = compare_sides(a, b, n_resamples=200)
    assert doc["judge_goals"] == goals
    rows = judge_goal_rows(doc)
    assert rows[0][:4] == ["judge: caller goal met", "50%", "100%", "+50pp"]
    assert [r[0] for r in rows] == [
        "judge: caller goal met",
        "judge: goal met or partly",
        "judge: preset respected",
    ]
    assert main(["compare", str(tmp_path), "--json", str(tmp_path / "c.json"), "--resamples", "200"]) == 0
    assert "judge: caller goal met" in capsys.readouterr().out
    assert json.loads((tmp_path / "c.json").read_text())["judge_goals"]["met_rate"]["b"] == 1.0


async def test_no_goal_rows_when_the_judge_gave_no_verdicts_or_a_side_is_not_scored(tmp_path):
    await bench(tmp_path, [DIALOGUES["taxi-regular-01"]])
    # the test assistant's bare 好的 applies none of the key points (the preset neither kept nor broken):
    # annotated with must_not phrases only, the checklist finds the preset kept
    taxi = DIALOGUES["taxi-regular-01"]
    turns = tuple(
        replace(t, annotations=TurnAnnotations(must_not=t.annotations.must_not))
        if isinstance(t, AssistantTurn) else t
        for t in taxi.turns
    )  # fmt: skip
    dialogues = {**DIALOGUES, taxi.id: replace(taxi, turns=turns)}
    heard = MemoryASR([], default="好的")
    ran = {taxi.id: dialogue_sha(taxi)}  # the calls were made from the dialogue as it was
    score_target(tmp_path / "pcm-ws-a.test-pcm", dialogues, ChecklistJudge(), heard, ran=ran)
    a, b = pick_sides(tmp_path, None)
    assert compare_judge_goals(a, b, n_resamples=50) is None  # B is not scored
    score_target(tmp_path / "pcm-ws-b.test-pcm", dialogues, ChecklistJudge(), heard, ran=ran)
    goals = compare_judge_goals(a, b, n_resamples=50)
    # the checklist judges no goal: only the preset's rate (from its must_not checks) may have values
    assert goals is not None and set(goals) == {"preset_respected_rate"}
    assert judge_goal_rows({}) == []
