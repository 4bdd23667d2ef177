"""G.711, the codec of phone lines (8 kHz, one byte per sample): mu-law (North America and Japan; Twilio,
Plivo, Telnyx's default PCMU) and A-law (the rest of the world; Telnyx's PCMA)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from voice.core.audio import Pcm

_MULAW_BIAS = 0x84
_MULAW_CLIP = 32635


def _build_mulaw_decode_table() -> npt.NDArray[np.int16]:
    table = np.zeros(256, dtype=np.int16)
    for i in range(256):
        u = ~i & 0xFF
        sign = u & 0x80
        exponent = (u >> 4) & 0x07
        mantissa = u & 0x0F
        magnitude = ((mantissa << 3) + _MULAW_BIAS) << exponent
        value = magnitude - _MULAW_BIAS
        table[i] = -value if sign else value
    return table


_MULAW_DECODE = _build_mulaw_decode_table()


def mulaw_encode(pcm: Pcm) -> bytes:
    """int16 PCM to G.711 mu-law bytes."""
    x = np.asarray(pcm, dtype=np.int32)
    sign = np.where(x < 0, 0x80, 0x00)
    magnitude = np.minimum(np.abs(x), _MULAW_CLIP) + _MULAW_BIAS
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int32) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    encoded = ~(sign | (exponent << 4) | mantissa) & 0xFF
    return encoded.astype(np.uint8).tobytes()


def mulaw_decode(data: bytes) -> Pcm:
    """G.711 mu-law bytes to int16 PCM."""
    return _MULAW_DECODE[np.frombuffer(data, dtype=np.uint8)].astype(np.int16)


# A-law: 13-bit magnitudes in 8 segments, every other bit inverted on the wire (the 0x55 mask), as in
# ITU-T G.711 and the reference implementation (Sun's g711.c, which Python's audioop follows).
_ALAW_SEGMENT_END = np.array([0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF], dtype=np.int32)


def _build_alaw_decode_table() -> npt.NDArray[np.int16]:
    table = np.zeros(256, dtype=np.int16)
    for i in range(256):
        a = i ^ 0x55
        t = (a & 0x0F) << 4
        segment = (a & 0x70) >> 4
        t += 8 if segment == 0 else 0x108
        if segment > 1:
            t <<= segment - 1
        table[i] = t if a & 0x80 else -t
    return table


_ALAW_DECODE = _build_alaw_decode_table()


def alaw_encode(pcm: Pcm) -> bytes:
    """int16 PCM to G.711 A-law bytes."""
    x = np.asarray(pcm, dtype=np.int32) >> 3
    negative = x < 0
    mask = np.where(negative, 0x55, 0xD5)
    magnitude = np.where(negative, -x - 1, x)
    segment = np.searchsorted(_ALAW_SEGMENT_END, magnitude)  # 8: beyond the last segment (clipped)
    shift = np.where(segment < 2, 1, segment)
    value = (np.minimum(segment, 7) << 4) | ((magnitude >> np.minimum(shift, 7)) & 0x0F)
    value = np.where(segment >= 8, 0x7F, value)
    return (value ^ mask).astype(np.uint8).tobytes()


def alaw_decode(data: bytes) -> Pcm:
    """G.711 A-law bytes to int16 PCM."""
    return _ALAW_DECODE[np.frombuffer(data, dtype=np.uint8)].astype(np.int16)


# --- WAV files -----------------------------------------------------------------------------------------
