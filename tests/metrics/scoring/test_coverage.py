"""What annotations cover, turn by turn: the gaps an annotator sees, and the marks the score tables carry."""

import dataclasses
import json
from pathlib import Path

from tests.records import good
from voice.dialogues import load_dialogues
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.metrics.scoring.coverage import (
    NOT_COVERED,
    check_dialogues,
    gaps,
    mark_not_covered,
    reference_call,
    render_checks,
)
from voice.metrics.scoring.vocabulary import DimensionScore, not_scored

NO_PRESET = {"type": "none", "text": None}


def annotated(tmp_path: Path, turns, preset=None, **dialogue_keys):
    """``good()`` (with ``preset`` instead of its own) with the annotations ``turns`` (caller turn →
    keys) in a file of their own."""
    d = tmp_path / "d.jsonl"
    obj = {**good(), **({"preset": preset} if preset else {})}
    d.write_text(json.dumps(obj, ensure_ascii=False) + "\n", encoding="utf-8")
    entry = {
        "dialogue": "takeout-regular-01",
        **dialogue_keys,
        "turns": [{"turn": t, **k} for t, k in turns.items()],
    }
    a = tmp_path / "a.jsonl"
    a.write_text(json.dumps(entry, ensure_ascii=False) + "\n", encoding="utf-8")
    [dialogue] = load_dialogues(d, annotations=a)
    return dialogue


def test_a_dimension_is_a_gap_only_where_neither_annotations_nor_the_dialogue_give_grounds(tmp_path):
    d = annotated(tmp_path, {0: {"key_points": [["门口"]], "should_end": False}}, preset=NO_PRESET)
    first = reference_call(d).turns[0].dialogue_turn
    # no preset and no must_not: nothing to comply with; the first turn of a call without a preset has
    # nothing earlier to carry over; every other dimension has grounds
    assert gaps(d, first) == {
        "context_use": "no points from earlier annotated for this turn",
        "preset_compliance": "no must_not phrases annotated for this turn",
    }
    plain = annotated(tmp_path, {}, preset=NO_PRESET)
    # the first turn (你的餐到了) asks nothing, names no number, has nothing before it: three gaps
    assert set(gaps(plain, first)) == {"semantic_understanding", "context_use", "preset_compliance"}
    assert gaps(annotated(tmp_path, {}), first) == {
        "semantic_understanding": "no key points annotated for this turn"
    }
    assert gaps(d, -1) == {}  # a turn not from the script has no reference to read grounds off


def test_the_check_scores_every_reference_reply_and_sums_the_gaps(tmp_path):
    d = annotated(tmp_path, {0: {"key_points": [["门口"]], "should_end": False}}, preset=NO_PRESET)
    checks = list(check_dialogues(ChecklistJudge(), [d]))
    assert [c.turn for c in checks] == [0, 1, 2, 3]  # every caller turn with a reply after it
    first = checks[0]
    assert first.scores["semantic_understanding"].score == 5 and "preset_compliance" in first.gaps
    text = render_checks(checks)
    assert f"preset compliance        -  {NOT_COVERED}: no must_not phrases annotated" in text
    assert "semantic understanding   5  conveys 1 of 1 key points" in text
    summary = text.splitlines()[-1]
    assert summary.startswith(f"gaps: 4 of 4 replies have a dimension with {NOT_COVERED} (")
    assert "preset compliance 4" in summary


def test_a_reference_that_scores_low_on_its_own_annotations_is_flagged(tmp_path):
    d = annotated(tmp_path, {1: {"key_points": [["谢谢"]], "should_ask": True}})  # 好的，谢谢您。asks nothing
    text = render_checks(list(check_dialogues(ChecklistJudge(), [d])))
    assert "the reference itself scores low: check the annotations" in text
    assert text.endswith("reference scores below 4 where covered: 1")


def test_an_uncovered_unscored_dimension_is_marked_and_nothing_else_is(tmp_path):
    d = annotated(tmp_path, {0: {"key_points": [["门口"]]}}, preset=NO_PRESET)
    call = reference_call(d)
    scores = {
        0: {
            "preset_compliance": not_scored("no must_not phrases annotated for this turn"),
            "semantic_understanding": not_scored("cut off after 0 of 1 key points"),  # covered, not judged
            "safety": DimensionScore(5, "an LLM judge needs no annotations"),
        }
    }
    marked = mark_not_covered(d, call.turns, scores)[0]
    assert marked["preset_compliance"].reason == f"{NOT_COVERED}: no must_not phrases annotated for this turn"
    assert marked["semantic_understanding"] == scores[0]["semantic_understanding"]
    assert marked["safety"] == scores[0]["safety"]
    assert mark_not_covered(d, call.turns, {0: marked})[0] == marked  # marked once
    off_script = [call.turns[0].__class__(**{**call.turns[0].__dict__, "dialogue_turn": -1})]
    assert mark_not_covered(d, off_script, scores)[0] == scores[0]  # a reactive caller's turn: no script


def test_a_turn_after_the_hang_up_is_not_marked_as_having_no_grounds(tmp_path):
    d = annotated(tmp_path, {}, preset=NO_PRESET)
    call = reference_call(d)
    ended = [dataclasses.replace(t, after_hangup=t.turn >= 1) for t in call.turns]
    scores = {1: {"preset_compliance": not_scored("after the call's ending")}}
    assert mark_not_covered(d, ended, scores)[1] == scores[1]
