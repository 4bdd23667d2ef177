"""The gateway's playout queue: chunks of any length out as 20 ms frames, silence when empty, marks once
their audio is out, ``clear`` at once, a flood refused."""

from __future__ import annotations

import numpy as np

from server.sip_playout import PlayoutQueue


def ramp(n: int, start: int = 1) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.int16)


def test_chunks_of_any_length_come_out_as_frames_then_silence():
    q = PlayoutQueue()
    q.push(ramp(500))
    q.push(ramp(300, 501))
    first, _ = q.take()
    second, _ = q.take()
    third, _ = q.take()
    assert np.array_equal(np.concatenate([first, second, third[:160]]), ramp(800))
    assert not third[160:].any() and q.empty
    assert not q.take()[0].any()


def test_a_mark_is_released_with_the_frame_that_completes_its_audio():
    q = PlayoutQueue()
    q.mark("before")
    q.push(ramp(400))
    q.mark("after")
    q.push(ramp(320))
    assert q.take()[1] == ("before",)
    assert q.take()[1] == ("after",)
    assert q.take()[1] == ()
    q.mark("idle")
    assert q.take()[1] == ("idle",)


def test_clear_drops_audio_and_returns_its_marks():
    q = PlayoutQueue()
    q.push(ramp(1000))
    q.mark("m")
    q.take()
    assert q.clear() == ("m",)
    assert q.empty and not q.take()[0].any()


def test_more_than_the_limit_ahead_is_refused():
    q = PlayoutQueue(max_samples=640)
    assert q.push(ramp(600))
    assert not q.push(ramp(100))
    assert q.queued_samples == 600


def test_clear_keeps_what_a_continuous_stream_has_already_played():
    q = PlayoutQueue()
    q.push(ramp(100))
    q.push(ramp(900, 101))
    q.mark("m")
    q.take()  # 320 samples out
    assert q.clear(keep=150) == ("m",)  # 150 more were playing when the clear came
    frame, _ = q.take()
    assert np.array_equal(frame[:150], ramp(150, 321)) and not frame[150:].any() and q.empty
