"""A SIP target's URI, read once and shown without a password."""

from __future__ import annotations

import pytest

from voice.lines.sip_target import SipTarget, parse_sip_uri


def test_the_forms_a_user_writes() -> None:
    assert parse_sip_uri("sip:bot@127.0.0.1:5062") == SipTarget("bot", "127.0.0.1", 5062, "UDP")
    assert parse_sip_uri("sip:100@pbx.example.com;transport=tcp") == SipTarget(
        "100", "pbx.example.com", 5060, "TCP"
    )
    assert parse_sip_uri("sip:127.0.0.1:5070").request_uri == "sip:127.0.0.1:5070;transport=udp"


def test_a_password_in_the_uri_is_never_shown() -> None:
    target = parse_sip_uri("sip:bot:hunter2@127.0.0.1")
    assert "hunter2" not in str(target) and target.user == "bot"
    with pytest.raises(ValueError) as caught:
        parse_sip_uri("sip:bot:hunter2@127.0.0.1;transport=sctp")
    assert "hunter2" not in str(caught.value) and "sctp" in str(caught.value)


@pytest.mark.parametrize("text, why", [("http://x", "not a sip: URI"), ("sip:bot@", "no host"),
                                       ("sip:bot@h;transport=tls", "udp or tcp")])  # fmt: skip
def test_bad_uris(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_sip_uri(text)
