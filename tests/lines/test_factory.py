"""Targets for every protocol, and lines made from a target and the network's effects."""

from __future__ import annotations

import pytest

from voice.errors import ConfigError
from voice.lines.effects import EffectLine, LineEffects
from voice.lines.factory import describe_line, effects_for, make_line_factory
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.targets import BUILTIN, Target, parse_target
from voice.lines.twilio import TwilioLine


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
    "bad", ["twilio+http://x:1", "twilio+ws://", "twilio", "builtin+sip", "sip+ws://x:1", "twilio+x"]
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
