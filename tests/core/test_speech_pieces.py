"""Speech cut into pieces at its pauses: the cutter both listeners of a call use."""

import numpy as np
import pytest

from tests.fakes import tone
from voice.core.audio import FRAME_SAMPLES, ms_to_samples
from voice.core.speech_pieces import PauseCutter, Pieces

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


def test_the_cutter_fed_judged_windows_closes_a_piece_once_the_pause_has_passed_since_its_last_speech():
    cutter = PauseCutter(pause=100)
    assert cutter.observe(50, None) is None  # silence before any speech: nothing open
    assert cutter.observe(100, (60, 100)) is None and cutter.open_since == 60
    assert cutter.observe(150, (100, 140)) is None
    assert cutter.observe(200, None) is None  # 60 samples since the last speech
    assert cutter.observe(240, None) == (60, 140)  # 100: closed, from first to one past last speech
    assert cutter.open_since is None and cutter.last_speech == 140 and cutter.position == 240
    assert cutter.observe(300, None) is None  # a pause goes on: no second, empty piece
    assert cutter.closed == [(60, 140)]
    with pytest.raises(ValueError, match="one sample"):
        PauseCutter(0)


def test_closing_the_open_piece_early_hands_it_over_once():
    cutter = PauseCutter(pause=100)
    cutter.observe(100, (10, 100))
    assert cutter.close() == (10, 100) and cutter.close() is None
    assert cutter.observe(300, None) is None and cutter.closed == [(10, 100)]
