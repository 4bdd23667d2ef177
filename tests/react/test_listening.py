"""Hearing a reply while it plays: which pieces (voice/core/speech_pieces.py) make up a reply's span."""

from voice.react.listening import join_texts, spans_for


def test_a_reply_is_its_closed_pieces_and_what_is_left_after_them():
    pieces = [(100, 900), (1200, 1400), (3000, 3500)]
    assert spans_for(pieces, 100, 2000) == [(100, 900), (1200, 1400), (1400, 2000)]
    assert spans_for(pieces, 100, 1400) == [(100, 900), (1200, 1400)]  # only closed pieces: nothing left
    assert spans_for(pieces, 500, 1400) == [(500, 1200), (1200, 1400)]  # it began inside a piece
    assert spans_for(pieces, 1500, 2900) == [(1500, 2900)]  # no piece inside: the span itself
    assert spans_for(pieces, 5, 5) == []


def test_pieces_texts_join_without_spaces_and_empty_ones_drop():
    assert join_texts(["您好，", " ", "请讲。"]) == "您好，请讲。"
