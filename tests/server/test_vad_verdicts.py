"""The Silero analyzer's window-by-window verdicts: when the caller last voiced, where their speech ended to
the sample, and whether an audible sound Silero has not called voice may be their next word's onset."""

from __future__ import annotations

import numpy as np
import pytest
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams

from server.vad_verdicts import ONSET_WINDOWS, VoicingSileroVAD

pytestmark = pytest.mark.models  # builds the Silero analyzer, which loads its model


def scripted_vad(monkeypatch, confidences: list[float]) -> VoicingSileroVAD:
    """The analyzer, with Silero's confidence for each window in turn given."""
    scripted = iter(confidences)
    monkeypatch.setattr(SileroVADAnalyzer, "voice_confidence", lambda self, buffer: next(scripted))
    return VoicingSileroVAD(sample_rate=16000, params=VADParams(confidence=0.7))


def test_the_analyzer_remembers_when_it_last_heard_voice(monkeypatch) -> None:
    vad = scripted_vad(monkeypatch, [0.9, 0.9, 0.1, 0.1, 0.1])
    window = np.zeros(512, np.int16).tobytes()
    for _ in range(5):
        vad.voice_confidence(window)
    assert vad.analysed == 5 * 512 and vad.last_voiced == 2 * 512
    assert vad.silent_secs() == 3 * 512 / 16000


def test_quiet_is_counted_from_the_last_audible_sample_of_speech_not_silero_s_window(
    monkeypatch,
) -> None:
    # Silero: voice, voice (its state decaying over silence), none
    vad = scripted_vad(monkeypatch, [0.9, 0.9, 0.1])
    speech = np.concatenate(
        [np.full(512, 3000, np.int16), np.full(100, 3000, np.int16), np.zeros(412, np.int16)]
    )
    vad.voice_confidence(speech[:512].tobytes())
    vad.voice_confidence(speech[512:].tobytes())  # voiced by Silero, but only 100 samples of it audible
    vad.voice_confidence(np.full(512, 3000, np.int16).tobytes())  # loud, but not voice (noise)
    assert vad.last_voiced == 1024 and vad.last_heard == 612
    assert vad.quiet_secs() == (1536 - 612) / 16000 and vad.silent_secs() == 512 / 16000


def test_an_audible_sound_not_yet_voiced_holds_for_a_few_windows_then_is_noise(monkeypatch) -> None:
    loud, quiet = np.full(512, 3000, np.int16).tobytes(), np.zeros(512, np.int16).tobytes()
    vad = scripted_vad(monkeypatch, [0.9, 0.1, *[0.1] * (ONSET_WINDOWS + 1), 0.1, 0.1, 0.9])
    vad.voice_confidence(loud)  # a word
    vad.voice_confidence(quiet)  # the pause
    assert not vad.onset_pending()
    for _ in range(ONSET_WINDOWS):
        vad.voice_confidence(loud)  # the next word's first windows, Silero not yet sure
        assert vad.onset_pending()
    vad.voice_confidence(loud)  # still not voice: a hum, not a word
    assert not vad.onset_pending()
    vad.voice_confidence(quiet)
    vad.voice_confidence(loud)
    assert vad.onset_pending()
    vad.voice_confidence(loud)  # voiced: the caller is speaking, no longer an onset
    assert not vad.onset_pending() and vad.silent_secs() == 0.0
