"""Scoring a finished run: every call scored from what was heard, resumable, summarised per dimension."""

import dataclasses
import json
import re

import pytest

from tests.runs import bench
from voice.app.run.score import (
    CallScores,
    broken_floors,
    format_scores,
    heard_minus_text,
    load_scores,
    parse_fail_under,
    score_target,
    summarize_scores,
)
from voice.core import events as ev
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.metrics.model.jsonio import Fields
from voice.metrics.model.score_files import ScoresSummary
from voice.metrics.scoring import scripted_judge as judge_standin
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.metrics.scoring.coverage import NOT_COVERED
from voice.metrics.scoring.llm import LLMJudge
from voice.metrics.scoring.vocabulary import DIMENSIONS, JUDGED, DimensionScore, TurnScore
from voice.recording import load_recording, save_recording
from voice.speech.asr import MemoryASR

DIALOGUES = {d.id: d for d in load_dialogues(bundled_dialogues_path())}


@pytest.fixture
async def run_dir(tmp_path):
    await bench(tmp_path, [DIALOGUES["takeout-regular-01"], DIALOGUES["harassment-regular-01"]])
    return tmp_path


async def test_every_call_is_scored_on_seven_dimensions_and_rhythm_is_the_measured_one(run_dir):
    folder = run_dir / "pcm-ws-a.test-pcm"
    calls, summary = score_target(folder, DIALOGUES, ChecklistJudge(), MemoryASR([], default="好的"))
    assert [c.call_id for c in calls] == ["takeout-regular-01", "harassment-regular-01"]
    doc = json.loads((folder / "takeout-regular-01.scores.json").read_text())
    assert doc["schema_version"] == "callsim.scores/1" and doc["judge"] == "checklist/5"
    metrics = json.loads((folder / "takeout-regular-01.metrics.json").read_text())
    for turn, m in zip(doc["versions"]["heard"], metrics["turns"], strict=False):
        assert set(turn["scores"]) == set(DIMENSIONS)
        assert turn["scores"]["dialogue_rhythm"]["score"] == m["rhythm"]
    # what the scripted bot "said" is the memory ASR's 好的 everywhere: the references must do far better
    heard, ref = summary.to_json()["dimensions"]["heard"], summary.to_json()["dimensions"]["reference"]
    assert ref["semantic_understanding"]["mean"] > heard["semantic_understanding"]["mean"]
    assert ref["dialogue_rhythm"]["mean"] is None  # the reference was never said: no timing to score
    assert summary.to_json()["by_scenario"].keys() == {"takeout", "harassment"}
    table = format_scores(summary, title="a")
    assert "semantic understanding" in table and "dialogue rhythm" in table


async def test_the_targets_results_json_counts_what_the_judge_judged_and_had_no_grounds_for(run_dir):
    from tests.metrics.test_results import SCORED_ONLY, documented, key_paths, route

    folder = run_dir / "pcm-ws-a.test-pcm"
    _, summary = score_target(folder, DIALOGUES, ChecklistJudge(), MemoryASR([], default="好的"))
    doc = json.loads((folder / "results.json").read_text())
    coverage = doc["judge_coverage"]
    assert coverage["judge"] == "checklist/5" and coverage["calls"] == 2 and doc["calls"]  # the run's kept
    for dim, c in coverage["dimensions"].items():
        cell = summary.to_json()["dimensions"]["heard"][dim]
        assert (c["judged"], c["not_judged"], c["no_grounds"]) == (
            cell["scored"],
            cell["not_scored"],
            cell["not_covered"],
        )
        assert c["no_grounds"] <= c["not_judged"]
    turns = sum(len(c.versions["heard"]) for c in score_target(folder, DIALOGUES, ChecklistJudge(), None)[0])
    assert all(c["judged"] + c["not_judged"] == turns for c in coverage["dimensions"].values())
    paths = {route("target", p)[1] for p in key_paths(coverage, "judge_coverage")}
    assert paths <= SCORED_ONLY and SCORED_ONLY - {"judge_coverage"} <= paths | {"judge_coverage"}
    assert documented()["target"] >= SCORED_ONLY


async def test_scoring_resumes_and_a_floor_breaks(run_dir):
    folder = run_dir / "pcm-ws-a.test-pcm"
    first, summary = score_target(folder, DIALOGUES, ChecklistJudge(), MemoryASR([], default="好的"))
    states = []
    again, _ = score_target(
        folder, DIALOGUES, ChecklistJudge(), None, on_call=lambda call_id, state: states.append(state)
    )
    assert states == ["kept", "kept"] and again == first
    assert broken_floors(summary, parse_fail_under(["semantic_understanding=4.9"]))
    assert not broken_floors(summary, parse_fail_under(["dialogue_rhythm=1"]))
    with pytest.raises(ValueError, match="DIM=X"):
        parse_fail_under(["speed=3"])


# --- the judge's verdict on each call ----------------------------------------------------------------------


async def test_each_call_records_the_judges_verdict_and_the_summary_counts_them(run_dir):
    folder = run_dir / "pcm-ws-a.test-pcm"
    calls, summary = score_target(folder, DIALOGUES, ChecklistJudge(), MemoryASR([], default="好的"))
    doc = json.loads((folder / "takeout-regular-01.scores.json").read_text())
    goal = doc["goal"]
    assert set(goal) == {"caller_goal_met", "reason", "preset_respected", "preset_reason"}
    assert goal["caller_goal_met"] is None and "LLM judge" in goal["reason"]  # the checklist cannot say
    assert goal["preset_respected"] in ("yes", "no", None) and goal["preset_reason"]
    assert load_scores(folder, "takeout-regular-01", "checklist/5").goal == calls[0].goal
    block = summary.to_json()["goal"]
    assert block["calls"] == 2 and block["caller_goal_met"] == {
        "yes": 0,
        "partly": 0,
        "no": 0,
        "not_judged": 2,
    }
    assert block["met_rate"] is None and block["met_or_partly_rate"] is None  # nothing judged: no rate
    assert sum(block["preset_respected"].values()) == 2
    table = format_scores(summary, title="a")
    assert "caller's goal met (judge): yes 0, partly 0, no 0, not judged 2; met rate -" in table
    assert "preset respected (judge): yes " in table


async def test_a_call_scored_before_verdicts_existed_is_scored_again(run_dir):
    folder = run_dir / "pcm-ws-a.test-pcm"
    score_target(folder, DIALOGUES, ChecklistJudge(), MemoryASR([], default="好的"))
    path = folder / "takeout-regular-01.scores.json"
    old = json.loads(path.read_text())
    del old["goal"]
    path.write_text(json.dumps(old))
    assert load_scores(folder, "takeout-regular-01", "checklist/5").goal is None  # compare still reads it
    assert load_scores(folder, "takeout-regular-01", "checklist/5", need_goal=True) is None
    states = []
    score_target(
        folder,
        DIALOGUES,
        ChecklistJudge(),
        MemoryASR([], default="好的"),
        on_call=lambda i, s: states.append(s),
    )
    assert states == ["scored", "kept"] and "goal" in json.loads(path.read_text())


def llm_judge_answer(body):
    """The stand-in judge (voice/metrics/scoring/scripted_judge.py) scoring every turn 4; the takeout call's
    goal
    met, the others' not."""
    met = "yes" if "Scenario (场景): takeout" in judge_standin.user_message(body) else "no"
    call = {
        "goal_reason": f"the caller's goal: {met}",
        "caller_goal_met": met,
        "preset_reason": "kept to the preset",
        "preset_respected": "yes",
    }
    return judge_standin.answer(body, score=4, reason="fine", call=call)


async def test_an_llm_judged_run_records_each_verdict_with_its_reason_and_the_rates(
    run_dir, llm, tmp_path, no_openai_env
):
    folder = run_dir / "pcm-ws-a.test-pcm"
    llm.respond(llm_judge_answer)
    judge = LLMJudge.from_spec("openai:fake", base_url=llm.url, cache_dir=tmp_path / "cache")
    calls, summary = score_target(folder, DIALOGUES, judge, MemoryASR([], default="好的"))
    assert [c.goal.caller_goal_met for c in calls] == ["yes", "no"]
    doc = json.loads((folder / "harassment-regular-01.scores.json").read_text())
    assert doc["goal"] == {
        "caller_goal_met": "no",
        "reason": "the caller's goal: no",
        "preset_respected": "yes",
        "preset_reason": "kept to the preset",
    }
    block = summary.to_json()["goal"]
    assert block["caller_goal_met"] == {"yes": 1, "partly": 0, "no": 1, "not_judged": 0}
    assert (block["met_rate"], block["preset_respected_rate"]) == (0.5, 1.0)
    assert "met rate 50%" in format_scores(summary)
    asked = len(llm.requests)  # heard and reference per call: the verdict needs no request of its own
    assert asked == 4


async def test_an_llm_judges_not_scored_keeps_its_own_reason_never_not_covered_by_annotations(
    run_dir, llm, tmp_path, no_openai_env
):
    """ "not covered by annotations" is the checklist's reason: an LLM judge reads no annotations."""
    folder = run_dir / "pcm-ws-a.test-pcm"

    def abstains(body):
        doc = judge_standin.answer(body, score=4, reason="fine")
        for turn in doc["turns"]:
            turn["scores"]["context_use"] = {"score": None, "reason": "nothing earlier to use"}
        return doc

    llm.respond(abstains)
    judge = LLMJudge.from_spec("openai:fake", base_url=llm.url, cache_dir=tmp_path / "cache")
    calls, _ = score_target(folder, DIALOGUES, judge, MemoryASR([], default="好的"))
    for turn in calls[0].versions["heard"]:
        assert turn.scores["context_use"].reason == "nothing earlier to use"
        assert not turn.scores["context_use"].reason.startswith(NOT_COVERED)  # the checklist's own mark


async def test_a_call_whose_caller_turns_are_not_from_the_script_is_scored_honestly(run_dir):
    # the recording rewritten as a reactive caller's: every plan off the script, no reference on it
    folder = run_dir / "pcm-ws-a.test-pcm"
    rec = load_recording(folder / "takeout-regular-01")
    events = [
        dataclasses.replace(e, dialogue_turn=-1, reference=None) if isinstance(e, ev.TurnPlanned) else e
        for e in rec.events
    ]
    save_recording(folder, dataclasses.replace(rec, events=events))
    calls, _ = score_target(folder, DIALOGUES, ChecklistJudge(), MemoryASR([], default="好的"))
    takeout = calls[0]
    assert "reference" not in takeout.versions  # no scripted replies to set as the ceiling
    for turn in takeout.versions["heard"]:
        for dim in ("semantic_understanding", "context_use", "preset_compliance"):
            assert turn.scores[dim].score is None and "not from the script" in turn.scores[dim].reason
        assert turn.scores["dialogue_rhythm"].score is not None  # timing is measured, script or not
    assert (
        takeout.goal.preset_respected is None and "no heard reply had must_not" in takeout.goal.preset_reason
    )
    assert "reference" in calls[1].versions  # the other call is scripted as before


async def test_a_call_callsim_failed_on_is_not_scored(tmp_path):
    from tests.fakes import MutedTTS

    dialogues = [DIALOGUES["takeout-regular-01"], DIALOGUES["harassment-regular-01"]]
    voice = MutedTTS(failing=(dialogues[1].caller_turns[0].text,))  # a line of the second call only
    await bench(tmp_path, dialogues, tts=voice)
    said: list[tuple[str, str]] = []
    calls, summary = score_target(
        tmp_path / "pcm-ws-a.test-pcm",
        DIALOGUES,
        ChecklistJudge(),
        MemoryASR([], default="好的"),
        on_call=lambda call_id, state: said.append((call_id, state)),
    )
    assert [c.call_id for c in calls] == ["takeout-regular-01"] and summary.to_json()["calls"] == 1
    assert said[1] == (
        "harassment-regular-01",
        "skipped: caller_speech_failed, CallSim's failure, not the assistant's",
    )


def scored(call_id: str, heard: int, text: int) -> CallScores:
    """A call of one turn whose every dimension was scored ``heard`` as heard and ``text`` as meant."""

    def turn(score: int) -> list[TurnScore]:
        return [TurnScore(0, "j", {d: DimensionScore(score, "r") for d in DIMENSIONS})]

    return CallScores(call_id, {}, {"heard": turn(heard), "text": turn(text)})


def test_heard_minus_text_has_no_rhythm_row_and_no_interval_from_one_call():
    one = summarize_scores([scored("c1", 2, 4)], "j")
    assert set(one.to_json()["text_vs_heard"]) == set(
        JUDGED
    )  # rhythm is the same timing score both ways: always 0
    assert one.to_json()["text_vs_heard"]["safety"] == {
        "heard_minus_text": -2.0,
        "ci95": [None, None],
        "n_calls": 1,
    }
    assert heard_minus_text(one, "safety") == "-2.00 (n=1)"  # not "-2.00 [-2.00, -2.00]"
    assert heard_minus_text(one, "dialogue_rhythm") == "-"
    table = format_scores(one)
    assert "-2.00 (n=1)" in table and "[" not in table.split("\n", 1)[1]
    three = summarize_scores([scored("c1", 2, 4), scored("c2", 3, 4), scored("c3", 4, 4)], "j")
    assert three.to_json()["text_vs_heard"]["safety"]["n_calls"] == 3
    assert re.fullmatch(
        r"-1\.00 \[[+-]\d\.\d\d, [+-]\d\.\d\d\]", heard_minus_text(three, "safety")
    )  # an interval
    old = {"text_vs_heard": {"safety": {"heard_minus_text": -2.0, "ci95": [-2.0, -2.0], "n_calls": 1}}}
    old = ScoresSummary.from_json(Fields({"judge": "j", **old}))  # read as the report reads the file
    assert heard_minus_text(old, "safety") == "-2.00 (n=1)"  # a scores.json written before: the same
