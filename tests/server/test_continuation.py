"""Which Mandarin transcripts sound unfinished: fillers, markers, a trailing comma, an open condition."""

from __future__ import annotations

import pytest

from server.continuation import unfinished_cue


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("那个，", "trailing comma"),
        ("就是那个", "那个"),
        ("行,那更,就是。", "就是"),  # Whisper ends a fragment with "。" anyway
        ("我想问一下", "我想问一下"),
        ("如果要改时间", "如果…"),
        ("不急不急,那根", "那根"),  # Whisper base's "那个"
    ],
)
def test_fillers_markers_and_open_conditions_sound_unfinished(text: str, cue: str) -> None:
    assert unfinished_cue(text) == cue


@pytest.mark.parametrize(
    "text",
    [
        "好的，那我放门口了。",
        "如果要改时间，提前一天打电话就行。",
        "如果不在家就放门口",  # the condition has its consequence
        "明天下午可以吗？",
        "嗯",  # a lone "嗯" answers
        "",
        "  ",
    ],
)
def test_finished_sentences_and_lone_answers_do_not(text: str) -> None:
    assert unfinished_cue(text) is None
