"""The stereo recording, compressed for embedding in the report (Opus in Ogg, through PyAV).

16 kHz stereo PCM is 512 kbit/s; Opus at 32 kbit/s keeps speech clearly intelligible at a sixteenth of
that, so a report with dozens of calls stays a few megabytes.  Chromium, Firefox and Safari 17+ play Ogg
Opus.  When PyAV or its Opus encoder is missing, :func:`encode_opus` returns None and the report links
the WAV file instead.
"""

from __future__ import annotations

import base64
import io

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm

OPUS_BITRATE = 32_000
OPUS_MIME = "audio/ogg; codecs=opus"


def encode_opus(left: Pcm, right: Pcm, rate: int = SAMPLE_RATE, bitrate: int = OPUS_BITRATE) -> bytes | None:
    """Ogg Opus bytes of a two-channel recording, or None if this machine cannot encode Opus."""
    try:
        import av
    except ImportError:
        return None
    n = max(len(left), len(right))
    if n == 0:
        return None
    stereo = np.zeros((n, 2), dtype=np.int16)
    stereo[: len(left), 0], stereo[: len(right), 1] = left, right
    buf = io.BytesIO()
    try:
        with av.open(buf, "w", format="ogg") as out:
            stream = out.add_stream("libopus", rate=rate, layout="stereo", bit_rate=bitrate)
            frame = av.AudioFrame.from_ndarray(stereo.reshape(1, -1), format="s16", layout="stereo")
            frame.sample_rate = rate
            for packet in stream.encode(frame):
                out.mux(packet)
            for packet in stream.encode(None):
                out.mux(packet)
    except (av.FFmpegError, ValueError, TypeError):
        return None
    return buf.getvalue()


def data_uri(data: bytes, mime: str = OPUS_MIME) -> str:
    return f"data:{mime.replace(' ', '')};base64,{base64.b64encode(data).decode('ascii')}"
