"""The sound device, through PortAudio (sounddevice): loaded with an error that says what to do, and a line
played on it.

``callsim say --play`` plays a caller line here, and the live call's microphone and speaker
(:mod:`voice.app.live.devices`) load PortAudio through :func:`portaudio`: device access sits in the speech
room,
below ``live``, so a command that only plays a line never reaches up into the live call.
"""

from __future__ import annotations

from typing import Any

from voice.core.audio import SAMPLE_RATE, Pcm
from voice.errors import EngineUnavailable


def portaudio(without: str) -> Any:
    """The sounddevice module, or :class:`EngineUnavailable` saying how to get PortAudio, or else
    ``without`` (how to do without a device: ``write the speech with --out F.wav instead``)."""
    try:
        import sounddevice as sd
    except OSError as exc:  # sounddevice imports fine but cannot load libportaudio
        raise EngineUnavailable(
            f"PortAudio is not available ({exc}): install it (Debian: apt install libportaudio2), "
            f"or {without}"
        ) from exc
    return sd


def play(pcm: Pcm, without: str) -> None:
    """Play 16 kHz mono ``pcm`` on the default output device until it ends; a clear error, ending with
    ``without``, if PortAudio or the device is missing."""
    sd = portaudio(without)
    try:
        sd.play(pcm, SAMPLE_RATE)
        sd.wait()
    except (ValueError, sd.PortAudioError) as exc:
        raise EngineUnavailable(f"no output sound device to play on ({exc}); {without}") from exc
