"""G.711 mu-law, the codec of phone lines and of Twilio Media Streams (8 kHz, one byte per sample)."""

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


# --- WAV files -----------------------------------------------------------------------------------------
