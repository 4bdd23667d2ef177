"""One syntax for where to call, shared by every command.

================================  ====================================================================
``builtin``                       the built-in assistant, started by CallSim, called over raw PCM
``builtin+twilio``                the same assistant, called as Twilio Media Streams (its ``/twilio`` route)
``pcm+ws://host:port/path``       an assistant speaking the raw PCM protocol (``docs/protocol.md``);
                                  a bare ``ws://``/``wss://`` URL means the same
``twilio+ws://host:port/path``    a bot taking Twilio Media Streams calls (``docs/twilio.md``)
``telnyx+ws://host:port/path``    a bot taking Telnyx media streams (``docs/bots.md``, as all below)
``plivo+ws://host:port/path``     a bot taking Plivo audio streams
``exotel+ws://host:port/path``    a bot taking Exotel voicebot streams (``?sample-rate=16000``: 16 kHz)
``vonage+ws://host:port/path``    a bot taking a Vonage websocket call leg
``genesys+ws://host:port/path``   a bot taking Genesys AudioHook sessions
``pipecat+ws://host:port/path``   a pipecat bot with ``ProtobufFrameSerializer``, pipecat's own protocol
``webrtc+http://host:port/path``  a WebRTC bot's offer route, as pipecat's runner serves it
                                  (``/api/offer``); ``+https`` too (``docs/bots.md``)
``builtin+webrtc``                the built-in assistant over WebRTC (its ``/api/offer`` route)
``sip:USER@HOST[:PORT]``          a bot (its PBX, its trunk) reached by SIP and RTP, G.711 at 8 kHz;
                                  ``;transport=tcp`` for SIP over TCP (``docs/sip.md``)
``builtin+sip``                   the built-in assistant over SIP (``callsim serve --sip PORT``)
``human``                         a person answering on a microphone (``callsim talk --role assistant``)
================================  ====================================================================

Every ``+ws://`` target takes ``+wss://`` too.  On a carrier's target CallSim plays the carrier's side of
its media stream; on ``pipecat+ws://``, a pipecat websocket client: one codec each behind the one
websocket line shell (:mod:`voice.lines.factory` has the table).  The built-in assistant serves raw PCM,
Twilio, WebRTC and SIP.

A target prints (``str``) with its credentials redacted (:mod:`voice.lines.redact`): that is the name every
file, report and message uses; only ``url`` holds the real URL, for dialling.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from voice.errors import ConfigError
from voice.lines.redact import redact_text, redact_url
from voice.lines.sip_target import parse_sip_uri

BUILTIN = "builtin"
HUMAN = "human"
PCM = "pcm"
TWILIO = "twilio"
CARRIERS = ("telnyx", "plivo", "exotel", "vonage", "genesys")  # carriers' media streams besides Twilio's
PIPECAT = "pipecat"  # pipecat's own protobuf websocket protocol
PROTOCOLS = (PCM, TWILIO, *CARRIERS, PIPECAT)  # over a websocket (ws:// or wss://)
WEBRTC = "webrtc"  # a WebRTC peer behind an HTTP offer route (http:// or https://), as pipecat's runner
SIP = "sip"  # a SIP user agent: sip:USER@HOST[:PORT][;transport=udp|tcp]
BUILTIN_PATHS = {PCM: "/pcm", TWILIO: "/twilio", WEBRTC: "/api/offer", SIP: ""}  # the built-in's routes
_HTTP_OF = {"ws": "http", "wss": "https"}


@dataclass(frozen=True)
class Target:
    """A parsed target: ``protocol`` is one of :data:`PROTOCOLS`, ``builtin`` or ``human``; ``url`` is
    what the socket connects to (empty for ``builtin``, whose ``line`` says which of its routes to call),
    credentials and all; ``str(target)`` is its name with them redacted."""

    protocol: str
    url: str
    line: str = PCM

    def __str__(self) -> str:
        if self.protocol == HUMAN:
            return HUMAN
        if self.protocol == BUILTIN:
            return BUILTIN if self.line == PCM else f"{BUILTIN}+{self.line}"
        if self.protocol == SIP:
            return str(parse_sip_uri(self.url))
        return f"{self.protocol}+{redact_url(self.url)}"

    def full_text(self) -> str:
        """The target as given, credentials included: for telling targets apart, never for printing."""
        if self.protocol == SIP:
            return self.url
        return f"{self.protocol}+{self.url}" if self.url else str(self)

    def address(self) -> tuple[str, int]:
        """The host and port the target's URL connects to (not for ``builtin``; a SIP target's is UDP
        unless it says ``;transport=tcp``)."""
        if self.protocol == SIP:
            sip = parse_sip_uri(self.url)
            return sip.host, sip.port
        parts = urlsplit(self.url)
        return parts.hostname or "", parts.port or (443 if parts.scheme in ("wss", "https") else 80)

    def resolve_builtin(self, server_url: str, sip_port: int | None = None) -> Target:
        """The started built-in assistant's route for this target (``server_url``: any of its URLs;
        ``sip_port``: the UDP port its SIP user agent listens on, for ``builtin+sip``)."""
        if self.protocol != BUILTIN:
            return self
        parts = urlsplit(server_url.partition("+")[2] if "+" in server_url else server_url)
        if self.line == SIP:
            if sip_port is None:
                raise ConfigError("builtin+sip needs the built-in assistant started with its SIP port")
            return Target(SIP, f"sip:assistant@{parts.hostname or '127.0.0.1'}:{sip_port}", SIP)
        scheme = _HTTP_OF.get(parts.scheme, parts.scheme) if self.line == WEBRTC else parts.scheme
        return Target(self.line, f"{scheme}://{parts.netloc}{BUILTIN_PATHS[self.line]}", self.line)


def parse_target(text: str) -> Target:
    """Parse a target (see the module's table); anything else is a :class:`ConfigError` (quoting the text
    redacted)."""
    text = text.strip()
    shown = redact_text(text)
    if text == HUMAN:
        return Target(HUMAN, "", HUMAN)
    protocol, sep, rest = text.partition("+")
    if protocol == BUILTIN:
        line = rest if sep else PCM
        if line not in BUILTIN_PATHS:
            raise ConfigError(
                f"unknown built-in line {line!r} in {shown!r} "
                "(builtin, builtin+twilio, builtin+webrtc, builtin+sip)"
            )
        return Target(BUILTIN, "", line)
    if text.lower().startswith(f"{SIP}:"):
        try:
            parse_sip_uri(text)
        except ValueError as exc:
            raise ConfigError(f"target {shown!r}: {exc}") from exc
        return Target(SIP, text, SIP)
    if not sep:
        protocol, rest = PCM, text
    if protocol not in (*PROTOCOLS, WEBRTC):
        raise ConfigError(
            f"unknown target protocol {redact_text(protocol)!r} in {shown!r} (expected builtin, "
            f"builtin+twilio, builtin+webrtc, builtin+sip, {', '.join(p + '+ws://...' for p in PROTOCOLS)}, "
            f"{WEBRTC}+http://... or sip:USER@HOST)"
        )
    parts = urlsplit(rest)
    if protocol == WEBRTC:
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(
                f"target {shown!r} is not an http:// or https:// URL of the bot's offer route "
                f"(e.g. {WEBRTC}+http://127.0.0.1:7860/api/offer, as pipecat's runner serves it)"
            )
    elif parts.scheme not in ("ws", "wss") or not parts.netloc:
        raise ConfigError(
            f"target {shown!r} is not a ws:// or wss:// URL (e.g. {protocol}+ws://127.0.0.1:8765/{protocol})"
        )
    try:
        port = parts.port  # urllib checks the range when it is read
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"target {shown!r}: the port must be 1..65535 (or left out for the scheme's own)")
    return Target(protocol, rest, protocol)


# Where a new target may begin after a comma in ``--target a,b``: a URL may hold commas of its own
# (``ws://host/p?x=1,2``), so a comma splits only before something that reads as a target.
_TARGET_START = re.compile(
    rf"(?:(?:{BUILTIN}(?:\+\w+)?|{HUMAN})$|(?:(?:{'|'.join(PROTOCOLS)})\+)?wss?://|{WEBRTC}\+https?://|{SIP}:)",
    re.IGNORECASE,
)


def split_targets(values: Sequence[str] | None) -> list[str]:
    """Repeatable ``--target`` values that also take comma lists, without cutting a URL at its commas."""
    targets: list[str] = []
    for item in values or ():
        pieces: list[str] = []
        for piece in item.split(","):
            if not piece.strip():
                continue
            if pieces and not _TARGET_START.match(piece.strip()):
                pieces[-1] += "," + piece
            else:
                pieces.append(piece)
        targets += [p.strip() for p in pieces if p.strip()]
    return targets
