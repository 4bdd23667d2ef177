import pytest

from voice.lines.sip_sdp import (
    PCMA,
    PCMU,
    TELEPHONE_EVENT,
    RemoteMedia,
    make_answer,
    make_offer,
    parse_remote,
)


def crlf(text):
    return "".join(line.strip() + "\r\n" for line in text.strip().splitlines())


# What the far ends really send (captured shapes; addresses and ids changed).
BARESIP_ANSWER = crlf("""
    v=0
    o=- 2890844526 2890844527 IN IP4 192.168.1.50
    s=-
    c=IN IP4 192.168.1.50
    t=0 0
    m=audio 10478 RTP/AVP 0 8 101
    b=AS:80
    a=rtpmap:0 PCMU/8000
    a=rtpmap:8 PCMA/8000
    a=rtpmap:101 telephone-event/8000
    a=fmtp:101 0-15
    a=ptime:20
    a=sendrecv
    a=rtcp:10479
    a=label:1
    a=ssrc:3557213926 cname:ed5ecd43-0c1b-4d2e-9f4b-1c8d4f5c2a11
""")

ASTERISK_OFFER = crlf("""
    v=0
    o=- 1717171717 1717171717 IN IP4 10.0.0.5
    s=Asterisk
    c=IN IP4 10.0.0.5
    t=0 0
    m=audio 17234 RTP/AVP 8 0 3 101
    a=rtpmap:8 PCMA/8000
    a=rtpmap:0 PCMU/8000
    a=rtpmap:3 GSM/8000
    a=rtpmap:101 telephone-event/8000
    a=fmtp:101 0-16
    a=ptime:20
    a=maxptime:150
    a=sendrecv
""")

FREESWITCH_OFFER = crlf("""
    v=0
    o=FreeSWITCH 1700000000 1700000001 IN IP4 203.0.113.10
    s=FreeSWITCH
    c=IN IP4 203.0.113.10
    t=0 0
    m=audio 24680 RTP/AVP 9 102 0 8 101 13
    a=rtpmap:9 G722/8000
    a=rtpmap:102 opus/48000/2
    a=fmtp:102 useinbandfec=1; maxaveragebitrate=30000; maxplaybackrate=48000; ptime=20; minptime=10
    a=rtpmap:0 PCMU/8000
    a=rtpmap:8 PCMA/8000
    a=rtpmap:101 telephone-event/8000
    a=fmtp:101 0-16
    a=rtpmap:13 CN/8000
    a=ptime:20
    a=sendrecv
    a=rtcp:24681 IN IP4 203.0.113.10
""")

# FreeSWITCH putting the call on hold (re-INVITE), and an old-style RFC 2543 hold
FREESWITCH_HOLD = FREESWITCH_OFFER.replace("a=sendrecv", "a=sendonly").replace("1700000001", "1700000002")
OLD_HOLD = ASTERISK_OFFER.replace("c=IN IP4 10.0.0.5", "c=IN IP4 0.0.0.0")


# --- our offer ---------------------------------------------------------------------------------------------


def test_the_offer_is_exactly_this():
    assert make_offer("192.0.2.7", 40000, session_id=123456, version=2) == (
        "v=0\r\n"
        "o=callsim 123456 2 IN IP4 192.0.2.7\r\n"
        "s=callsim\r\n"
        "c=IN IP4 192.0.2.7\r\n"
        "t=0 0\r\n"
        "m=audio 40000 RTP/AVP 0 8 101\r\n"
        "a=rtpmap:0 PCMU/8000\r\n"
        "a=rtpmap:8 PCMA/8000\r\n"
        "a=rtpmap:101 telephone-event/8000\r\n"
        "a=fmtp:101 0-16\r\n"
        "a=ptime:20\r\n"
        "a=sendrecv\r\n"
    )


def test_the_offer_can_prefer_alaw_drop_dtmf_and_hold():
    text = make_offer(
        "192.0.2.7", 40000, session_id=1, codecs=(PCMA,), dtmf=False, ptime_ms=30, direction="sendonly"
    )
    assert "m=audio 40000 RTP/AVP 8\r\n" in text
    assert "telephone-event" not in text and "fmtp" not in text
    assert "a=ptime:30\r\n" in text and text.endswith("a=sendonly\r\n")
    assert "o=callsim 1 1 IN IP4" in text  # version defaults to 1


def test_an_ipv6_offer_says_ip6():
    text = make_offer("2001:db8::7", 40000, session_id=1)
    assert "c=IN IP6 2001:db8::7\r\n" in text and "o=callsim 1 1 IN IP6 2001:db8::7\r\n" in text


def test_our_offer_parses_back():
    remote = parse_remote(make_offer("192.0.2.7", 40000, session_id=5, codecs=(PCMA, PCMU)))
    assert remote == RemoteMedia(
        "192.0.2.7", 40000, PCMA, "PCMA", TELEPHONE_EVENT, 20, "sendrecv", ("audio 40000 RTP/AVP 8 0 101",), 0
    )


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"codecs": ()}, "codecs"),
        ({"codecs": (9,)}, "codecs"),
        ({"codecs": (0, 0)}, "codecs"),
        ({"ptime_ms": 0}, "ptime_ms"),
        ({"direction": "both"}, "direction"),
        ({"session_id": -1}, "session_id"),
    ],
)
def test_bad_offers_are_refused(kwargs, reason):
    args = {"session_id": 1, **kwargs}
    with pytest.raises(ValueError, match=reason):
        make_offer("192.0.2.7", 40000, **args)


@pytest.mark.parametrize("address, port", [("", 4000), ("a b", 4000), ("192.0.2.7", 0), ("192.0.2.7", 65536)])
def test_bad_addresses_and_ports_are_refused(address, port):
    with pytest.raises(ValueError):
        make_offer(address, port, session_id=1)


# --- the far end's bodies ----------------------------------------------------------------------------------


def test_baresips_answer():
    remote = parse_remote(BARESIP_ANSWER)
    assert (remote.address, remote.port, remote.payload_type, remote.codec) == (
        "192.168.1.50",
        10478,
        0,
        "PCMU",
    )
    assert (remote.dtmf_payload_type, remote.ptime_ms, remote.direction) == (101, 20, "sendrecv")
    assert not remote.on_hold


def test_asterisks_offer_prefers_alaw():
    remote = parse_remote(ASTERISK_OFFER)
    assert (remote.payload_type, remote.codec, remote.address, remote.port) == (8, "PCMA", "10.0.0.5", 17234)
    assert parse_remote(ASTERISK_OFFER, offered=(PCMU,)).codec == "PCMU"


def test_freeswitchs_offer_skips_what_we_do_not_speak():
    remote = parse_remote(FREESWITCH_OFFER)
    assert (remote.payload_type, remote.codec, remote.dtmf_payload_type) == (0, "PCMU", 101)


def test_bare_newlines_are_accepted():
    assert parse_remote(BARESIP_ANSWER.replace("\r\n", "\n")) == parse_remote(BARESIP_ANSWER)


def test_static_payload_types_need_no_rtpmap():
    text = "v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 18 8\n"
    remote = parse_remote(text)
    assert (remote.payload_type, remote.codec, remote.dtmf_payload_type, remote.ptime_ms) == (
        8,
        "PCMA",
        None,
        20,
    )


def test_dynamic_payload_types_are_known_by_name():
    text = (
        "v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 96 97\n"
        "a=rtpmap:96 pcmu/8000\na=rtpmap:97 telephone-event/8000\n"
    )
    remote = parse_remote(text)
    assert (remote.payload_type, remote.codec, remote.dtmf_payload_type) == (96, "PCMU", 97)


def test_a_wideband_namesake_is_not_g711():
    text = "v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 96 0\na=rtpmap:96 PCMU/16000\n"
    assert parse_remote(text).payload_type == 0


def test_the_media_level_connection_wins():
    text = "v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 0\nc=IN IP4 10.2.2.2\n"
    assert parse_remote(text).address == "10.2.2.2"


def test_a_multicast_ttl_is_dropped():
    assert parse_remote("v=0\nc=IN IP4 224.2.1.1/127\nm=audio 5004 RTP/AVP 0\n").address == "224.2.1.1"


def test_a_session_level_direction_applies_unless_the_media_overrides_it():
    base = "v=0\nc=IN IP4 10.1.1.1\na=sendonly\nm=audio 5004 RTP/AVP 0\n"
    assert parse_remote(base).direction == "sendonly"
    assert parse_remote(base + "a=inactive\n").direction == "inactive"


def test_ptime_is_read_media_level_first():
    base = "v=0\nc=IN IP4 10.1.1.1\na=ptime:40\nm=audio 5004 RTP/AVP 0\n"
    assert parse_remote(base).ptime_ms == 40
    assert parse_remote(base + "a=ptime:30\n").ptime_ms == 30
    assert parse_remote(base.replace("40", "20.0")).ptime_ms == 20


def test_the_first_audio_stream_is_used():
    text = (
        "v=0\nc=IN IP4 10.1.1.1\nm=video 6000 RTP/AVP 96\na=rtpmap:96 H264/90000\n"
        "m=audio 5004 RTP/AVP 8\nm=audio 7000 RTP/AVP 0\n"
    )
    remote = parse_remote(text)
    assert (remote.port, remote.audio_index) == (5004, 1)
    assert remote.m_lines == ("video 6000 RTP/AVP 96", "audio 5004 RTP/AVP 8", "audio 7000 RTP/AVP 0")


@pytest.mark.parametrize(
    "text, direction, on_hold",
    [
        (FREESWITCH_HOLD, "sendonly", True),
        (ASTERISK_OFFER.replace("a=sendrecv", "a=inactive"), "inactive", True),
        (ASTERISK_OFFER.replace("a=sendrecv", "a=recvonly"), "recvonly", False),
        (OLD_HOLD, "sendrecv", True),
        (ASTERISK_OFFER.replace("m=audio 17234", "m=audio 0"), "sendrecv", True),
        (ASTERISK_OFFER.replace("a=sendrecv\r\n", ""), "sendrecv", False),
    ],
)
def test_hold_is_recognised(text, direction, on_hold):
    remote = parse_remote(text)
    assert (remote.direction, remote.on_hold) == (direction, on_hold)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("v=0\nc=IN IP4 10.1.1.1\nm=video 6000 RTP/AVP 96\n", r"no audio m-line \(media: video\)"),
        ("v=0\nc=IN IP4 10.1.1.1\n", r"no audio m-line \(media: none\)"),
        ("", "no audio m-line"),
        (
            FREESWITCH_OFFER.replace(" 0 8 101", " 101"),
            "no common codec: they offered G722/8000 \\(9\\), opus",
        ),
        (
            "v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 96\n",
            r"they offered \? \(96\); we support PCMU, PCMA",
        ),
        (ASTERISK_OFFER.replace("c=IN IP4 10.0.0.5\r\n", ""), "missing connection address"),
        (ASTERISK_OFFER.replace("c=IN IP4 10.0.0.5", "c=IN IP4"), "has no address"),
        (ASTERISK_OFFER.replace("17234", "17234/2"), "bad port '17234/2'"),
        (ASTERISK_OFFER.replace("17234", "70000"), "bad port '70000'"),
        (ASTERISK_OFFER.replace("17234", "-5"), "bad port '-5'"),
        ("v=0\nc=IN IP4 10.1.1.1\nm=audio 5004\n", "needs media, port and protocol"),
        (ASTERISK_OFFER.replace("a=ptime:20", "a=ptime:fast"), "bad ptime 'fast'"),
        (ASTERISK_OFFER.replace("a=ptime:20", "a=ptime:0"), "bad ptime '0'"),
        (ASTERISK_OFFER.replace("a=rtpmap:3 GSM", "a=rtpmap:x GSM"), "unreadable SDP"),
        (ASTERISK_OFFER.replace("v=0", "v=zero"), "unreadable SDP"),
    ],
)
def test_bad_bodies_are_refused_with_a_reason(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_remote(text)


def test_only_g711_can_be_offered():
    with pytest.raises(ValueError, match="offered"):
        parse_remote(ASTERISK_OFFER, offered=(9,))
    with pytest.raises(ValueError, match="we support PCMA"):
        parse_remote("v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 0\n", offered=(PCMA,))


# --- our answer --------------------------------------------------------------------------------------------


def test_the_answer_to_asterisk_is_exactly_this():
    answer = make_answer(parse_remote(ASTERISK_OFFER), "192.0.2.7", 40002, session_id=99, version=1)
    assert answer == (
        "v=0\r\n"
        "o=callsim 99 1 IN IP4 192.0.2.7\r\n"
        "s=callsim\r\n"
        "c=IN IP4 192.0.2.7\r\n"
        "t=0 0\r\n"
        "m=audio 40002 RTP/AVP 8 101\r\n"
        "a=rtpmap:8 PCMA/8000\r\n"
        "a=rtpmap:101 telephone-event/8000\r\n"
        "a=fmtp:101 0-16\r\n"
        "a=ptime:20\r\n"
        "a=sendrecv\r\n"
    )


def test_the_answer_mirrors_dynamic_payload_types_and_ptime():
    offer = parse_remote(
        "v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 96 110\na=rtpmap:96 PCMU/8000\n"
        "a=rtpmap:110 telephone-event/8000\na=ptime:30\n"
    )
    answer = make_answer(offer, "192.0.2.7", 40002, session_id=1, version=1)
    assert "m=audio 40002 RTP/AVP 96 110\r\n" in answer
    assert "a=rtpmap:96 PCMU/8000\r\na=rtpmap:110 telephone-event/8000\r\na=fmtp:110 0-16\r\n" in answer
    assert "a=ptime:30\r\n" in answer
    assert parse_remote(answer).payload_type == 96


def test_no_dtmf_offered_none_answered():
    offer = parse_remote("v=0\nc=IN IP4 10.1.1.1\nm=audio 5004 RTP/AVP 0\n")
    answer = make_answer(offer, "192.0.2.7", 40002, session_id=1, version=1)
    assert "m=audio 40002 RTP/AVP 0\r\n" in answer and "telephone-event" not in answer


@pytest.mark.parametrize(
    "text, expected",
    [
        (ASTERISK_OFFER, "sendrecv"),
        (FREESWITCH_HOLD, "recvonly"),
        (ASTERISK_OFFER.replace("a=sendrecv", "a=recvonly"), "sendonly"),
        (ASTERISK_OFFER.replace("a=sendrecv", "a=inactive"), "inactive"),
        (OLD_HOLD, "recvonly"),
        (OLD_HOLD.replace("a=sendrecv", "a=recvonly"), "inactive"),
        (OLD_HOLD.replace("a=sendrecv", "a=inactive"), "inactive"),
    ],
)
def test_the_answer_mirrors_the_direction(text, expected):
    answer = make_answer(parse_remote(text), "192.0.2.7", 40002, session_id=1, version=1)
    assert answer.endswith(f"a={expected}\r\n")
    assert parse_remote(answer).direction == expected


def test_the_answer_direction_can_be_forced():
    answer = make_answer(
        parse_remote(ASTERISK_OFFER), "192.0.2.7", 40002, session_id=1, version=3, direction="sendonly"
    )
    assert answer.endswith("a=sendonly\r\n") and "o=callsim 1 3 IN" in answer
    with pytest.raises(ValueError, match="direction"):
        make_answer(parse_remote(ASTERISK_OFFER), "192.0.2.7", 40002, session_id=1, version=1, direction="x")


def test_the_answer_rejects_the_other_streams_in_place():
    offer = parse_remote(
        "v=0\nc=IN IP4 10.1.1.1\nm=video 6000 RTP/AVP 96 97\na=rtpmap:96 H264/90000\n"
        "m=audio 5004 RTP/AVP 0\nm=application 7000 UDP/BFCP *\n"
    )
    answer = make_answer(offer, "192.0.2.7", 40002, session_id=1, version=1)
    m_lines = [line for line in answer.split("\r\n") if line.startswith("m=")]
    assert m_lines == ["m=video 0 RTP/AVP 96 97", "m=audio 40002 RTP/AVP 0", "m=application 0 UDP/BFCP *"]


def test_a_rejected_audio_stream_is_answered_rejected():
    answer = make_answer(
        parse_remote(ASTERISK_OFFER.replace("m=audio 17234", "m=audio 0")),
        "192.0.2.7",
        40002,
        session_id=1,
        version=1,
    )
    assert "m=audio 0 RTP/AVP 8 101\r\n" in answer


def test_a_hand_built_remote_media_can_be_answered():
    remote = RemoteMedia("10.1.1.1", 5004, PCMU, "PCMU", None, 20, "sendrecv")
    answer = make_answer(remote, "192.0.2.7", 40002, session_id=1, version=1)
    assert "m=audio 40002 RTP/AVP 0\r\n" in answer


def test_our_offer_and_baresips_answer():
    offer = make_offer("192.0.2.7", 40000, session_id=1)
    assert parse_remote(offer).codec == "PCMU"
    remote = parse_remote(BARESIP_ANSWER)
    assert (remote.address, remote.port, remote.payload_type, remote.dtmf_payload_type) == (
        "192.168.1.50",
        10478,
        PCMU,
        TELEPHONE_EVENT,
    )
