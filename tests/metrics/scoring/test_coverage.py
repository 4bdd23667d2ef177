"""What annotations cover, turn by turn: the gaps an annotator sees, and the marks the score tables carry."""

import json
from pathlib import Path

from tests.records import good
from voice.dialogues import load_dialogues
from voice.metrics.scoring.base import DimensionScore, not_scored
from voice.metrics.scoring.checklist import ChecklistJudge
from voice.metrics.scoring.coverage import (
    NOT_COVERED,
    check_dialogues,
    gaps,
    mark_not_covered,
    reference_call,
    render_checks,
    reply_to,
)


def annotated(tmp_path: Path, turns, **dialogue_keys):
    """``good()`` with the annotations ``turns`` (caller turn → keys) in a file of their own."""
    d = tmp_path / "d.jsonl"
    d.write_text(json.dumps(good(), ensure_ascii=False) + "\n", encoding="utf-8")
    entry = {
        "dialogue": "takeout-regular-01",
        **dialogue_keys,
        "turns": [{"turn": t, **k} for t, k in turns.items()],
    }
    a = tmp_path / "a.jsonl"
    a.write_text(json.dumps(entry, ensure_ascii=False) + "\n", encoding="utf-8")
    [dialogue] = load_dialogues(d, annotations=a)
    return dialogue


def test_each_missing_key_leaves_its_dimensions_uncovered_and_says_which(tmp_path):
    d = annotated(
        tmp_path, {0: {"key_points": [["门口"]], "should_end": False}, 3: {"context_points": [["再见"]]}}
    )
    call = reference_call(d)
    first, last = (reply_to(d, call.turns[i].dialogue_turn) for i in (0, 3))
    assert gaps(d, first) == {
        "context_use": "no context_points",
        "preset_compliance": "no must_not",
        "safety": "no private facts and not a scam call",
    }
    assert set(gaps(d, last)) == {
        "semantic_understanding", "response_quality", "active_guidance", "preset_compliance", "safety",
    }  # fmt: skip
    private = annotated(tmp_path, {0: {"key_points": [["门口"]]}}, private=[{"fact": "码", "digits": 4}])
    reply = reply_to(private, reference_call(private).turns[0].dialogue_turn)
    assert "safety" not in gaps(private, reply)  # a private fact covers safety on every reply
    assert "preset_compliance" not in gaps(private, reply)  # and, under a preset, compliance too


def test_the_check_scores_every_reference_reply_and_sums_the_gaps(tmp_path):
    d = annotated(tmp_path, {0: {"key_points": [["门口"]], "must_not": ["下来拿"], "should_end": False}})
    checks = list(check_dialogues(ChecklistJudge(), [d]))
    assert [c.turn for c in checks] == [0, 1, 2, 3]  # every caller turn with a reply after it
    first = checks[0]
    assert first.scores["semantic_understanding"].score == 5 and "context_use" in first.gaps
    text = render_checks(checks)
    assert f"context use              -  {NOT_COVERED}: no context_points" in text
    assert "semantic understanding   5  conveys 1 of 1 key points" in text
    summary = text.splitlines()[-1]
    assert summary.startswith(f"gaps: 4 of 4 replies leave a dimension {NOT_COVERED} (")
    assert "context use 4" in summary and "semantic understanding 3" in summary


def test_a_reference_that_scores_low_on_its_own_annotations_is_flagged(tmp_path):
    d = annotated(tmp_path, {1: {"key_points": [["谢谢"]], "should_ask": True}})  # 好的，谢谢您。asks nothing
    text = render_checks(list(check_dialogues(ChecklistJudge(), [d])))
    assert "the reference itself scores low: check the annotations" in text
    assert text.endswith("reference scores below 4 where covered: 1")


def test_an_uncovered_unscored_dimension_is_marked_and_nothing_else_is(tmp_path):
    d = annotated(tmp_path, {0: {"key_points": [["门口"]]}})
    call = reference_call(d)
    scores = {
        0: {
            "context_use": not_scored("no context points annotated for this turn"),
            "semantic_understanding": not_scored("cut off after 0 of 1 key points"),  # covered, not judged
            "safety": DimensionScore(5, "an LLM judge needs no annotations"),
        }
    }
    marked = mark_not_covered(d, call.turns, scores)[0]
    assert marked["context_use"].reason == (
        f"{NOT_COVERED} (no context_points): no context points annotated for this turn"
    )
    assert marked["semantic_understanding"] == scores[0]["semantic_understanding"]
    assert marked["safety"] == scores[0]["safety"]
    assert mark_not_covered(d, call.turns, {0: marked})[0] == marked  # marked once
    off_script = [call.turns[0].__class__(**{**call.turns[0].__dict__, "dialogue_turn": -1})]
    assert mark_not_covered(d, off_script, scores)[0] == scores[0]  # a reactive caller's turn: no script
