"""Scoring a finished run: every call scored from what was heard, resumable, summarised per dimension."""

import json

import pytest

from tests.runs import bench
from voice.dialogues import bundled_dialogues_path, load_dialogues
from voice.metrics.scoring.base import DIMENSIONS
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.run.score import broken_floors, format_scores, parse_fail_under, score_target
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
    assert doc["schema_version"] == "callsim.scores/1" and doc["judge"] == "checklist/1"
    metrics = json.loads((folder / "takeout-regular-01.metrics.json").read_text())
    for turn, m in zip(doc["versions"]["heard"], metrics["turns"], strict=False):
        assert set(turn["scores"]) == set(DIMENSIONS)
        assert turn["scores"]["dialogue_rhythm"]["score"] == m["rhythm"]
    # what the scripted bot "said" is the memory ASR's 好的 everywhere: the references must do far better
    heard, ref = summary["dimensions"]["heard"], summary["dimensions"]["reference"]
    assert ref["semantic_understanding"]["mean"] > heard["semantic_understanding"]["mean"]
    assert ref["dialogue_rhythm"]["mean"] is None  # the reference was never said: no timing to score
    assert summary["by_scenario"].keys() == {"takeout", "harassment"}
    table = format_scores(summary, title="a")
    assert "semantic understanding" in table and "dialogue rhythm" in table


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
