"""Hearing a reply while it plays: pieces cut at its pauses, and which pieces make up a reply's span."""

import numpy as np
import pytest

from tests.fakes import tone
from voice.core.audio import FRAME_SAMPLES, ms_to_samples
from voice.react.listening import Pieces, join_texts, spans_for

S = ms_to_samples


def channel(*parts: tuple[str, float]) -> np.ndarray:
    """Speech ('s') and silence ('-') of the given lengths, one after the other."""
    return np.concatenate([tone(ms) if kind == "s" else np.zeros(S(ms), np.int16) for kind, ms in parts])


def test_a_piece_closes_at_a_pause_as_long_as_the_setting_and_not_at_a_shorter_one():
    heard = channel(("-", 100), ("s", 400), ("-", 100), ("s", 300), ("-", 300), ("s", 200), ("-", 300))
    pieces = Pieces(S(240))
    closed = []
    for end in range(FRAME_SAMPLES, len(heard) + 1, FRAME_SAMPLES):  # the channel grows frame by frame
        closed += pieces.feed(heard[:end])
    # a tone's first sample is 0 (silent): speech starts one sample in; the 100 ms pause did not cut
    assert closed == [(S(100) + 1, S(900)), (S(1200) + 1, S(1400))]
    assert pieces.closed == closed and pieces.last_speech == S(1400)


def test_a_piece_under_way_at_a_reply_onset_starts_there():
    heard = channel(("s", 600), ("-", 300))
    pieces = Pieces(S(240))
    pieces.feed(heard[: S(400)])
    pieces.floor(S(300))  # the reply began here: what came before was the caller's own turn
    pieces.floor(S(100))  # an earlier floor changes nothing
    assert pieces.feed(heard) == [(S(300), S(600))]
    pieces.floor(S(800))  # no piece open: nothing to move
    assert pieces.closed == [(S(300), S(600))]


def test_a_piece_still_open_is_not_reported_and_a_pause_under_one_frame_is_refused():
    pieces = Pieces(S(240))
    assert pieces.feed(channel(("s", 400), ("-", 200))) == []
    with pytest.raises(ValueError, match="one frame"):
        Pieces(FRAME_SAMPLES - 1)


def test_a_reply_is_its_closed_pieces_and_what_is_left_after_them():
    pieces = [(100, 900), (1200, 1400), (3000, 3500)]
    assert spans_for(pieces, 100, 2000) == [(100, 900), (1200, 1400), (1400, 2000)]
    assert spans_for(pieces, 100, 1400) == [(100, 900), (1200, 1400)]  # only closed pieces: nothing left
    assert spans_for(pieces, 500, 1400) == [(500, 1200), (1200, 1400)]  # it began inside a piece
    assert spans_for(pieces, 1500, 2900) == [(1500, 2900)]  # no piece inside: the span itself
    assert spans_for(pieces, 5, 5) == []


def test_pieces_texts_join_without_spaces_and_empty_ones_drop():
    assert join_texts(["您好，", " ", "请讲。"]) == "您好，请讲。"
