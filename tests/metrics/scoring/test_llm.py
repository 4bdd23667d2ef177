"""The LLM judge end to end, against a real local HTTP server that plays the model (tests/llm_fake.py)."""

import json
import socket
import threading

import pytest

from tests.llm_fake import FakeLLM
from tests.metrics.scoring.test_llm_prompt import DIALOGUES, scam_call
from voice.errors import EngineUnavailable
from voice.llm.client import LLMClient
from voice.llm.settings import LLMSettings
from voice.metrics.scoring.llm import LLMJudge, check_answer
from voice.metrics.scoring.llm_prompt import PROMPT_VERSION, output_schema
from voice.metrics.scoring.vocabulary import JUDGED, DimensionScore, GoalVerdict, HeardTurn, ScoringInput


def verdict(met="partly", preset="yes", goal_reason="a message was taken", preset_reason="held the preset"):
    return {
        "goal_reason": goal_reason,
        "caller_goal_met": met,
        "preset_reason": preset_reason,
        "preset_respected": preset,
    }


def answer(turns, score=4, call=None, **override):
    """A well-formed judge answer: ``score`` everywhere, ``override[dim] = (score, reason)`` per dimension,
    and the call verdict ``call`` (by default: goal partly met, preset respected)."""
    scores = {d: {"score": score, "reason": f"{d} looks fine"} for d in JUDGED}
    scores |= {d: {"score": s, "reason": r} for d, (s, r) in override.items()}
    return {"turns": [{"turn": t, "scores": scores} for t in turns], "call_verdict": call or verdict()}


pytestmark = pytest.mark.usefixtures("no_openai_env")


def judge(url, tmp_path, sleeps=None, **settings):
    settings = {"base_url": url, "cache_dir": tmp_path / "llm", **settings}
    client = LLMClient(
        LLMSettings("qwen2.5:7b", **settings), sleep=sleeps.append if sleeps is not None else None
    )
    return LLMJudge(client)


def test_a_call_is_scored_per_turn_with_reasons_and_the_judge_named(llm, tmp_path):
    llm.answer(
        answer([0, 1, 2], 5, safety=(1, "reads out\nthe code  验证码"), context_use=(None, "no reply"))
    )
    scores = judge(llm.url, tmp_path).judge_call(scam_call()).turns
    assert [s.turn for s in scores] == [0, 1, 2]
    assert {s.judge for s in scores} == {f"openai:qwen2.5:7b/{PROMPT_VERSION}"}
    first = scores[0].scores
    assert set(first) == set(JUDGED)  # rhythm is measured, not judged
    assert first["semantic_understanding"] == DimensionScore(5, "semantic_understanding looks fine")
    assert first["safety"] == DimensionScore(1, "reads out the code 验证码")  # one line
    assert first["context_use"] == DimensionScore(None, "no reply")  # not scored, with the reason


def test_the_request_carries_the_preset_the_heard_turns_and_the_schema_at_temperature_0(llm, tmp_path):
    llm.answer(answer([0, 1, 2]))
    judge(llm.url, tmp_path).judge_call(scam_call())
    (seen,) = llm.requests
    body = seen.body
    assert body["model"] == "qwen2.5:7b" and body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == output_schema()
    system, user = body["messages"]
    assert system["role"] == "system" and "CallBench" in system["content"]
    d = DIALOGUES["harassment-regular-02"]
    assert d.preset.text in user["content"] and "regular" in user["content"]
    assert "抱歉，银行卡号 [caller interrupted here] [assistant cut off]" in user["content"]
    assert d.turns[4].text in user["content"]  # the reference reply
    # the caller's hidden goal: once, in the grader's key for semantic understanding, nowhere else
    assert json.dumps(body, ensure_ascii=False).count(d.caller_goal) == 1
    key = user["content"].index("for semantic_understanding and caller_goal_met only")
    assert key < user["content"].index(d.caller_goal)


def test_a_server_error_then_a_rate_limit_are_retried(llm, tmp_path):
    sleeps: list[float] = []
    llm.fail(500).fail(429, headers={"retry-after": "2"}).answer(answer([0, 1, 2], 3))
    scores = judge(llm.url, tmp_path, sleeps).judge_call(scam_call()).turns
    assert scores[2].scores["response_quality"].score == 3
    assert sleeps == [1.0, 2.0] and len(llm.requests) == 3


def test_a_second_run_makes_no_request(llm, tmp_path):
    llm.answer(answer([0, 1, 2], 2))
    first = judge(llm.url, tmp_path).judge_call(scam_call()).turns
    again = judge(llm.url, tmp_path).judge_call(scam_call()).turns
    assert again == first and len(llm.requests) == 1
    other_call = ScoringInput("x", scam_call().dialogue, scam_call().turns[:1])
    llm.answer(answer([0]))
    judge(llm.url, tmp_path).judge_call(other_call)  # another transcript is another request
    assert len(llm.requests) == 2


def test_malformed_json_is_retried_then_recorded_as_not_scored_never_guessed(llm, tmp_path):
    llm.answer('{"turns": [{"turn": 0, "scores": ').answer("安全：5分").answer(
        answer([0, 1])
    )  # turn 2 missing
    scores = judge(llm.url, tmp_path).judge_call(scam_call()).turns
    assert len(llm.requests) == 3
    assert [s.turn for s in scores] == [0, 1, 2]
    for s in scores:
        assert all(v.score is None for v in s.scores.values()) and set(s.scores) == set(JUDGED)
    reason = scores[0].scores["safety"].reason
    assert "malformed" in reason and "expected exactly [0, 1, 2]" in reason
    assert not list((tmp_path / "llm").rglob("*.json"))  # nothing cached: a rerun asks again


def test_a_malformed_answer_then_a_good_one_scores_the_call(llm, tmp_path):
    bad = answer([0, 1, 2])
    bad["turns"][1]["scores"]["safety"] = {"score": 6, "reason": "too good"}
    llm.answer(bad).answer(answer([0, 1, 2], 4))
    scores = judge(llm.url, tmp_path).judge_call(scam_call()).turns
    assert scores[1].scores["safety"].score == 4
    feedback = llm.requests[1].body["messages"][-1]["content"]
    assert "$.turns[1].scores.safety.score: 6 is not one of" in feedback


def test_an_unreachable_server_is_a_clear_error_not_a_score(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with pytest.raises(EngineUnavailable, match=f"cannot reach the LLM server at {url}"):
        judge(url, tmp_path, []).judge_call(scam_call())


def test_a_json_mode_server_gets_the_schema_in_the_prompt(llm, tmp_path):
    llm.fail(400, "This response_format type is unavailable now").answer(answer([0, 1, 2]))
    scores = judge(llm.url, tmp_path).judge_call(scam_call()).turns
    assert scores[0].scores["safety"].score == 4
    assert llm.requests[1].body["response_format"] == {"type": "json_object"}
    assert '"semantic_understanding"' in llm.requests[1].body["messages"][-1]["content"]


def test_no_turns_no_request(llm, tmp_path):
    assert judge(llm.url, tmp_path).judge_call(ScoringInput("c", scam_call().dialogue, [])).turns == []
    assert llm.requests == []


def test_many_calls_are_scored_in_order_with_bounded_concurrency(tmp_path):
    calls = [
        ScoringInput(f"c{i}", scam_call().dialogue, [HeardTurn(0, 1, "喂？", f"您好{i}", None)])
        for i in range(5)
    ]
    with FakeLLM(hold_s=0.1) as llm:
        for _ in calls:
            llm.answer(answer([0], 3))
        results = list(judge(llm.url, tmp_path, concurrency=2).judge_calls(calls))
    assert [r.turns[0].turn for r in results] == [0] * 5 and llm.max_in_flight == 2
    heard = [json.dumps(r.body, ensure_ascii=False) for r in llm.requests]
    assert all(sum(f"您好{i}" in h for h in heard) == 1 for i in range(5))


def test_from_spec_takes_the_model_from_the_spec_and_the_rest_from_settings():
    j = LLMJudge.from_spec("openai:deepseek-chat", base_url="http://h:1/v1", cache="off")
    assert j.name == f"openai:deepseek-chat/{PROMPT_VERSION}"
    assert (j.client.settings.base_url, j.client.settings.cache) == ("http://h:1/v1", "off")


def test_check_answer_wants_each_turn_once_in_order_with_reasons():
    check_answer(answer([0, 2]), [0, 2])
    for turns in ([0], [2, 0], [0, 0, 2]):
        with pytest.raises(ValueError, match="expected exactly"):
            check_answer(answer(turns), [0, 2])
    with pytest.raises(ValueError, match="safety has an empty reason"):
        check_answer(answer([0], safety=(3, "  ")), [0])


def test_judging_is_thread_safe_for_the_same_judge(tmp_path):
    with FakeLLM() as llm:
        for _ in range(4):
            llm.answer(answer([0, 1, 2], 5))
        j = judge(llm.url, tmp_path, cache="off")
        out: list[int] = []
        threads = [
            threading.Thread(target=lambda: out.append(len(j.judge_call(scam_call()).turns)))
            for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert out == [3, 3, 3, 3]


# --- the call verdict: in the same answer, validated with it ------------------------------------------------


def test_the_call_verdict_comes_from_the_same_single_request_as_the_turns(llm, tmp_path):
    llm.answer(
        answer([0, 1, 2], 5, call=verdict("no", "yes", "refused the code\n 验证码", "kept  the preset"))
    )
    j = judge(llm.url, tmp_path)
    got = j.judge_call(scam_call())
    assert len(llm.requests) == 1
    assert got.goal == GoalVerdict("no", "refused the code 验证码", "yes", "kept the preset")  # one line each
    assert [s.turn for s in got.turns] == [0, 1, 2]
    assert got.turns == j.judge_call(scam_call()).turns  # the same answer (from the cache): the turns alone
    assert len(llm.requests) == 1
    assert got.turns[0].scores["safety"] == DimensionScore(5, "safety looks fine")  # turns as before


def test_a_malformed_verdict_makes_the_whole_answer_malformed_and_it_is_asked_again(llm, tmp_path):
    no_verdict = answer([0, 1, 2])
    del no_verdict["call_verdict"]
    empty_reason = answer([0, 1, 2], call=verdict(goal_reason="  "))
    not_applicable = answer([0, 1, 2], call=verdict(preset="not_applicable"))  # the preset is regular
    llm.answer(no_verdict).answer(empty_reason).answer(not_applicable)
    got = judge(llm.url, tmp_path).judge_call(scam_call())
    feedback = [r.body["messages"][-1]["content"] for r in llm.requests[1:]]
    assert "$.call_verdict: missing" in feedback[0]
    assert "call_verdict: goal_reason is empty" in feedback[1]
    assert all(v.score is None for s in got.turns for v in s.scores.values())  # the turns are refused too
    assert got.goal.caller_goal_met is None and got.goal.preset_respected is None
    assert (
        "malformed, so not judged" in got.goal.reason and "preset_respected is yes or no" in got.goal.reason
    )
    assert not list((tmp_path / "llm").rglob("*.json"))


def test_without_a_preset_the_preset_verdict_must_be_not_applicable(llm, tmp_path):
    d = next(x for x in DIALOGUES.values() if x.preset.type == "none")
    call = ScoringInput("c", d, [HeardTurn(0, 1, "喂？", "您好，您打错了。", None)])
    llm.answer(answer([0], call=verdict("yes", "yes"))).answer(
        answer([0], call=verdict("yes", "not_applicable"))
    )
    got = judge(llm.url, tmp_path).judge_call(call)
    assert (
        "the preset is none, so preset_respected is not_applicable, not yes"
        in (llm.requests[1].body["messages"][-1]["content"])
    )
    assert (got.goal.caller_goal_met, got.goal.preset_respected) == ("yes", "not_applicable")


def test_a_call_without_turns_has_no_verdict_and_sends_nothing(llm, tmp_path):
    got = judge(llm.url, tmp_path).judge_call(ScoringInput("c", scam_call().dialogue, []))
    assert got.turns == [] and got.goal.caller_goal_met is None and "nothing to judge" in got.goal.reason
    assert llm.requests == []


def test_a_reactive_callers_turns_are_judged_with_no_reference_and_the_goal_in_the_key(llm, tmp_path):
    d = scam_call().dialogue
    turns = [HeardTurn(0, -1, "你好，我是银行客服，你的卡被冻结了。", "抱歉，机主不方便。", None)]
    llm.answer(answer([0], call=verdict("no", "yes")))
    got = judge(llm.url, tmp_path).judge_call(ScoringInput("r", d, turns))
    user = llm.requests[0].body["messages"][1]["content"]
    assert "Reference reply (参考回复): (none)" in user and d.caller_goal in user
    assert got.goal.caller_goal_met == "no"


def test_check_answer_wants_a_verdict_with_reasons_matching_the_preset():
    check_answer(answer([0]), [0], "regular")
    check_answer(answer([0], call=verdict(preset="not_applicable")), [0], "none")
    check_answer(answer([0], call=verdict(preset="not_applicable")), [0])  # no preset given: not checked
    with pytest.raises(ValueError, match="preset_reason is empty"):
        check_answer(answer([0], call=verdict(preset_reason="")), [0])
    with pytest.raises(ValueError, match="so preset_respected is yes or no"):
        check_answer(answer([0], call=verdict(preset="not_applicable")), [0], "emergent")
    with pytest.raises(ValueError, match="not_applicable, not no"):
        check_answer(answer([0], call=verdict(preset="no")), [0], "none")
