import random

import pytest

from voice.lines.rtp_jitter import JitterBuffer, JitterStats
from voice.lines.rtp_packet import RtpPacket

DELAY = 480  # 60 ms at 8 kHz


def frame(n, samples=160):
    return bytes([n % 256]) * samples


def pkt(n, *, ts0=1000, seq0=0, ssrc=7, marker=False, samples=160, ts=None):
    timestamp = (ts0 + n * samples) % 2**32 if ts is None else ts
    return RtpPacket(0, (seq0 + n) % 2**16, timestamp, ssrc, frame(n, samples), marker)


def steady(buffer, count, *, start=0, arrival=0, **kwargs):
    """Push frames start..start+count-1, each arriving 160 samples after the one before."""
    for n in range(start, start + count):
        buffer.push(pkt(n, **kwargs), arrival + (n - start) * 160)


def drain(buffer, until):
    """Pop at every due time up to ``until``, as a line sleeping on next_due would."""
    out = []
    while (due := buffer.next_due()) is not None and due <= until:
        out += buffer.pop_due(due)
    return out


# --- the playout schedule ----------------------------------------------------------------------------------


def test_the_first_packet_is_due_after_the_delay():
    buffer = JitterBuffer(DELAY)
    assert buffer.next_due() is None
    buffer.push(pkt(0), 5000)
    assert buffer.next_due() == 5000 + DELAY
    assert buffer.pop_due(5000 + DELAY - 1) == []
    assert buffer.pop_due(5000 + DELAY) == [frame(0)]
    assert buffer.next_due() is None


def test_later_packets_are_due_by_their_timestamp():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    buffer.push(pkt(1), 170)  # jittered arrival does not move the schedule
    buffer.push(pkt(2), 300)
    assert buffer.pop_due(DELAY + 159) == [frame(0)]
    assert buffer.next_due() == DELAY + 160
    assert buffer.pop_due(DELAY + 320) == [frame(1), frame(2)]
    assert buffer.stats.played == 3


def test_zero_delay_plays_on_arrival():
    buffer = JitterBuffer(0)
    buffer.push(pkt(0), 100)
    assert buffer.pop_due(100) == [frame(0)]


def test_reordered_packets_come_out_in_timestamp_order():
    buffer = JitterBuffer(DELAY)
    for n, at in [(0, 0), (2, 150), (1, 200), (4, 400), (3, 450)]:
        buffer.push(pkt(n), at)
    assert buffer.pop_due(10_000) == [frame(n) for n in range(5)]
    assert buffer.stats.reordered == 2
    assert buffer.stats.lost == 0


def test_the_timestamp_wraps():
    buffer = JitterBuffer(DELAY)
    steady(buffer, 4, ts0=2**32 - 320, seq0=65534)
    assert drain(buffer, 10_000) == [frame(n) for n in range(4)]
    assert buffer.stats.lost == buffer.stats.late == 0


# --- loss, lateness, duplicates ----------------------------------------------------------------------------


def test_a_lost_packet_comes_out_as_none_at_its_slot():
    buffer = JitterBuffer(DELAY)
    for n in (0, 1, 3):
        buffer.push(pkt(n), n * 160)
    assert buffer.pop_due(DELAY + 160) == [frame(0), frame(1)]
    assert buffer.next_due() == DELAY + 320  # the missing slot: the line wakes for it
    assert buffer.pop_due(DELAY + 320) == [None]
    assert buffer.next_due() == DELAY + 480
    assert buffer.pop_due(DELAY + 480) == [frame(3)]
    assert buffer.stats.lost == 1


def test_popping_everything_at_once_still_marks_the_gap():
    buffer = JitterBuffer(DELAY)
    for n in (0, 3):
        buffer.push(pkt(n), n * 160)
    assert buffer.pop_due(100_000) == [frame(0), None, None, frame(3)]
    assert buffer.stats == JitterStats(received=2, played=2, lost=2, jitter=0.0)


def test_a_packet_after_its_slot_is_late():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    buffer.push(pkt(2), 320)
    assert buffer.pop_due(DELAY + 160) == [frame(0), None]
    buffer.push(pkt(1), DELAY + 200)
    assert buffer.stats.late == 1 and buffer.stats.reordered == 1
    assert buffer.pop_due(DELAY + 320) == [frame(2)]


def test_a_packet_arriving_after_an_empty_pop_of_its_time_is_late():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    assert buffer.pop_due(DELAY) == [frame(0)]
    assert buffer.pop_due(DELAY + 160) == []  # the line went on: nothing to play
    buffer.push(pkt(1), DELAY + 170)
    buffer.push(pkt(2), DELAY + 180)
    assert buffer.pop_due(DELAY + 320) == [frame(2)]
    assert buffer.stats.late == 1


def test_a_slot_the_line_went_past_is_counted_but_not_handed_out():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    assert buffer.pop_due(DELAY) == [frame(0)]
    assert buffer.pop_due(DELAY + 200) == []  # slot 1 passes with nothing buffered
    buffer.push(pkt(2), DELAY + 250)
    assert buffer.pop_due(DELAY + 320) == [frame(2)]  # no None for the slot already gone
    assert buffer.stats.lost == 1


def test_a_packet_due_before_the_next_pop_is_not_late():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    assert buffer.pop_due(DELAY) == [frame(0)]
    buffer.push(pkt(1), DELAY + 165)  # after its due time, but the line has not asked for it yet
    assert buffer.pop_due(DELAY + 170) == [frame(1)]
    assert buffer.stats.late == 0


def test_duplicates_are_dropped_and_counted():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    buffer.push(pkt(0), 10)
    buffer.push(pkt(1), 160)
    assert buffer.pop_due(DELAY + 160) == [frame(0), frame(1)]
    buffer.push(pkt(1), DELAY + 200)  # a duplicate of a played packet is a duplicate, not late
    assert buffer.stats.duplicates == 2 and buffer.stats.late == 0
    assert buffer.stats.received == 4


def test_a_repeated_timestamp_under_a_new_sequence_number_is_a_duplicate():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    buffer.push(RtpPacket(0, 99, 1000, 7, frame(9)), 5)
    assert buffer.pop_due(10_000) == [frame(0)]
    assert buffer.stats.duplicates == 1


# --- re-anchoring ------------------------------------------------------------------------------------------


def test_a_new_ssrc_re_anchors_after_what_is_buffered():
    buffer = JitterBuffer(DELAY)
    steady(buffer, 2)
    buffer.push(pkt(0, ssrc=99, ts0=777_777, seq0=5000), 330)
    # the old stream's two frames are due at DELAY and DELAY+160; the new stream follows them
    assert buffer.next_due() == DELAY
    assert buffer.pop_due(DELAY + 320) == [frame(0), frame(1)]
    assert buffer.next_due() == 330 + DELAY  # later than the old frames' end (DELAY + 320)
    assert buffer.pop_due(330 + DELAY) == [frame(0)]
    buffer.push(pkt(1, ssrc=99, ts0=777_777, seq0=5000), 490)
    assert buffer.pop_due(330 + DELAY + 160) == [frame(1)]
    assert buffer.stats.lost == 0 and buffer.stats.late == 0


def test_a_new_ssrc_is_scheduled_from_its_own_arrival_when_the_buffer_is_empty():
    buffer = JitterBuffer(DELAY)
    steady(buffer, 1)
    assert buffer.pop_due(DELAY) == [frame(0)]
    buffer.push(pkt(0, ssrc=99, ts0=5), 8000)
    assert buffer.next_due() == 8000 + DELAY


def test_a_marker_on_an_empty_buffer_re_anchors_a_talkspurt():
    buffer = JitterBuffer(DELAY)
    steady(buffer, 2)
    assert drain(buffer, 10_000) == [frame(0), frame(1)]
    # 0.5 s of silence not sent, and the far end's clock has drifted: the talkspurt arrives 100 samples later
    # than its timestamp says; it is played a full delay after its arrival, and nothing counts as lost
    buffer.push(pkt(27, marker=True), 27 * 160 + 100)
    assert buffer.next_due() == 27 * 160 + 100 + DELAY
    assert drain(buffer, 100_000) == [frame(27)]
    assert buffer.stats.lost == 0


def test_a_marker_with_frames_buffered_does_not_re_anchor():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    buffer.push(pkt(1, marker=True), 300)
    assert buffer.pop_due(DELAY + 160) == [frame(0), frame(1)]


def test_a_long_gap_re_anchors_without_loss():
    buffer = JitterBuffer(DELAY)
    steady(buffer, 2)
    assert drain(buffer, 10_000) == [frame(0), frame(1)]
    buffer.push(pkt(80), 80 * 160 + 40)  # 1.6 s later, no marker: silence suppression
    assert buffer.next_due() == 80 * 160 + 40 + DELAY
    assert drain(buffer, 100_000) == [frame(80)]
    assert buffer.stats.lost == 0


def test_a_gap_within_the_bound_is_concealed():
    buffer = JitterBuffer(DELAY, max_gap_frames=5)
    buffer.push(pkt(0), 0)
    buffer.push(pkt(5), 800)  # 4 missing: within 5 frames
    assert buffer.pop_due(10_000) == [frame(0), None, None, None, None, frame(5)]
    buffer.push(pkt(12), 12 * 160)  # 6 missing: beyond the bound, re-anchors
    assert buffer.pop_due(100_000) == [frame(12)]
    assert buffer.stats.lost == 4


def test_a_timestamp_jumping_back_re_anchors():
    buffer = JitterBuffer(DELAY)
    steady(buffer, 3, ts0=100_000)
    assert drain(buffer, 10_000) == [frame(n) for n in range(3)]
    buffer.push(pkt(3, ts=20_000), 2000)  # the far end restarted its clock 10 s back, same SSRC
    assert buffer.pop_due(2000 + DELAY) == [frame(3)]
    assert buffer.stats.late == 0


def test_re_anchoring_never_schedules_into_what_was_played():
    buffer = JitterBuffer(DELAY)
    buffer.push(pkt(0), 0)
    assert buffer.pop_due(DELAY) == [frame(0)]
    buffer.push(pkt(0, ssrc=2), 10)  # arrives early: now + delay would overlap the frame playing
    assert buffer.next_due() == DELAY + 160


# --- frame sizes, overflow, flush --------------------------------------------------------------------------


def test_30_ms_packets_play_back_to_back():
    buffer = JitterBuffer(DELAY, frame_samples=240)
    for n in range(4):
        buffer.push(pkt(n, samples=240), n * 240)
    assert drain(buffer, 100_000) == [frame(n, 240) for n in range(4)]
    assert buffer.stats.lost == 0


def test_a_lost_30_ms_packet_is_one_none():
    buffer = JitterBuffer(DELAY, frame_samples=240)
    for n in (0, 2):
        buffer.push(pkt(n, samples=240), n * 240)
    assert buffer.pop_due(100_000) == [frame(0, 240), None, frame(2, 240)]


def test_packets_of_mixed_sizes_use_their_own_length():
    buffer = JitterBuffer(DELAY)
    buffer.push(RtpPacket(0, 0, 0, 1, b"a" * 240), 0)
    buffer.push(RtpPacket(0, 1, 240, 1, b"b" * 160), 240)
    buffer.push(RtpPacket(0, 2, 400, 1, b"c" * 80), 400)
    assert buffer.pop_due(DELAY + 239) == [b"a" * 240]
    assert buffer.next_due() == DELAY + 240
    assert buffer.pop_due(DELAY + 400) == [b"b" * 160, b"c" * 80]
    assert buffer.stats.lost == 0


def test_a_small_timestamp_slip_is_not_loss():
    buffer = JitterBuffer(DELAY)
    buffer.push(RtpPacket(0, 0, 0, 1, b"a" * 160), 0)
    buffer.push(RtpPacket(0, 1, 200, 1, b"b" * 160), 200)  # 40 samples skipped: less than half a frame
    assert buffer.pop_due(10_000) == [b"a" * 160, b"b" * 160]


def test_a_flood_never_grows_past_max_packets():
    buffer = JitterBuffer(DELAY, max_packets=10)
    for n in range(40):  # 40 frames in no time: a burst
        buffer.push(pkt(n), 0)
        assert len(buffer) <= 10
    assert buffer.stats.overflow == 30
    assert buffer.pop_due(100_000) == [frame(n) for n in range(30, 40)]  # the oldest went


def test_an_overflow_drop_after_playout_began_is_concealed():
    buffer = JitterBuffer(DELAY, max_packets=3)
    buffer.push(pkt(0), 0)
    assert buffer.pop_due(DELAY) == [frame(0)]
    for n in range(1, 5):
        buffer.push(pkt(n), 200)
    assert buffer.pop_due(100_000) == [None, frame(2), frame(3), frame(4)]
    assert buffer.stats.overflow == 1 and buffer.stats.lost == 1


def test_flush_returns_everything_in_order():
    buffer = JitterBuffer(DELAY)
    for n in (0, 1, 3):
        buffer.push(pkt(n), n * 160)
    assert buffer.pop_due(DELAY) == [frame(0)]
    assert buffer.flush() == [frame(1), None, frame(3)]
    assert len(buffer) == 0 and buffer.flush() == []
    buffer.push(pkt(2), 0)
    assert buffer.stats.late == 1


# --- jitter and stats ---------------------------------------------------------------------------------------


def test_jitter_is_zero_for_a_steady_stream():
    buffer = JitterBuffer(DELAY)
    steady(buffer, 50)
    assert buffer.stats.jitter == 0.0


def test_jitter_follows_rfc_3550():
    buffer = JitterBuffer(DELAY)
    arrivals = [0, 200, 320, 500, 640]
    for n, at in enumerate(arrivals):
        buffer.push(pkt(n), at)
    expected = 0.0
    for n in range(1, len(arrivals)):
        d = abs((arrivals[n] - arrivals[n - 1]) - 160)
        expected += (d - expected) / 16
    assert buffer.stats.jitter == pytest.approx(expected)


def test_jitter_converges_on_the_mean_deviation():
    rng = random.Random(1)
    buffer = JitterBuffer(1600, max_packets=500)
    for n in range(2000):
        buffer.push(pkt(n), n * 160 + rng.randint(0, 80))
        buffer.pop_due(n * 160)
    # |D| of two independent uniform(0, 80) delays averages 80/3
    assert 18 < buffer.stats.jitter < 36
    assert buffer.stats.late == 0


def test_stats_is_a_frozen_snapshot():
    buffer = JitterBuffer(DELAY)
    before = buffer.stats
    buffer.push(pkt(0), 0)
    assert before.received == 0 and buffer.stats.received == 1
    with pytest.raises(AttributeError):
        before.received = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((-1,), {}),
        ((0, 0), {}),
        ((0, 160, 0), {}),
        ((0,), {"max_gap_frames": 0}),
        ((0,), {"max_jump_samples": 0}),
    ],
)
def test_bad_settings_are_refused(args, kwargs):
    with pytest.raises(ValueError):
        JitterBuffer(*args, **kwargs)


def test_random_loss_reorder_and_duplication_keep_the_books():
    rng = random.Random(7)
    buffer = JitterBuffer(800, max_packets=200)
    arrivals = []
    for n in range(250):
        if rng.random() < 0.05:
            continue  # lost
        for _ in range(2 if rng.random() < 0.03 else 1):
            arrivals.append((n * 160 + rng.randint(0, 1200), n))
    out: list[bytes | None] = []
    for at, n in sorted(arrivals):
        out += buffer.pop_due(at)
        buffer.push(pkt(n), at)
    out += buffer.flush()
    stats = buffer.stats
    played = [f[0] for f in out if f is not None]
    assert played == sorted(played)  # in timestamp order
    assert stats.received == len(arrivals)
    assert stats.played == len(played)
    assert stats.received == stats.played + stats.late + stats.duplicates + stats.overflow
    # every slot from the first frame played to the last is played or counted lost, exactly once
    assert stats.played + stats.lost == played[-1] - played[0] + 1
    assert stats.late > 0 and stats.duplicates > 0 and stats.reordered > 0
