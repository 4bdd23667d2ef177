"""The typed line blocks say exactly the keys the lines' ``describe()`` write, required and optional."""

from __future__ import annotations

import dataclasses
from typing import Any

from voice.core.clock import MonotonicClock
from voice.lines.effects import EffectLine, LineEffects
from voice.lines.factory import describe_line
from voice.lines.line import CallStart
from voice.lines.line_meta import (
    EffectLineMeta,
    EffectsMeta,
    EffectStats,
    LineMeta,
    RtpCounts,
    RtpMediaMeta,
    SipLineMeta,
    SipSettingsMeta,
    WebrtcLineMeta,
    WebrtcSettingsMeta,
)
from voice.lines.memory import MemoryLine
from voice.lines.sip import SipLine
from voice.lines.sip_media import RtpMedia
from voice.lines.sip_settings import SipSettings
from voice.lines.targets import parse_target
from voice.lines.webrtc import WebrtcLine
from voice.lines.webrtc_settings import IceServer, WebrtcSettings


def fits(block: dict[str, Any], typed: Any) -> bool:
    """Every required key there, nothing the type does not name."""
    return typed.__required_keys__ <= set(block) <= typed.__required_keys__ | typed.__optional_keys__


class Silent:
    def on_start(self, start: CallStart) -> list[Any]:
        return []

    def on_frame(self, pcm: Any) -> list[Any]:
        return []


def test_the_effects_block_is_the_settings_field_for_field_in_order() -> None:
    described = LineEffects(jitter_ms=20, noise_snr_db=15).describe()
    assert (
        list(described)
        == [f.name for f in dataclasses.fields(LineEffects)]
        == list(EffectsMeta.__annotations__)
    )


async def test_an_effect_lines_block_with_and_without_noise() -> None:
    quiet = EffectLine(MemoryLine(Silent()), LineEffects(jitter_ms=10), seed=3)
    assert fits(quiet.describe(), EffectLineMeta) and fits(quiet.describe()["stats"], EffectStats)
    assert "caller_speech_dbfs" not in quiet.describe()["stats"]
    noisy = EffectLine(MemoryLine(Silent()), LineEffects(noise_snr_db=20), seed=3)
    await noisy.open(CallStart("c", {}))
    stats = noisy.describe()["stats"]
    assert fits(stats, EffectStats) and set(stats) == EffectStats.__required_keys__ | {"caller_speech_dbfs"}
    assert noisy.stats == {k: v for k, v in stats.items() if k != "caller_speech_dbfs"}  # a copy, not it
    await noisy.close()


def test_the_line_block_with_and_without_a_codec() -> None:
    g711 = describe_line(parse_target("twilio+ws://h:1/x"))
    pcm = describe_line(parse_target("ws://h:1/x"))
    assert fits(g711, LineMeta) and "codec" in g711
    assert fits(pcm, LineMeta) and "codec" not in pcm


def test_the_settings_blocks() -> None:
    assert fits(SipSettings("u", "pw").describe(), SipSettingsMeta)
    full = WebrtcSettings({"mode": "eval"}, (IceServer("stun:h:3478"),)).describe()
    assert set(full) == WebrtcSettingsMeta.__optional_keys__ and WebrtcSettings().describe() == {}


def test_the_rtp_blocks_and_the_sip_lines_keys_are_its_dialogs_and_its_medias() -> None:
    media = RtpMedia(MonotonicClock(spin_ns=0), lambda item, n: None).describe()
    assert fits(media, RtpMediaMeta) and "codec" not in media
    assert list(media)[: len(RtpCounts.__annotations__)] == list(RtpCounts.__annotations__)
    dialog = {"sip_statuses", "sip_malformed", "sip_strays", "sip_reoffers"}
    sip_keys = SipLineMeta.__required_keys__ | SipLineMeta.__optional_keys__
    assert (
        sip_keys == {"transport"} | dialog | RtpMediaMeta.__required_keys__ | RtpMediaMeta.__optional_keys__
    )
    assert SipLine("sip:bot@127.0.0.1:5060").describe() == {"transport": "sip/udp"}


def test_a_webrtc_lines_block_before_any_statistics() -> None:
    described = WebrtcLine("http://127.0.0.1:1/api/offer").describe()
    assert fits(described, WebrtcLineMeta) and set(described) == WebrtcLineMeta.__required_keys__


def test_line_stats_are_what_a_line_with_effects_describes_and_nothing_for_a_plain_line():
    from voice.lines.line_meta import line_stats

    class Plain:
        describe = None  # an attribute that is no method says nothing either

    class Described:
        def describe(self):
            return {"loss_rate": 0.0}

    assert line_stats(Plain()) is None and line_stats(object()) is None
    assert line_stats(Described()) == {"loss_rate": 0.0}
