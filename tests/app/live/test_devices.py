"""Sound devices through PortAudio on a virtual sound card (PulseAudio null sinks, see conftest.py)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from tests.fakes import tone
from voice.app.live.calibrate import calibrate
from voice.app.live.devices import DeviceMicrophone, DeviceSpeaker, device_info, list_devices
from voice.core.audio import ms_to_samples, silence
from voice.errors import EngineUnavailable
from voice.files import write_wav


def test_an_unknown_device_is_a_clear_error():
    with pytest.raises(EngineUnavailable, match="--list-devices"):
        device_info("input", "no-such-microphone-xyz")


async def test_the_microphone_hears_what_is_played_into_the_virtual_card(pulse, tmp_path, monkeypatch):
    monkeypatch.setenv("PULSE_SOURCE", "callsim_mic.monitor")
    assert "pulse" in list_devices()
    wav = tmp_path / "said.wav"
    write_wav(wav, [np.concatenate([silence(ms_to_samples(300)), tone(600), silence(ms_to_samples(300))])])
    mic = DeviceMicrophone("pulse")
    await mic.start()
    player = pulse.play(wav, "callsim_mic")
    frames = [await mic.read() for _ in range(100)]  # 2 s
    await mic.stop()
    await asyncio.to_thread(player.wait, 10)
    loud = [i for i, f in enumerate(frames) if f is not None and np.abs(f).max() > 2000]
    assert loud, "the tone never reached the microphone"
    assert 25 <= len(loud) <= 35  # 600 ms of tone: ~30 frames, give or take the edges


async def test_calibration_on_the_virtual_card_finds_its_round_trip(pulse, monkeypatch):
    monkeypatch.setenv("PULSE_SINK", "callsim_speaker")
    monkeypatch.setenv("PULSE_SOURCE", "callsim_speaker.monitor")  # the speaker, heard: a loopback
    result = await calibrate(DeviceMicrophone("pulse"), DeviceSpeaker("pulse"))
    print(f"virtual card round trip: {result.round_trip_ms} ms, clicks {result.clicks_ms}")
    assert result.missed == 0
    assert 0 < result.round_trip_ms < 1000
    assert max(result.clicks_ms) - min(result.clicks_ms) < 100  # one device, one latency
