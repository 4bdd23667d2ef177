import struct

import pytest

from voice.lines.rtp_packet import (
    DTMF_EVENTS,
    DtmfEvent,
    RtpPacket,
    RtpSender,
    dtmf_packets,
    is_rtcp,
    parse_dtmf,
    parse_rtp,
)


def header(*, first=0x80, second=0, seq=1, ts=2, ssrc=3):
    return struct.pack("!BBHII", first, second, seq, ts, ssrc)


# --- encode and parse --------------------------------------------------------------------------------------


def test_encode_writes_the_rfc_3550_header():
    data = RtpPacket(0, 0x1234, 0xDEADBEEF, 0x01020304, b"\xff" * 160, marker=True).encode()
    assert data[:12] == bytes.fromhex("80 80 1234 deadbeef 01020304")
    assert data[12:] == b"\xff" * 160
    assert len(data) == 172


def test_encode_without_marker_keeps_the_payload_type():
    assert RtpPacket(8, 0, 0, 0, b"").encode()[1] == 8


@pytest.mark.parametrize("marker", [False, True])
def test_parse_inverts_encode(marker):
    packet = RtpPacket(101, 65535, 2**32 - 1, 2**32 - 1, b"abc", marker=marker)
    assert parse_rtp(packet.encode()) == packet


@pytest.mark.parametrize(
    "field, value",
    [("payload_type", 128), ("sequence", 65536), ("timestamp", 2**32), ("ssrc", -1)],
)
def test_packet_fields_out_of_range_are_refused(field, value):
    args = {"payload_type": 0, "sequence": 0, "timestamp": 0, "ssrc": 0, "payload": b"", field: value}
    with pytest.raises(ValueError, match=field):
        RtpPacket(**args)


def test_parse_skips_csrcs():
    data = header(first=0x82) + b"\x00\x00\x00\x01\x00\x00\x00\x02" + b"audio"
    packet = parse_rtp(data)
    assert packet.payload == b"audio"
    assert (packet.sequence, packet.timestamp, packet.ssrc) == (1, 2, 3)


def test_parse_skips_a_header_extension():
    extension = b"\xbe\xde\x00\x02" + b"\x10\xaa\x00\x00" + b"\x00\x00\x00\x00"  # RFC 8285 one-byte form
    assert parse_rtp(header(first=0x90) + extension + b"audio").payload == b"audio"


def test_parse_skips_csrcs_then_an_extension():
    data = header(first=0x91) + b"\x00\x00\x00\x09" + b"\x00\x01\x00\x01" + b"\x00" * 4 + b"pay"
    assert parse_rtp(data).payload == b"pay"


def test_parse_strips_padding():
    assert parse_rtp(header(first=0xA0) + b"audio" + b"\x00\x00\x03").payload == b"audio"


def test_padding_may_take_the_whole_payload():
    assert parse_rtp(header(first=0xA0) + b"\x00\x00\x00\x04").payload == b""


def test_parse_reads_marker_and_payload_type():
    packet = parse_rtp(header(second=0x80 | 8) + b"x")
    assert packet.marker and packet.payload_type == 8


def test_an_empty_payload_parses():
    assert parse_rtp(header()).payload == b""


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "shorter than the 12-byte header"),
        (header()[:11], "11 bytes is shorter"),
        (header(first=0x40), "version 1"),
        (header(first=0x00), "version 0"),
        (header(first=0xC0), "version 3"),
        (header(first=0x81), "1 CSRCs need 16 bytes"),
        (header(first=0x8F) + b"\x00" * 56, "15 CSRCs need 72 bytes"),
        (header(first=0x90) + b"\x00\x00", "header extension starts"),
        (header(first=0x90) + b"\x00\x00\x00\x02" + b"\x00" * 4, "extension of 2 words"),
        (header(first=0xA0) + b"ab\x00", "padding count is 0"),
        (header(first=0xA0) + b"ab\x04", "padding of 4 bytes is longer than the 3"),
        (
            header(first=0xA0),
            "padding of 3 bytes is longer than the 0",
        ),  # the SSRC's low byte read as a count
    ],
)
def test_malformed_packets_are_refused_with_a_reason(data, reason):
    with pytest.raises(ValueError, match=reason):
        parse_rtp(data)


def test_padding_cannot_eat_into_the_header():
    # 12-byte header whose last byte (the SSRC's low byte) reads as a padding count of 1: no payload to pad
    with pytest.raises(ValueError, match="padding"):
        parse_rtp(header(first=0xA0, ssrc=1))


def test_parse_accepts_bytearray_and_memoryview():
    data = header() + b"xyz"
    assert parse_rtp(bytearray(data)).payload == b"xyz"
    assert parse_rtp(memoryview(data)).payload == b"xyz"  # type: ignore[arg-type]


# --- RTCP demultiplexing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("packet_type", [200, 201, 202, 203, 204, 205, 206, 207])
def test_rtcp_is_recognised(packet_type):
    assert is_rtcp(bytes([0x81, packet_type, 0, 7]) + b"\x00" * 28)


@pytest.mark.parametrize(
    "data",
    [
        RtpPacket(0, 1, 2, 3, b"x").encode(),
        RtpPacket(8, 1, 2, 3, b"x", marker=True).encode(),  # second byte 136
        RtpPacket(101, 1, 2, 3, b"x", marker=True).encode(),  # second byte 229: above the RTCP range
        bytes([0x40, 200, 0, 1]),  # version 1
        b"\x80",
        b"",
    ],
)
def test_rtp_and_junk_are_not_rtcp(data):
    assert not is_rtcp(data)


# --- the sender --------------------------------------------------------------------------------------------


def test_sender_numbers_packets_and_advances_the_timestamp():
    sender = RtpSender(0, ssrc=0xCAFE, first_sequence=10, first_timestamp=1000)
    first = parse_rtp(sender.packet(b"\xff" * 160, 160, marker=True))
    second = parse_rtp(sender.packet(b"\xff" * 160, 160))
    assert (first.sequence, first.timestamp, first.marker, first.ssrc) == (10, 1000, True, 0xCAFE)
    assert (second.sequence, second.timestamp, second.marker) == (11, 1160, False)
    assert sender.sent == 2
    assert (sender.sequence, sender.timestamp) == (12, 1320)


def test_sender_wraps_sequence_and_timestamp():
    sender = RtpSender(8, ssrc=1, first_sequence=65535, first_timestamp=2**32 - 100)
    first = parse_rtp(sender.packet(b"a" * 160, 160))
    second = parse_rtp(sender.packet(b"a" * 160, 160))
    assert (first.sequence, second.sequence) == (65535, 0)
    assert (first.timestamp, second.timestamp) == (2**32 - 100, 60)
    assert first.payload_type == 8


def test_skip_moves_the_timestamp_without_sending():
    sender = RtpSender(0, ssrc=1, first_sequence=0, first_timestamp=0)
    sender.packet(b"a" * 160, 160)
    sender.skip(800)
    packet = parse_rtp(sender.packet(b"a" * 160, 160, marker=True))
    assert (packet.sequence, packet.timestamp) == (1, 960)
    assert sender.sent == 2


def test_skip_wraps():
    sender = RtpSender(0, ssrc=1, first_sequence=0, first_timestamp=2**32 - 1)
    sender.skip(2)
    assert sender.timestamp == 1


def test_payload_length_need_not_match_samples():
    sender = RtpSender(0, ssrc=1, first_sequence=0, first_timestamp=0)
    sender.packet(b"a" * 240, 240)
    assert sender.timestamp == 240


@pytest.mark.parametrize(
    "kwargs",
    [
        {"payload_type": 128},
        {"ssrc": 2**32},
        {"first_sequence": -1},
        {"first_sequence": 65536},
        {"first_timestamp": 2**32},
    ],
)
def test_sender_refuses_out_of_range_starts(kwargs):
    args = {"payload_type": 0, "ssrc": 1, "first_sequence": 0, "first_timestamp": 0, **kwargs}
    payload_type = args.pop("payload_type")
    with pytest.raises(ValueError):
        RtpSender(payload_type, **args)


def test_negative_samples_are_refused():
    sender = RtpSender(0, ssrc=1, first_sequence=0, first_timestamp=0)
    with pytest.raises(ValueError):
        sender.packet(b"", -1)
    with pytest.raises(ValueError):
        sender.skip(-160)


# --- DTMF ---------------------------------------------------------------------------------------------------


def test_a_dtmf_event_follows_rfc_4733():
    sender = RtpSender(0, ssrc=7, first_sequence=100, first_timestamp=5000)
    packets = [parse_rtp(p) for p in dtmf_packets(sender, "5", 800)]
    events = [parse_dtmf(p.payload) for p in packets]
    # 160, 320, 480, 640 growing; then the final 800 three times with E
    assert [e.duration for e in events] == [160, 320, 480, 640, 800, 800, 800]
    assert [e.end for e in events] == [False] * 4 + [True] * 3
    assert {e.digit for e in events} == {"5"} and {e.volume for e in events} == {10}
    assert [p.marker for p in packets] == [True] + [False] * 6
    assert {p.timestamp for p in packets} == {5000}
    assert [p.sequence for p in packets] == list(range(100, 107))
    assert {p.payload_type for p in packets} == {101} and {p.ssrc for p in packets} == {7}
    assert packets[0].payload == bytes([5, 10, 0, 160])
    assert packets[-1].payload == bytes([5, 0x80 | 10, 0x03, 0x20])


def test_audio_resumes_after_the_tone():
    sender = RtpSender(0, ssrc=7, first_sequence=0, first_timestamp=0)
    sender.packet(b"a" * 160, 160)
    dtmf_packets(sender, "#", 800)
    after = parse_rtp(sender.packet(b"a" * 160, 160))
    assert (after.sequence, after.timestamp, after.payload_type) == (8, 960, 0)
    assert sender.sent == 9


def test_a_short_event_is_only_its_end_packets():
    sender = RtpSender(0, ssrc=7, first_sequence=0, first_timestamp=0)
    packets = [parse_rtp(p) for p in dtmf_packets(sender, "*", 160)]
    assert [parse_dtmf(p.payload) for p in packets] == [DtmfEvent("*", True, 10, 160)] * 3
    assert [p.marker for p in packets] == [True, False, False]


def test_a_duration_off_the_packet_grid_ends_exactly():
    sender = RtpSender(0, ssrc=7, first_sequence=0, first_timestamp=0)
    events = [parse_dtmf(parse_rtp(p).payload) for p in dtmf_packets(sender, "D", 500, volume=0)]
    assert [e.duration for e in events] == [160, 320, 480, 500, 500, 500]
    assert sender.timestamp == 500


def test_dtmf_payload_type_and_packet_size_are_settable():
    sender = RtpSender(8, ssrc=7, first_sequence=0, first_timestamp=0)
    packets = [parse_rtp(p) for p in dtmf_packets(sender, "1", 480, payload_type=96, packet_samples=240)]
    assert {p.payload_type for p in packets} == {96}
    assert [parse_dtmf(p.payload).duration for p in packets] == [240, 480, 480, 480]


def test_dtmf_wraps_the_sequence():
    sender = RtpSender(0, ssrc=7, first_sequence=65534, first_timestamp=0)
    assert [parse_rtp(p).sequence for p in dtmf_packets(sender, "0", 160)] == [65534, 65535, 0]


@pytest.mark.parametrize("digit", list("0123456789*#ABCD"))
def test_every_dtmf_digit_round_trips(digit):
    assert parse_dtmf(DtmfEvent(digit, False, 10, 160).encode()).digit == digit


def test_event_codes_are_rfc_4733s():
    assert [DTMF_EVENTS[d] for d in "0123456789*#ABCD"] == list(range(16))


@pytest.mark.parametrize(
    "digit, duration, kwargs",
    [
        ("E", 160, {}),
        ("a", 160, {}),
        ("", 160, {}),
        ("1", 0, {}),
        ("1", 65536, {}),
        ("1", 160, {"volume": 64}),
        ("1", 160, {"payload_type": 128}),
        ("1", 160, {"packet_samples": 0}),
    ],
)
def test_bad_dtmf_requests_are_refused(digit, duration, kwargs):
    sender = RtpSender(0, ssrc=7, first_sequence=0, first_timestamp=0)
    with pytest.raises(ValueError):
        dtmf_packets(sender, digit, duration, **kwargs)
    assert sender.sent == 0 and sender.timestamp == 0


@pytest.mark.parametrize(
    "payload, reason", [(b"\x01\x0a", "2 bytes"), (bytes([16, 10, 0, 160]), "16 is not a DTMF digit")]
)
def test_bad_telephone_event_payloads_are_refused(payload, reason):
    with pytest.raises(ValueError, match=reason):
        parse_dtmf(payload)
