"""SDP offer/answer (RFC 3264) for an audio-only G.711 call, on aiosipua's SDP model: what the SIP line
offers or answers, and what it learns from the far end's body (where to send RTP, which payload type, DTMF,
hold). aiosipua's parser is lenient (it skips malformed lines and defaults a short ``c=`` to 0.0.0.0, which
reads as hold), so the lines whose mistakes matter are checked here and every failure is a ValueError."""

from __future__ import annotations

from dataclasses import dataclass

from aiosipua.sdp import (
    Codec,
    ConnectionData,
    MediaDescription,
    Origin,
    SdpMessage,
    TimingField,
    parse_sdp,
    serialize_sdp,
)

PCMU = 0
PCMA = 8
TELEPHONE_EVENT = 101

CODEC_NAMES = {PCMU: "PCMU", PCMA: "PCMA"}
DIRECTIONS = ("sendrecv", "sendonly", "recvonly", "inactive")
_ANSWER_DIRECTION = {
    "sendrecv": "sendrecv",
    "sendonly": "recvonly",
    "recvonly": "sendonly",
    "inactive": "inactive",
}
_DTMF_EVENTS = "0-16"  # RFC 4733: the DTMF digits and flash
_NO_ADDRESS = ("0.0.0.0", "::")


@dataclass(frozen=True)
class RemoteMedia:
    """The far end's audio stream as its SDP describes it. ``m_lines`` and ``audio_index`` keep the
    offer's media lines so that an answer can reject the others in place (RFC 3264 §6)."""

    address: str
    port: int
    payload_type: int
    codec: str  # 'PCMU' | 'PCMA'
    dtmf_payload_type: int | None
    ptime_ms: int
    direction: str  # 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive'
    m_lines: tuple[str, ...] = ()  # every m= value of the body, in order ("audio 4000 RTP/AVP 0 101")
    audio_index: int = 0

    @property
    def on_hold(self) -> bool:
        """The far end sends us nothing or wants nothing: sendonly/inactive, or the old c=0.0.0.0 hold, or
        a rejected stream (port 0)."""
        return self.direction in ("sendonly", "inactive") or self.address in _NO_ADDRESS or self.port == 0


def _check(address: str, rtp_port: int, direction: str) -> None:
    if not address or any(c.isspace() for c in address):
        raise ValueError(f"address {address!r} is not a host address")
    if not 0 < rtp_port < 65536:
        raise ValueError(f"rtp_port={rtp_port} is not in 1..65535")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")


def _body(address: str, session_id: int, version: int, media: list[MediaDescription]) -> str:
    if session_id < 0 or version < 0:
        raise ValueError(f"session_id={session_id} and version={version} must not be negative")
    addr_type = "IP6" if ":" in address else "IP4"
    sdp = SdpMessage(
        version=0,
        origin=Origin("callsim", str(session_id), str(version), "IN", addr_type, address),
        session_name="callsim",
        connection=ConnectionData("IN", addr_type, address),
        timing=TimingField(0, 0),
        media=media,
    )
    return serialize_sdp(sdp)


def _media(
    port: int, codecs: list[tuple[int, str]], dtmf: int | None, ptime_ms: int, direction: str
) -> MediaDescription:
    attributes: dict[str, list[str]] = {"rtpmap": [f"{pt} {name}/8000" for pt, name in codecs]}
    formats = [str(pt) for pt, _ in codecs]
    if dtmf is not None:
        formats.append(str(dtmf))
        attributes["rtpmap"].append(f"{dtmf} telephone-event/8000")
        attributes["fmtp"] = [f"{dtmf} {_DTMF_EVENTS}"]
    attributes["ptime"] = [str(ptime_ms)]
    attributes[direction] = []
    return MediaDescription("audio", port, "RTP/AVP", formats, attributes=attributes)


def make_offer(
    address: str,
    rtp_port: int,
    *,
    session_id: int,
    version: int = 1,
    codecs: tuple[int, ...] = (PCMU, PCMA),
    dtmf: bool = True,
    ptime_ms: int = 20,
    direction: str = "sendrecv",
) -> str:
    """Our SDP offer (CRLF lines): one audio stream of ``codecs`` in preference order, and telephone-event
    101 for DTMF. The session id comes from the caller (the line's random source): no clock here."""
    _check(address, rtp_port, direction)
    if not codecs or any(pt not in CODEC_NAMES for pt in codecs) or len(set(codecs)) != len(codecs):
        raise ValueError(f"codecs={codecs!r}: offer PCMU (0) and/or PCMA (8), each once")
    if not 0 < ptime_ms <= 200:
        raise ValueError(f"ptime_ms={ptime_ms} is not in 1..200")
    named = [(pt, CODEC_NAMES[pt]) for pt in codecs]
    media = _media(rtp_port, named, TELEPHONE_EVENT if dtmf else None, ptime_ms, direction)
    return _body(address, session_id, version, [media])


def make_answer(
    offer: RemoteMedia,
    address: str,
    rtp_port: int,
    *,
    session_id: int,
    version: int,
    direction: str | None = None,
) -> str:
    """Our SDP answer to ``offer`` (parsed by :func:`parse_remote`): its chosen codec under its payload type,
    its telephone-event payload type if it offered one, its ptime, and the mirror of its direction (a hold
    by c=0.0.0.0 is answered recvonly) unless ``direction`` says otherwise. The offer's other m-lines, and
    a rejected audio stream (port 0), are answered with port 0."""
    if direction is None:
        direction = _ANSWER_DIRECTION[offer.direction]
        if offer.address in _NO_ADDRESS:  # RFC 2543 hold: we cannot send to it
            direction = {"sendrecv": "recvonly", "sendonly": "inactive"}.get(direction, direction)
    _check(address, rtp_port, direction)
    port = 0 if offer.port == 0 else rtp_port
    audio = _media(
        port, [(offer.payload_type, offer.codec)], offer.dtmf_payload_type, offer.ptime_ms, direction
    )
    media: list[MediaDescription] = []
    for i, line in enumerate(offer.m_lines or ("audio",)):
        if i == offer.audio_index:
            media.append(audio)
            continue
        kind, _, proto, *formats = line.split()
        media.append(MediaDescription(kind, 0, proto, formats or ["0"]))
    return _body(address, session_id, version, media)


# --- the far end's SDP ------------------------------------------------------------------------------------


def _raw_checks(text: str) -> list[str]:
    """Check what aiosipua would misread or fail on with a bare ``int()`` error; return the m= values."""
    m_lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("m="):
            fields = line[2:].split()
            if len(fields) < 3:
                raise ValueError(f"m-line {line!r} needs media, port and protocol")
            if not fields[1].isdigit() or int(fields[1]) > 65535:
                raise ValueError(f"bad port {fields[1]!r} in m-line {line!r}")
            m_lines.append(" ".join(fields))
        elif line.startswith("c=") and len(line[2:].split()) < 3:
            raise ValueError(f"connection line {line!r} has no address")
    return m_lines


def _codec_name(codec: Codec) -> str:
    name = codec.encoding_name or "?"
    return (
        f"{name}/{codec.clock_rate} ({codec.payload_type})"
        if codec.clock_rate
        else f"{name} ({codec.payload_type})"
    )


def _choose(audio: MediaDescription, offered: tuple[int, ...]) -> tuple[int, str]:
    wanted = {CODEC_NAMES[pt] for pt in offered}
    for codec in audio.codecs:
        name = codec.encoding_name.upper()
        if name in wanted and codec.clock_rate == 8000 and codec.channels in (None, 1):
            return codec.payload_type, name
    theirs = ", ".join(_codec_name(c) for c in audio.codecs) or "nothing"
    ours = ", ".join(CODEC_NAMES[pt] for pt in offered)
    raise ValueError(f"no common codec: they offered {theirs}; we support {ours}")


def _attribute(audio: MediaDescription, sdp: SdpMessage, key: str) -> str | None:
    """A value attribute, media level first (RFC 4566: it overrides the session level)."""
    values = audio.attributes.get(key) or sdp.attributes.get(key)
    return values[0].strip() if values else None


def parse_remote(sdp_text: str, *, offered: tuple[int, ...] = (PCMU, PCMA)) -> RemoteMedia:
    """The far end's first audio stream: its address, the first payload type in its order that we offered
    (0 and 8 known without rtpmap, dynamic ones by their rtpmap name), DTMF, ptime and direction. ValueError
    says what is missing or wrong."""
    if any(pt not in CODEC_NAMES for pt in offered) or not offered:
        raise ValueError(f"offered={offered!r}: only PCMU (0) and PCMA (8) are supported")
    m_lines = _raw_checks(sdp_text)
    try:
        sdp = parse_sdp(sdp_text)
    except (ValueError, TypeError, IndexError) as exc:
        raise ValueError(f"unreadable SDP: {exc}") from exc
    audio = sdp.audio
    if audio is None:
        kinds = ", ".join(m.media for m in sdp.media) or "none"
        raise ValueError(f"no audio m-line (media: {kinds})")
    connection = audio.connection or sdp.connection
    if connection is None:
        raise ValueError("missing connection address: no c= line for the audio stream or the session")
    payload_type, codec = _choose(audio, offered)
    dtmf = next(
        (
            c.payload_type
            for c in audio.codecs
            if c.encoding_name.lower() == "telephone-event" and c.clock_rate == 8000
        ),
        None,
    )
    ptime_text = _attribute(audio, sdp, "ptime")
    try:
        ptime_ms = round(float(ptime_text)) if ptime_text is not None else 20
    except ValueError:
        raise ValueError(f"bad ptime {ptime_text!r}") from None
    if not 0 < ptime_ms <= 200:
        raise ValueError(f"bad ptime {ptime_text!r}: not in 1..200 ms")
    media_directions = [d for d in DIRECTIONS if d in audio.attributes]
    session_directions = [d for d in DIRECTIONS if d in sdp.attributes]
    direction = (media_directions or session_directions or ["sendrecv"])[0]
    return RemoteMedia(
        address=connection.address.split("/")[0],  # a multicast c= carries /ttl
        port=audio.port,
        payload_type=payload_type,
        codec=codec,
        dtmf_payload_type=dtmf,
        ptime_ms=ptime_ms,
        direction=direction,
        m_lines=tuple(m_lines),
        audio_index=next(i for i, m in enumerate(sdp.media) if m is audio),
    )
