"""RTP packets (RFC 3550) and DTMF events (RFC 4733), Sans-I/O: bytes in, bytes out, no sockets and no
clock. The SIP line sends G.711 through :class:`RtpSender` and parses what arrives with :func:`parse_rtp`;
the caller supplies the random SSRC, sequence and timestamp so that tests are deterministic."""

from __future__ import annotations

import struct
from dataclasses import dataclass

RTP_VERSION = 2
HEADER_SIZE = 12
TELEPHONE_EVENT = 101  # the usual dynamic payload type of RFC 4733 events (what baresip and Asterisk offer)

_HEADER = struct.Struct("!BBHII")
_EVENT = struct.Struct("!BBH")
_SEQ_MOD = 1 << 16
_TS_MOD = 1 << 32

# RFC 4733 §3.2: DTMF event codes
DTMF_EVENTS: dict[str, int] = {**{str(d): d for d in range(10)}, "*": 10, "#": 11, "A": 12, "B": 13}
DTMF_EVENTS.update({"C": 14, "D": 15})
_EVENT_DIGITS = {code: digit for digit, code in DTMF_EVENTS.items()}


def _check_range(name: str, value: int, upper: int) -> None:
    if not 0 <= value < upper:
        raise ValueError(f"{name}={value} is not in 0..{upper - 1}")


@dataclass(frozen=True)
class RtpPacket:
    """One RTP packet as the line sees it: CSRCs, extensions and padding are dropped on parsing."""

    payload_type: int
    sequence: int
    timestamp: int
    ssrc: int
    payload: bytes
    marker: bool = False

    def __post_init__(self) -> None:
        _check_range("payload_type", self.payload_type, 128)
        _check_range("sequence", self.sequence, _SEQ_MOD)
        _check_range("timestamp", self.timestamp, _TS_MOD)
        _check_range("ssrc", self.ssrc, _TS_MOD)

    def encode(self) -> bytes:
        """The 12-byte header (version 2, no padding, extension or CSRCs) and the payload."""
        second = (0x80 if self.marker else 0) | self.payload_type
        return _HEADER.pack(RTP_VERSION << 6, second, self.sequence, self.timestamp, self.ssrc) + self.payload


def is_rtcp(data: bytes) -> bool:
    """Whether a datagram on the RTP port is RTCP (RFC 5761 §4 demultiplexing: version 2 and a second byte
    in 192..223, which holds SR 200, RR 201, SDES 202, BYE 203, APP 204 and the feedback types), so that
    the line can ignore it instead of failing to parse it as audio."""
    return len(data) >= 2 and data[0] >> 6 == RTP_VERSION and 192 <= data[1] <= 223


def parse_rtp(data: bytes) -> RtpPacket:
    """Parse an RTP datagram, skipping CSRCs, a header extension and padding. ValueError says what is
    wrong, for the line to log and drop the datagram."""
    size = len(data)
    if size < HEADER_SIZE:
        raise ValueError(f"RTP packet of {size} bytes is shorter than the {HEADER_SIZE}-byte header")
    first, second, sequence, timestamp, ssrc = _HEADER.unpack_from(data)
    version = first >> 6
    if version != RTP_VERSION:
        raise ValueError(f"RTP version {version}, expected {RTP_VERSION}")
    csrc_count = first & 0x0F
    offset = HEADER_SIZE + 4 * csrc_count
    if offset > size:
        raise ValueError(f"{csrc_count} CSRCs need {offset} bytes but the packet has {size}")
    if first & 0x10:
        if offset + 4 > size:
            raise ValueError(f"header extension starts at byte {offset} past the packet's {size} bytes")
        (words,) = struct.unpack_from("!H", data, offset + 2)
        offset += 4 + 4 * words
        if offset > size:
            raise ValueError(
                f"header extension of {words} words runs to byte {offset} of a {size}-byte packet"
            )
    end = size
    if first & 0x20:
        padding = data[-1]
        if padding == 0:
            raise ValueError("padding bit set but the padding count is 0")
        if padding > size - offset:
            raise ValueError(
                f"padding of {padding} bytes is longer than the {size - offset} bytes after the header"
            )
        end -= padding
    return RtpPacket(
        payload_type=second & 0x7F,
        sequence=sequence,
        timestamp=timestamp,
        ssrc=ssrc,
        payload=bytes(data[offset:end]),
        marker=bool(second & 0x80),
    )


class RtpSender:
    """One outgoing RTP stream: numbers the packets and keeps the timestamp on the sample clock, so that
    silence the line does not send (:meth:`skip`) still moves the timestamp on."""

    def __init__(self, payload_type: int, *, ssrc: int, first_sequence: int, first_timestamp: int) -> None:
        _check_range("payload_type", payload_type, 128)
        _check_range("ssrc", ssrc, _TS_MOD)
        _check_range("first_sequence", first_sequence, _SEQ_MOD)
        _check_range("first_timestamp", first_timestamp, _TS_MOD)
        self.payload_type = payload_type
        self.ssrc = ssrc
        self._sequence = first_sequence
        self._timestamp = first_timestamp
        self._sent = 0

    @property
    def sequence(self) -> int:
        """The sequence number of the next packet."""
        return self._sequence

    @property
    def timestamp(self) -> int:
        """The timestamp of the next packet (its first sample)."""
        return self._timestamp

    @property
    def sent(self) -> int:
        """Packets made so far, DTMF events included."""
        return self._sent

    def _emit(self, payload_type: int, payload: bytes, timestamp: int, marker: bool) -> bytes:
        data = RtpPacket(payload_type, self._sequence, timestamp, self.ssrc, payload, marker).encode()
        self._sequence = (self._sequence + 1) % _SEQ_MOD
        self._sent += 1
        return data

    def packet(self, payload: bytes, samples: int, *, marker: bool = False) -> bytes:
        """The next packet of audio, ``samples`` long (160 for 20 ms of G.711); marker at a talkspurt's
        start."""
        if samples < 0:
            raise ValueError(f"samples={samples} is negative")
        data = self._emit(self.payload_type, payload, self._timestamp, marker)
        self._timestamp = (self._timestamp + samples) % _TS_MOD
        return data

    def skip(self, samples: int) -> None:
        """Move the timestamp on by ``samples`` not sent (silence suppressed)."""
        if samples < 0:
            raise ValueError(f"samples={samples} is negative")
        self._timestamp = (self._timestamp + samples) % _TS_MOD


@dataclass(frozen=True)
class DtmfEvent:
    """The payload of an RFC 4733 telephone-event packet."""

    digit: str
    end: bool
    volume: int  # -dBm0, 0..63
    duration: int  # samples since the event's timestamp

    def encode(self) -> bytes:
        return _EVENT.pack(DTMF_EVENTS[self.digit], (0x80 if self.end else 0) | self.volume, self.duration)


def parse_dtmf(payload: bytes) -> DtmfEvent:
    """Parse a telephone-event payload (4 bytes; a redundant tail is ignored)."""
    if len(payload) < _EVENT.size:
        raise ValueError(f"telephone-event payload of {len(payload)} bytes, expected {_EVENT.size}")
    code, flags, duration = _EVENT.unpack_from(payload)
    if code not in _EVENT_DIGITS:
        raise ValueError(f"telephone-event {code} is not a DTMF digit (0..15)")
    return DtmfEvent(_EVENT_DIGITS[code], bool(flags & 0x80), flags & 0x3F, duration)


def dtmf_packets(
    sender: RtpSender,
    digit: str,
    duration_samples: int,
    *,
    payload_type: int = TELEPHONE_EVENT,
    volume: int = 10,
    packet_samples: int = 160,
) -> list[bytes]:
    """The packets of one DTMF event on ``sender``'s stream (RFC 4733 §2.5): all at the event's start
    timestamp, the marker on the first, the duration growing by ``packet_samples`` a packet, the final
    duration sent three times with the E bit (§2.5.1.4). Send them one every ``packet_samples`` (the three
    end packets may go together); the stream's timestamp then moves on by the event's duration, so that
    audio resumes where the tone ends."""
    if digit not in DTMF_EVENTS:
        raise ValueError(f"DTMF digit {digit!r} is not one of 0-9, *, #, A-D")
    if not 0 < duration_samples <= 0xFFFF:
        raise ValueError(f"duration_samples={duration_samples} is not in 1..65535 (one event segment)")
    _check_range("volume", volume, 64)
    _check_range("payload_type", payload_type, 128)
    if packet_samples <= 0:
        raise ValueError(f"packet_samples={packet_samples} is not positive")
    start = sender.timestamp
    packets: list[bytes] = []
    duration = packet_samples
    while duration < duration_samples:
        event = DtmfEvent(digit, False, volume, duration).encode()
        packets.append(sender._emit(payload_type, event, start, not packets))
        duration += packet_samples
    final = DtmfEvent(digit, True, volume, duration_samples).encode()
    for _ in range(3):
        packets.append(sender._emit(payload_type, final, start, not packets))
    sender.skip(duration_samples)
    return packets
