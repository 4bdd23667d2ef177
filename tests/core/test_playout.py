import numpy as np

from voice.core.playout import PlayoutBuffer


def ramp(n: int, start: int = 1) -> np.ndarray:
    return np.arange(start, start + n, dtype=np.int16)


def test_audio_plays_from_arrival_and_bursts_queue_behind():
    buf = PlayoutBuffer()
    assert buf.schedule(ramp(100), arrival=50) == 50
    assert buf.schedule(ramp(100, 1000), arrival=60) == 150  # arrived early: waits its turn
    out = buf.render(0, 320)
    assert not out[:50].any()
    assert np.array_equal(out[50:150], ramp(100))
    assert np.array_equal(out[150:250], ramp(100, 1000))
    assert not out[250:].any()
    assert buf.pending(320) == 0


def test_faster_than_real_time_sender_is_heard_in_real_time():
    buf = PlayoutBuffer()
    for _ in range(10):  # ten frames delivered at once at sample 0
        buf.schedule(np.full(320, 7, dtype=np.int16), arrival=0)
    assert buf.end == 3200
    heard = np.concatenate([buf.render(k * 320, 320) for k in range(12)])
    assert (heard[:3200] == 7).all() and not heard[3200:].any()


def test_clear_drops_unplayed_audio_only():
    buf = PlayoutBuffer()
    buf.schedule(np.full(1000, 5, dtype=np.int16), arrival=0)
    first = buf.render(0, 320)
    assert (first == 5).all()
    assert buf.clear(at=400) == 600
    second = buf.render(320, 320)
    assert (second[:80] == 5).all() and not second[80:].any()
    # after a clear, new audio starts at its own arrival, not behind the dropped audio
    assert buf.schedule(np.full(10, 9, dtype=np.int16), arrival=700) == 700


def test_nothing_queued_renders_shared_read_only_silence_and_old_chunks_are_released():
    buf = PlayoutBuffer()
    buf.schedule(np.full(100, 7, dtype=np.int16), arrival=0)
    assert not buf.render(200, 50).any() and not buf.render(200, 50).flags.writeable
    assert buf.pending(0) == 0  # the chunk that ended before 200 is gone
    buf.schedule(np.full(100, 9, dtype=np.int16), arrival=300)
    heard = buf.render(250, 100)
    assert heard.flags.writeable and list(heard[[0, 49, 50, 99]]) == [0, 0, 9, 9]
