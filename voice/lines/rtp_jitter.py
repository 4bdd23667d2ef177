"""A receive jitter buffer with a fixed playout delay, Sans-I/O: time is the line's clock counted in samples
at the codec rate (the caller converts once at the edge), so that tests replay any arrival pattern exactly.

A packet is due ``delay_samples`` after the arrival of the packet that anchored the stream, plus its
timestamp's distance from that packet's; the line sleeps until :meth:`JitterBuffer.next_due` and plays what
:meth:`JitterBuffer.pop_due` hands out, concealing a ``None`` (a lost packet) with silence."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import NamedTuple

from voice.lines.rtp_packet import RtpPacket

_TS_MOD = 1 << 32
_TS_HALF = 1 << 31
_SEQ_MOD = 1 << 16
_SEQ_HALF = 1 << 15


@dataclass(frozen=True)
class JitterStats:
    """What the buffer saw, for the line's report. ``lost`` counts the slots concealed with ``None``: a
    late packet's slot is concealed too, so it counts in both ``late`` and ``lost``; a lost slot that
    :meth:`JitterBuffer.pop_due` already went past (the buffer was empty then) is counted but not handed out,
    as the line has already filled it."""

    received: int = 0  # every packet pushed, duplicates and late ones included
    played: int = 0  # frames handed out (not the Nones)
    late: int = 0  # arrived after their slot was played: dropped
    lost: int = 0  # slots without a packet: handed out as None, or passed by pop_due with nothing buffered
    duplicates: int = 0  # a sequence number or timestamp already received: dropped
    overflow: int = 0  # the oldest dropped because more than max_packets were buffered
    reordered: int = 0  # arrived after a packet with a higher sequence number
    jitter: float = 0.0  # RFC 3550 A.8 interarrival jitter, in samples


class _Frame(NamedTuple):
    due: int  # the line's clock sample at which the frame starts
    epoch: int  # which anchoring placed it: slots between frames of one epoch that are missing are lost
    ts: int  # the unwrapped RTP timestamp
    samples: int
    payload: bytes


def _unwrap(value: int, reference: int, modulus: int, half: int) -> int:
    """``value`` (mod ``modulus``) as the integer nearest ``reference``."""
    return reference + ((value - reference + half) % modulus) - half


class JitterBuffer:
    """Packets of one call's receive direction, held until their playout time. A payload's length is its
    slot's length in samples (G.711: a byte a sample), so 20 ms and 30 ms packets both work."""

    def __init__(
        self,
        delay_samples: int,
        frame_samples: int = 160,
        max_packets: int = 50,
        *,
        max_gap_frames: int = 50,
        max_jump_samples: int = 16000,
    ) -> None:
        if delay_samples < 0:
            raise ValueError(f"delay_samples={delay_samples} is negative")
        if frame_samples <= 0:
            raise ValueError(f"frame_samples={frame_samples} is not positive")
        if max_packets < 1:
            raise ValueError(f"max_packets={max_packets} is less than 1")
        if max_gap_frames < 1 or max_jump_samples < 1:
            raise ValueError("max_gap_frames and max_jump_samples must be positive")
        self.delay_samples = delay_samples
        self.frame_samples = frame_samples
        self.max_packets = max_packets
        # a longer gap forward (silence suppression, a restarted sender) is not loss: it re-anchors
        self._max_gap = max_gap_frames * frame_samples
        self._max_jump = max_jump_samples  # as far back, a timestamp re-anchors instead of being late
        self._frames: list[_Frame] = []
        self._ssrc: int | None = None
        self._epoch = 0
        self._base = 0  # due time of the anchor timestamp
        self._anchor_ts = 0
        self._highest_ts = 0  # unwrapped, on this SSRC
        self._highest_seq = 0  # unwrapped, on this SSRC
        self._seen: dict[int, None] = {}  # recent unwrapped sequence numbers, oldest first
        self._cursor: int | None = None  # end of the last slot handed out
        self._cursor_epoch = -1
        self._last_pop: int | None = None
        self._transit: int | None = None
        self._jitter = 0.0
        self._counts = dict.fromkeys(("received", "played", "late", "lost", "duplicates", "overflow"), 0)
        self._counts["reordered"] = 0

    @property
    def stats(self) -> JitterStats:
        return JitterStats(**self._counts, jitter=self._jitter)

    def __len__(self) -> int:
        return len(self._frames)

    # --- arrival ------------------------------------------------------------------------------------------

    def push(self, packet: RtpPacket, now: int) -> None:
        """Take a packet received at ``now`` (samples on the line's clock)."""
        self._counts["received"] += 1
        if packet.ssrc != self._ssrc:
            self._new_source(packet, now)
        seq = _unwrap(packet.sequence, self._highest_seq, _SEQ_MOD, _SEQ_HALF)
        if seq in self._seen:
            self._counts["duplicates"] += 1
            return
        ts = _unwrap(packet.timestamp, self._highest_ts, _TS_MOD, _TS_HALF)
        jump = ts - self._highest_ts
        if jump > self._max_gap or -jump > self._max_jump:
            self._anchor(ts, now)
            self._transit = None  # a new timeline: the old transit says nothing about this one
        elif packet.marker and not self._frames:
            self._anchor(ts, now)  # a talkspurt starts: resynchronise to its arrival
        self._measure_jitter(ts, now)
        self._remember(seq)
        due = self._base + ts - self._anchor_ts
        if (self._cursor is not None and due < self._cursor) or (
            self._last_pop is not None and due <= self._last_pop
        ):
            self._counts["late"] += 1
            return
        frame = _Frame(due, self._epoch, ts, len(packet.payload), packet.payload)
        if any(f.epoch == frame.epoch and f.ts == ts for f in self._frames):
            self._counts["duplicates"] += 1
            return
        bisect.insort(self._frames, frame)
        if len(self._frames) > self.max_packets:
            self._frames.pop(0)
            self._counts["overflow"] += 1
        self._highest_ts = max(self._highest_ts, ts)

    def _new_source(self, packet: RtpPacket, now: int) -> None:
        self._ssrc = packet.ssrc
        self._highest_seq = packet.sequence
        self._seen.clear()
        self._transit = None
        self._anchor(packet.timestamp, now)

    def _anchor(self, ts: int, now: int) -> None:
        """Start a new epoch with ``ts`` due ``delay`` from now, but never before what is played or held."""
        horizon = now + self.delay_samples
        if self._cursor is not None:
            horizon = max(horizon, self._cursor)
        if self._last_pop is not None:
            horizon = max(horizon, self._last_pop + 1)
        if self._frames:
            last = self._frames[-1]
            horizon = max(horizon, last.due + last.samples)
        self._epoch += 1
        self._base = horizon
        self._anchor_ts = ts
        self._highest_ts = ts

    def _remember(self, seq: int) -> None:
        if seq < self._highest_seq:
            self._counts["reordered"] += 1
        self._highest_seq = max(self._highest_seq, seq)
        self._seen[seq] = None
        if len(self._seen) > 4 * self.max_packets:
            del self._seen[next(iter(self._seen))]

    def _measure_jitter(self, ts: int, now: int) -> None:
        """RFC 3550 A.8: J += (|D| - J) / 16, D the change in transit time between packets as they arrive."""
        transit = now - ts
        if self._transit is not None:
            self._jitter += (abs(transit - self._transit) - self._jitter) / 16
        self._transit = transit

    # --- playout ------------------------------------------------------------------------------------------

    def _missing(self, head: _Frame) -> int:
        """The length of the lost slot at the cursor before ``head``, or 0: a gap of half a frame or more in
        one epoch is concealed a frame at a time; a smaller one, or one across epochs, is not loss."""
        if self._cursor is None or head.epoch != self._cursor_epoch:
            return 0
        gap = head.due - self._cursor
        if gap * 2 < self.frame_samples or gap > self._max_gap:
            return 0
        return min(gap, self.frame_samples)

    def next_due(self) -> int | None:
        """The clock sample at which the next frame (or lost slot) is due; None when nothing is buffered."""
        if not self._frames:
            return None
        head = self._frames[0]
        if self._missing(head):
            assert self._cursor is not None
            return self._cursor
        return head.due

    def _take(self, now: int | None) -> list[bytes | None]:
        out: list[bytes | None] = []
        while self._frames:
            head = self._frames[0]
            missing = self._missing(head)
            if missing:
                assert self._cursor is not None
                passed = self._last_pop is not None and self._cursor <= self._last_pop
                if not passed and now is not None and self._cursor > now:
                    break
                if not passed:  # a slot the line already went past with nothing to play stays silent
                    out.append(None)
                self._counts["lost"] += 1
                self._cursor += missing
                continue
            if now is not None and head.due > now:
                break
            self._frames.pop(0)
            out.append(head.payload)
            self._counts["played"] += 1
            self._cursor = (
                head.due + head.samples
                if self._cursor is None
                else max(self._cursor, head.due + head.samples)
            )
            self._cursor_epoch = head.epoch
        return out

    def pop_due(self, now: int) -> list[bytes | None]:
        """Every frame due at or before ``now``, in order, a lost one as None at its slot. A packet due at
        or before ``now`` that arrives after this call is late."""
        out = self._take(now)
        self._last_pop = now if self._last_pop is None else max(self._last_pop, now)
        return out

    def flush(self) -> list[bytes | None]:
        """Everything still buffered, in order, lost slots between frames as None (the call is over)."""
        return self._take(None)
