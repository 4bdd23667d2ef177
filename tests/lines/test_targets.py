import pytest

from voice.errors import ConfigError
from voice.lines.targets import parse_target, split_targets


def test_target_syntax():
    assert parse_target("builtin").protocol == "builtin"
    t = parse_target("pcm+ws://127.0.0.1:8765/pcm")
    assert (t.protocol, t.url) == ("pcm", "ws://127.0.0.1:8765/pcm")
    assert parse_target("ws://h:1/x").url == "ws://h:1/x"
    assert str(t) == "pcm+ws://127.0.0.1:8765/pcm"


@pytest.mark.parametrize("bad", ["http://x", "pcm+http://x:1", "sip+ws://x:1", "pcm+ws://", "nonsense"])
def test_bad_targets_are_config_errors(bad):
    with pytest.raises(ConfigError):
        parse_target(bad)


@pytest.mark.parametrize("url", ["ws://127.0.0.1:99999/pcm", "ws://127.0.0.1:0/pcm", "twilio+ws://h:-1/x"])
def test_a_port_out_of_range_is_a_clear_error_not_a_traceback_or_port_80(url):
    with pytest.raises(ConfigError, match=r"port must be 1\.\.65535"):
        parse_target(url)


def test_a_target_prints_its_credentials_redacted_and_dials_them_all():
    t = parse_target("pcm+ws://u:pw@h:1/x?token=T0K&lang=zh")
    assert str(t) == "pcm+ws://***@h:1/x?token=***&lang=zh"
    assert t.url == "ws://u:pw@h:1/x?token=T0K&lang=zh"  # what the socket connects to
    assert t.full_text() == "pcm+ws://u:pw@h:1/x?token=T0K&lang=zh"
    assert t.address() == ("h", 1)
    assert parse_target("builtin").full_text() == "builtin"


@pytest.mark.parametrize(
    "bad", ["http://u:pw@h/x?token=T0K", "sip+ws://u:pw@h/?token=T0K", "ws://u:pw@h:0/?token=T0K"]
)
def test_an_error_about_a_target_quotes_it_redacted(bad):
    with pytest.raises(ConfigError) as caught:
        parse_target(bad)
    assert "pw" not in str(caught.value) and "T0K" not in str(caught.value)


def test_a_comma_list_of_targets_splits_between_targets_not_inside_a_url():
    given = ["builtin,ws://h:1/p?ids=1,2,humans=3, twilio+wss://h/t", "pcm+ws://a/b,human", "BUILTIN+twilio"]
    assert split_targets(given) == [
        "builtin",
        "ws://h:1/p?ids=1,2,humans=3",
        "twilio+wss://h/t",
        "pcm+ws://a/b",
        "human",
        "BUILTIN+twilio",
    ]
    assert split_targets(None) == [] and split_targets([" , "]) == []


@pytest.mark.parametrize("protocol", ["telnyx", "plivo", "exotel", "vonage", "genesys", "pipecat"])
def test_every_carrier_and_pipecat_has_a_target(protocol):
    t = parse_target(f"{protocol}+wss://u:pw@bot.example.com/ws?token=T0K")
    assert (t.protocol, t.line, t.url) == (protocol, protocol, "wss://u:pw@bot.example.com/ws?token=T0K")
    assert str(t) == f"{protocol}+wss://***@bot.example.com/ws?token=***"
    assert split_targets([f"builtin,{protocol}+ws://h:1/p?a=1,2"]) == [
        "builtin",
        f"{protocol}+ws://h:1/p?a=1,2",
    ]
    with pytest.raises(ConfigError, match="unknown built-in line"):
        parse_target(f"builtin+{protocol}")  # the built-in assistant serves raw PCM and Twilio only
    with pytest.raises(ConfigError, match=f"not a ws:// or wss:// URL .*{protocol}\\+ws://"):
        parse_target(f"{protocol}+http://h:1/x")


def test_a_webrtc_target_is_an_http_offer_route() -> None:
    t = parse_target("webrtc+http://127.0.0.1:7860/api/offer")
    assert (t.protocol, t.url, str(t)) == (
        "webrtc",
        "http://127.0.0.1:7860/api/offer",
        "webrtc+http://127.0.0.1:7860/api/offer",
    )
    assert t.address() == ("127.0.0.1", 7860)
    assert parse_target("webrtc+https://bot.example.com/api/offer").address() == ("bot.example.com", 443)
    assert (
        str(parse_target("webrtc+https://u:pw@bot.example.com/api/offer"))
        == "webrtc+https://***@bot.example.com/api/offer"
    )
    for bad in ("webrtc+ws://127.0.0.1:7860/api/offer", "webrtc+http://", "webrtc+127.0.0.1:7860"):
        with pytest.raises(ConfigError, match="http:// or https://"):
            parse_target(bad)


def test_the_builtin_over_webrtc_resolves_to_its_offer_route() -> None:
    t = parse_target("builtin+webrtc")
    assert str(t) == "builtin+webrtc"
    resolved = t.resolve_builtin("pcm+ws://127.0.0.1:8765/pcm")
    assert (resolved.protocol, resolved.url) == ("webrtc", "http://127.0.0.1:8765/api/offer")
    assert (
        parse_target("builtin+twilio").resolve_builtin("ws://127.0.0.1:8765/pcm").url
        == "ws://127.0.0.1:8765/twilio"
    )


def test_webrtc_targets_split_from_a_comma_list() -> None:
    got = split_targets(["builtin,webrtc+http://127.0.0.1:7860/api/offer?a=1,2,builtin+webrtc"])
    assert got == ["builtin", "webrtc+http://127.0.0.1:7860/api/offer?a=1,2", "builtin+webrtc"]
