"""What a run's records say about its line, typed: the blocks of ``meta`` / ``call_start`` that the lines'
``describe()`` give (``line``, ``line_stats``, the settings' ``webrtc`` / ``sip``).

Each is a JSON object in ``events.jsonl`` with fixed keys, so each is a ``TypedDict``: a plain dict when
written, its keys and their types known where it is made.  The key order is the order each ``describe()``
builds it in, which the files keep.  (No postponed annotations here: Python 3.11 reads ``NotRequired`` from
a TypedDict's annotations only when they are evaluated, and the tests read the keys back.)
"""

from typing import TYPE_CHECKING, NotRequired, Required, TypeAlias, TypedDict

if TYPE_CHECKING:
    from voice.lines.line import Line


class EffectsMeta(TypedDict):
    """:class:`~voice.lines.effects.LineEffects`, field for field."""

    mulaw_band_limit: bool | None
    jitter_ms: float
    loss_rate: float
    noise_snr_db: float | None
    caller_gain_db: float


class EffectStats(TypedDict):
    """What an :class:`~voice.lines.effects.EffectLine` did to the call's audio so far."""

    caller_packets: int
    caller_packets_lost: int
    assistant_packets: int
    assistant_packets_lost: int
    caller_samples_clipped: int
    max_delay_ms: float
    caller_speech_dbfs: NotRequired[float]  # with noise only: the level the noise followed


class EffectLineMeta(EffectsMeta):
    """An effect line's ``line_stats``: its effects, its seed, what they did."""

    seed: int
    stats: EffectStats


class LineMeta(TypedDict):
    """The ``line`` block (:func:`~voice.lines.factory.describe_line`): what was dialled, through what."""

    protocol: str
    effects: EffectsMeta
    seed: int
    codec: NotRequired[str]  # absent for CallSim's own 16 kHz PCM


class WebrtcSettingsMeta(TypedDict, total=False):
    """A run's WebRTC settings, without a credential (each key only when something was given)."""

    request_data_keys: list[str]
    ice_servers: list[str]


class SipSettingsMeta(TypedDict):
    """A run's SIP settings: whether a password is set, never the password."""

    user: str | None
    password_set: bool
    jitter_buffer_ms: int


class RtpCounts(TypedDict):
    """The packets and frames a SIP call's RTP media counted."""

    rtp_sent: int
    rtp_received: int
    rtp_wrong_source: int
    rtp_malformed: int
    rtp_other_payload: int
    rtp_dtmf_received: int
    rtp_lost_on_purpose: int
    rtp_frames_heard: int
    rtp_silent_frames: int


class RtpMediaMeta(RtpCounts):
    """The counts, the jitter buffer's delay and what it saw, the codec once answered."""

    jitter_buffer_ms: int
    rtp_late: int
    rtp_lost: int
    rtp_duplicates: int
    rtp_overflow: int
    rtp_reordered: int
    rtp_jitter_ms: float
    codec: NotRequired[str]


class SipLineMeta(TypedDict, total=False):
    """A SIP line's ``line_stats``: the transport; the dialog's figures once it began; the media's once
    it opened (the keys of :class:`RtpMediaMeta`)."""

    transport: Required[str]
    sip_statuses: list[int]
    sip_malformed: int
    sip_strays: int
    sip_reoffers: int
    rtp_sent: int
    rtp_received: int
    rtp_wrong_source: int
    rtp_malformed: int
    rtp_other_payload: int
    rtp_dtmf_received: int
    rtp_lost_on_purpose: int
    rtp_frames_heard: int
    rtp_silent_frames: int
    jitter_buffer_ms: int
    rtp_late: int
    rtp_lost: int
    rtp_duplicates: int
    rtp_overflow: int
    rtp_reordered: int
    rtp_jitter_ms: float
    codec: str


class WebrtcRtpStats(TypedDict, total=False):
    """The inbound audio's loss and jitter from aiortc's statistics (all three, or none)."""

    rtp_packets_received: int
    rtp_packets_lost: int
    rtp_jitter_ms: float


class WebrtcLineMeta(WebrtcRtpStats):
    """A WebRTC line's ``line_stats``: its frames, then aiortc's RTP statistics when it gave them."""

    transport: str
    frames_received: int
    silent_frames: int
    caller_frames_dropped: int


# what a line with effects (the phone network, SIP's RTP, WebRTC's media) did during a call
LineStats: TypeAlias = EffectLineMeta | SipLineMeta | WebrtcLineMeta


def line_stats(line: "Line") -> "LineStats | None":
    """What a line with effects did during the call, if it says (it has ``describe()``): the recording's
    meta keeps it; a plain line says nothing."""
    describe = getattr(line, "describe", None)
    return describe() if callable(describe) else None
