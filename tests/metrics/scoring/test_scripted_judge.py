"""The scripted stand-in judge (``voice/metrics/scoring/scripted_judge.py``): a well-formed answer for the
turns the
real judge prompt asks about, accepted by the LLM judge end to end over HTTP."""

from __future__ import annotations

import pytest

from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.llm.client import LLMClient
from voice.llm.settings import LLMSettings
from voice.metrics.scoring import scripted_judge
from voice.metrics.scoring.llm import LLMJudge
from voice.metrics.scoring.vocabulary import JUDGED, HeardTurn, ScoringInput

pytestmark = pytest.mark.usefixtures("no_openai_env")


def body(user: str) -> dict:
    return {"messages": [{"role": "system", "content": "…"}, {"role": "user", "content": user}]}


def test_every_asked_turn_gets_the_middle_score_on_every_judged_dimension_and_says_it_is_a_stand_in():
    got = scripted_judge.answer(body("…\n\nScore every assistant turn: 1, 2, 4; then give the call verdict."))
    assert [t["turn"] for t in got["turns"]] == [1, 2, 4]
    assert all(set(t["scores"]) == set(JUDGED) for t in got["turns"])
    assert {s["score"] for t in got["turns"] for s in t["scores"].values()} == {scripted_judge.SCORE}
    assert "stand-in" in got["turns"][0]["scores"][JUDGED[0]]["reason"]
    assert got["call_verdict"]["caller_goal_met"] == "partly"
    assert got["call_verdict"]["preset_respected"] == "yes"
    none = scripted_judge.answer(
        body(f"{scripted_judge.NO_PRESET} (无预设)\nScore every assistant turn: 1; then")
    )
    assert none["call_verdict"]["preset_respected"] == "not_applicable"


def test_a_prompt_that_asks_about_no_turn_gets_none_and_scores_and_verdicts_can_be_set():
    assert scripted_judge.asked_turns("Score every assistant turn: ; then give the call verdict.") == []
    assert scripted_judge.asked_turns("no such line") == []
    call = {**scripted_judge.verdict(""), "caller_goal_met": "yes"}
    got = scripted_judge.answer(body("Score every assistant turn: 3; then"), score=5, reason="ok", call=call)
    assert got["turns"][0]["scores"][JUDGED[0]] == {"score": 5, "reason": "ok"}
    assert got["call_verdict"]["caller_goal_met"] == "yes"


@pytest.mark.parametrize("preset", ["regular", "none"])
def test_the_llm_judge_accepts_its_answers(llm, tmp_path, preset):
    llm.respond(scripted_judge.answer)
    dialogue = next(d for d in load_dialogues(bundled_dialogues_path()) if d.preset.type == preset)
    turns = [HeardTurn(0, 1, dialogue.caller_turns[0].text, "好的，我会转告机主。", None)]
    judge = LLMJudge(LLMClient(LLMSettings("rules", base_url=llm.url, cache_dir=tmp_path / "llm")))
    got = judge.judge_call(ScoringInput("c", dialogue, turns))
    assert {s.score for t in got.turns for s in t.scores.values()} == {scripted_judge.SCORE}
    assert got.goal.caller_goal_met == "partly" and len(llm.requests) == 1
