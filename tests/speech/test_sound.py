"""The sound device (voice.speech.sound): PortAudio loaded with an error saying what to do; a line played."""

import importlib.abc
import sys

import numpy as np
import pytest

from voice.core.audio import SAMPLE_RATE
from voice.errors import EngineUnavailable
from voice.speech import sound

WITHOUT = "write the speech with --out F.wav instead"


class NoLibrary(importlib.abc.MetaPathFinder):
    """What importing sounddevice does on a machine without libportaudio: an OSError."""

    def find_spec(self, name, path, target=None):
        if name == "sounddevice":
            raise OSError("PortAudio library not found")
        return None


def test_without_the_library_the_error_says_how_to_get_it_and_how_to_do_without(monkeypatch):
    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoLibrary(), *sys.meta_path])
    with pytest.raises(EngineUnavailable) as caught:
        sound.portaudio(WITHOUT)
    message = str(caught.value)
    assert "apt install libportaudio2" in message and message.endswith(WITHOUT)
    assert "PortAudio library not found" in message


class FakeSd:
    """Stands in for sounddevice: records what it was asked to play, or refuses as with no device."""

    class PortAudioError(Exception):
        pass

    def __init__(self, device: bool) -> None:
        self.device = device
        self.played: list[tuple[np.ndarray, int]] = []
        self.waited = False

    def play(self, pcm, rate):
        if not self.device:
            raise FakeSd.PortAudioError("Error querying device -1")
        self.played.append((pcm, rate))

    def wait(self):
        self.waited = True


def test_a_line_is_played_at_the_call_rate_to_its_end(monkeypatch):
    sd = FakeSd(device=True)
    monkeypatch.setattr(sound, "portaudio", lambda without: sd)
    pcm = np.ones(SAMPLE_RATE // 10, dtype=np.int16)
    sound.play(pcm, WITHOUT)
    assert [(len(p), rate) for p, rate in sd.played] == [(len(pcm), SAMPLE_RATE)] and sd.waited


def test_with_no_output_device_the_error_says_how_to_do_without(monkeypatch):
    monkeypatch.setattr(sound, "portaudio", lambda without: FakeSd(device=False))
    with pytest.raises(EngineUnavailable, match=r"no output sound device .*--out F\.wav instead"):
        sound.play(np.ones(160, dtype=np.int16), WITHOUT)
