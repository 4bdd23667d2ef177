"""Targets for every protocol, and lines made from a target and the network's effects."""

from __future__ import annotations

import pytest

from voice.errors import ConfigError
from voice.lines.effects import EffectLine, LineEffects
from voice.lines.exotel import ExotelLine
from voice.lines.factory import LINES, describe_line, effects_for, make_line_factory
from voice.lines.genesys import GenesysLine
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.pipecat_ws import PipecatLine
from voice.lines.plivo import PlivoLine
from voice.lines.targets import BUILTIN, PROTOCOLS, SIP, WEBRTC, Target, parse_target
from voice.lines.telnyx import TelnyxLine
from voice.lines.twilio import TwilioLine
from voice.lines.vonage import VonageLine
from voice.lines.webrtc import WebrtcLine
from voice.lines.webrtc_settings import IceServer, WebrtcSettings


def test_twilio_and_builtin_targets() -> None:
    t = parse_target("twilio+ws://127.0.0.1:9000/media")
    assert (t.protocol, t.url, str(t)) == (
        "twilio",
        "ws://127.0.0.1:9000/media",
        "twilio+ws://127.0.0.1:9000/media",
    )
    assert parse_target("twilio+wss://bot.example.com/ws").url == "wss://bot.example.com/ws"
    assert parse_target("builtin") == Target(BUILTIN, "", "pcm")
    b = parse_target("builtin+twilio")
    assert (b.protocol, b.line, str(b)) == (BUILTIN, "twilio", "builtin+twilio")
    assert parse_target("builtin+pcm") == parse_target("builtin")
    assert parse_target("ws://h:1/x") == Target("pcm", "ws://h:1/x", "pcm")


def test_builtin_resolves_to_the_started_server_route() -> None:
    server = "pcm+ws://127.0.0.1:4321/pcm"
    assert parse_target("builtin").resolve_builtin(server) == parse_target("pcm+ws://127.0.0.1:4321/pcm")
    assert parse_target("builtin+twilio").resolve_builtin(server) == parse_target(
        "twilio+ws://127.0.0.1:4321/twilio"
    )
    assert (
        parse_target("builtin+twilio").resolve_builtin("ws://127.0.0.1:5/pcm").url
        == "ws://127.0.0.1:5/twilio"
    )
    plain = parse_target("twilio+ws://h:1/x")
    assert plain.resolve_builtin(server) is plain


@pytest.mark.parametrize(
    "bad",
    ["twilio+http://x:1", "twilio+ws://", "twilio", "builtin+rtp", "sip+ws://x:1", "twilio+x", "sip:bot@"],
)
def test_bad_targets_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError):
        parse_target(bad)


def test_the_band_limit_defaults_by_protocol() -> None:
    assert effects_for(parse_target("twilio+ws://h:1/x")).mulaw_band_limit is True
    assert effects_for(parse_target("builtin+twilio")).mulaw_band_limit is True
    assert effects_for(parse_target("ws://h:1/x")).mulaw_band_limit is False
    assert (
        effects_for(parse_target("ws://h:1/x"), LineEffects(mulaw_band_limit=True)).mulaw_band_limit is True
    )
    with pytest.raises(ConfigError, match="mu-law by protocol"):
        effects_for(parse_target("twilio+ws://h:1/x"), LineEffects(mulaw_band_limit=False))


def test_lines_from_targets() -> None:
    pcm = make_line_factory(parse_target("ws://h:1/x"))()
    assert isinstance(pcm, PcmWebsocketLine) and pcm.url == "ws://h:1/x"
    twilio = make_line_factory(parse_target("twilio+ws://h:1/x"))()
    assert isinstance(twilio, TwilioLine)  # its codec is the band limit: no wrapper needed
    lossy = make_line_factory(parse_target("twilio+ws://h:1/x"), effects=LineEffects(loss_rate=0.05), seed=4)
    a, b = lossy(), lossy()
    assert isinstance(a, EffectLine) and isinstance(a.inner, TwilioLine) and a is not b
    assert a.effects.mulaw_band_limit is False and a.seed == 4  # not twice
    banded = make_line_factory(parse_target("ws://h:1/x"), effects=LineEffects(mulaw_band_limit=True))()
    assert isinstance(banded, EffectLine) and banded.effects.mulaw_band_limit
    with pytest.raises(ConfigError, match="resolved"):
        make_line_factory(parse_target("builtin"))


def test_every_line_of_a_factory_carries_its_headers() -> None:
    headers = (("Authorization", "Bearer t"),)
    for target in ("ws://h:1/x", "twilio+ws://h:1/x"):
        line = make_line_factory(parse_target(target), headers=headers)()
        assert isinstance(line, PcmWebsocketLine | TwilioLine) and line.headers == headers
    lossy = make_line_factory(
        parse_target("ws://h:1/x"), effects=LineEffects(loss_rate=0.1), headers=headers
    )()
    assert isinstance(lossy, EffectLine) and isinstance(lossy.inner, PcmWebsocketLine)
    assert lossy.inner.headers == headers


def test_the_line_as_the_event_log_records_it() -> None:
    d = describe_line(parse_target("twilio+ws://h:1/x"), LineEffects(jitter_ms=20), seed=9)
    assert d["protocol"] == "twilio" and d["seed"] == 9 and "mu-law" in d["codec"]
    assert d["effects"]["mulaw_band_limit"] is True and d["effects"]["jitter_ms"] == 20
    assert describe_line(parse_target("builtin"))["effects"]["mulaw_band_limit"] is False


CARRIER_LINES = {
    "telnyx": (TelnyxLine, True),
    "plivo": (PlivoLine, True),
    "exotel": (ExotelLine, False),
    "vonage": (VonageLine, False),
    "genesys": (GenesysLine, True),
    "pipecat": (PipecatLine, False),
}


def test_the_table_has_a_line_for_every_target_protocol() -> None:
    assert set(LINES) == {*PROTOCOLS, WEBRTC, SIP}


@pytest.mark.parametrize("protocol", sorted(CARRIER_LINES))
def test_carrier_lines_from_targets_and_their_band_limit(protocol: str) -> None:
    cls, g711 = CARRIER_LINES[protocol]
    target = parse_target(f"{protocol}+ws://h:1/x")
    line = make_line_factory(target, headers=(("X-Key", "k"),))()
    if g711:  # the codec is the band limit: on by protocol, never twice, never off
        assert isinstance(line, cls) and line.headers == (("X-Key", "k"),)
        assert effects_for(target).mulaw_band_limit is True
        with pytest.raises(ConfigError, match="mu-law by protocol"):
            effects_for(target, LineEffects(mulaw_band_limit=False))
    else:  # linear PCM: off unless asked, and then applied by the effects
        assert isinstance(line, cls) and effects_for(target).mulaw_band_limit is False
        banded = make_line_factory(target, effects=LineEffects(mulaw_band_limit=True))()
        assert isinstance(banded, EffectLine) and isinstance(banded.inner, cls)
    lossy = make_line_factory(target, effects=LineEffects(loss_rate=0.1))()
    assert (
        isinstance(lossy, EffectLine)
        and lossy.effects.mulaw_band_limit is False
        and isinstance(lossy.inner, cls)
    )
    d = describe_line(target)
    assert (
        d["protocol"] == protocol
        and d["codec"] == LINES[protocol].codec
        and d["effects"]["mulaw_band_limit"] is g711
    )


def test_what_a_url_asks_of_its_codec_is_checked_when_the_factory_is_made() -> None:
    line = make_line_factory(parse_target("exotel+ws://h:1/x?sample-rate=16000"))()
    assert isinstance(line, ExotelLine) and line.codec.rate == 16000
    with pytest.raises(ConfigError, match="8000 or 16000"):
        make_line_factory(parse_target("exotel+ws://h:1/x?sample-rate=44100"))


def test_a_webrtc_target_makes_a_webrtc_line_with_its_request_data_and_ice_servers() -> None:
    settings = WebrtcSettings({"mode": "eval"}, (IceServer("stun:stun.example.org:3478"),))
    target = parse_target("webrtc+http://127.0.0.1:7860/api/offer")
    line = make_line_factory(target, webrtc=settings, headers=(("X-Token", "t"),))()
    assert isinstance(line, WebrtcLine)
    assert line.url == "http://127.0.0.1:7860/api/offer" and line.extra == {"mode": "eval"}
    assert [s.urls for s in line.ice_servers] == ["stun:stun.example.org:3478"]
    described = describe_line(target)
    assert described["protocol"] == "webrtc" and described["codec"].startswith("Opus 48 kHz")
    assert described["effects"]["mulaw_band_limit"] is False  # Opus is wideband: no band limit by default
    wrapped = make_line_factory(target, effects=LineEffects(jitter_ms=20))()
    assert isinstance(wrapped, EffectLine) and isinstance(wrapped.inner, WebrtcLine)
