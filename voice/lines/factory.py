"""From a target and the network's effects to a fresh line per call (what the runner's ``make_line`` is).

:data:`LINES` is the table of what CallSim can dial: per target protocol, the line (its codec on the one
websocket line shell), whether that codec is an 8 kHz G.711 phone channel (then the band limit is the
codec's own: on, and it cannot be turned off), and what the event log records as its codec.

The built-in assistant is not dialled here: the CLI starts it and resolves ``builtin`` /
``builtin+twilio`` to its URL first (:meth:`~voice.lines.targets.Target.resolve_builtin`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

from voice.core.clock import Clock
from voice.errors import ConfigError
from voice.lines.effects import EffectLine, LineEffects
from voice.lines.exotel import ExotelLine
from voice.lines.genesys import GenesysLine
from voice.lines.headers import Headers
from voice.lines.line import Line
from voice.lines.line_meta import LineMeta
from voice.lines.pcm import PcmWebsocketLine
from voice.lines.pipecat_ws import PipecatLine
from voice.lines.plivo import PlivoLine
from voice.lines.sip import SipLine
from voice.lines.sip_settings import SipSettings
from voice.lines.targets import BUILTIN, HUMAN, PCM, PIPECAT, SIP, TWILIO, WEBRTC, Target
from voice.lines.telnyx import TelnyxLine
from voice.lines.twilio import TwilioLine
from voice.lines.vonage import VonageLine
from voice.lines.webrtc import WebrtcLine
from voice.lines.webrtc_settings import WebrtcSettings


@dataclass(frozen=True)
class Dialect:
    """How to dial one target protocol."""

    line: Callable[..., Line]  # made with (url, headers=...); a WebRTC line takes its settings too
    codec: str | None  # what the event log records (None: CallSim's own 16 kHz PCM)
    g711: str | None = None  # the codec is this 8 kHz G.711 law: the band limit is on by protocol


LINES: dict[str, Dialect] = {
    PCM: Dialect(PcmWebsocketLine, None),
    TWILIO: Dialect(TwilioLine, "G.711 mu-law 8 kHz (Twilio Media Streams)", g711="mu-law"),
    "telnyx": Dialect(TelnyxLine, "G.711 PCMU 8 kHz (Telnyx media streaming)", g711="mu-law"),
    "plivo": Dialect(PlivoLine, "G.711 mu-law 8 kHz (Plivo audio streams)", g711="mu-law"),
    "exotel": Dialect(ExotelLine, "16-bit linear PCM, 8 kHz or the URL's sample-rate (Exotel voicebot)"),
    "vonage": Dialect(VonageLine, "16-bit linear PCM 16 kHz, binary (Vonage websocket)"),
    "genesys": Dialect(GenesysLine, "G.711 mu-law 8 kHz (Genesys AudioHook)", g711="mu-law"),
    PIPECAT: Dialect(PipecatLine, "16-bit linear PCM, 16 kHz up, the bot's rate down (pipecat protobuf)"),
    WEBRTC: Dialect(WebrtcLine, "Opus 48 kHz over RTP (WebRTC: aiortc, its jitter buffer on receipt)"),
    SIP: Dialect(SipLine, "G.711 PCMU or PCMA 8 kHz over RTP (SIP; CallSim's jitter buffer)", g711="mu-law"),
}


def _protocol(target: Target) -> str:
    return target.line if target.protocol == BUILTIN else target.protocol


def effects_for(target: Target, effects: LineEffects | None = None) -> LineEffects:
    """The effects a call to ``target`` goes through, defaults resolved.

    The mu-law band limit defaults to on where the protocol's codec is 8 kHz G.711 (Twilio, Telnyx, Plivo,
    Genesys) and off elsewhere (raw PCM, Exotel's and Vonage's linear PCM, pipecat's); asking a G.711 line
    for no band limit is a :class:`ConfigError`, since the line cannot do it.
    """
    effects = effects or LineEffects()
    dialect = LINES.get(_protocol(target))
    if dialect is not None and dialect.g711:
        if effects.mulaw_band_limit is False:
            why = f"a {_protocol(target)} line is 8 kHz {dialect.g711} by protocol"
            raise ConfigError(f"{why}: its band limit cannot be off")
        return dataclasses.replace(effects, mulaw_band_limit=True)
    return dataclasses.replace(effects, mulaw_band_limit=bool(effects.mulaw_band_limit))


def describe_line(target: Target, effects: LineEffects | None = None, seed: int = 0) -> LineMeta:
    """The line as the event log should record it (``call_start``/``meta``): protocol, effects, seed."""
    resolved = effects_for(target, effects)
    protocol = _protocol(target)
    d: LineMeta = {"protocol": protocol, "effects": resolved.describe(), "seed": seed}
    dialect = LINES.get(protocol)
    if dialect is not None and dialect.codec is not None:
        d["codec"] = dialect.codec
    return d


def make_line_factory(
    target: Target,
    *,
    effects: LineEffects | None = None,
    seed: int = 0,
    clock: Clock | None = None,
    headers: Headers = (),
    webrtc: WebrtcSettings | None = None,
    sip: SipSettings | None = None,
) -> Callable[[], Line]:
    """A function returning a new, unopened line to ``target`` for each call.

    ``seed`` seeds the network effects; each call mixes in its call id
    (:func:`~voice.lines.effects.call_seed`), so every call hears its own but reproducible network.
    ``clock`` times the network's jitter (real time by default; pass the driver's clock in tests).
    ``headers`` go on each call's websocket upgrade (``--header``, :mod:`voice.lines.headers`), or on a
    WebRTC target's offer requests; ``webrtc``: its extra ``request_data`` and ICE servers; ``sip``: a SIP
    target's credentials and jitter buffer (the network's jitter and loss act on its RTP packets).
    """
    if target.protocol == BUILTIN:
        raise ConfigError("the built-in target must be resolved to its URL first (Target.resolve_builtin)")
    if target.protocol == HUMAN:
        raise ConfigError("a person answers through `callsim talk --role assistant`, not a network line")
    dialect = LINES.get(target.protocol)
    if dialect is None:
        raise ConfigError(f"no line for target protocol {target.protocol!r}")
    resolved = effects_for(target, effects)
    url, line = target.url, dialect.line
    bare: Callable[[], Line] = functools.partial(line, url, headers=headers)
    if target.protocol == WEBRTC:
        settings = webrtc or WebrtcSettings()
        ice_servers = [server.to_rtc() for server in settings.ice_servers]
        bare = functools.partial(
            line, url, headers=headers, request_data=settings.request_data, ice_servers=ice_servers
        )
    if target.protocol == SIP:
        sip = sip or SipSettings.from_env()
        rtp = dataclasses.replace(resolved, mulaw_band_limit=False, noise_snr_db=None, caller_gain_db=0.0)
        bare = functools.partial(
            line,
            url,
            headers=headers,
            credentials=sip.credentials,
            jitter_delay_ms=sip.jitter_buffer_ms,
            clock=clock,
            answer_timeout_s=sip.answer_timeout_s,
            seed=seed,
            effects=rtp,
        )
    try:
        bare()  # made once here, so that what the URL asks of its codec is refused now, not per call
    except ValueError as exc:
        raise ConfigError(f"target {target}: {exc}") from exc
    applied = resolved
    if dialect.g711:
        applied = dataclasses.replace(resolved, mulaw_band_limit=False)  # the line's own codec does it
    if target.protocol == SIP:  # the SIP line's jitter and loss act on its RTP packets
        applied = dataclasses.replace(applied, jitter_ms=0.0, loss_rate=0.0)
    if not applied.alters_audio:
        return bare

    def wrapped() -> Line:
        return EffectLine(bare(), applied, seed=seed, clock=clock)

    return wrapped
