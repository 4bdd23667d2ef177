"""WAV files stand in for the microphone (real-time pace, any rate and channels) and the speaker."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fakes import tone
from voice.app.live.ports import (
    FRAME_NS,
    MemoryMicrophone,
    MemorySpeaker,
    WavMicrophone,
    WavSpeaker,
    load_mono_16k,
)
from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE, resample
from voice.core.clock import VirtualClock
from voice.errors import ConfigError
from voice.files import read_wav, write_wav


async def test_a_wav_microphone_delivers_each_frame_when_it_begins(tmp_path):
    path = tmp_path / "mic.wav"
    write_wav(path, [tone(70)])  # 3.5 frames: the last is padded with silence
    clock = VirtualClock(5_000)
    mic = WavMicrophone(path, clock)
    frames, times = [], []
    while (frame := await mic.read()) is not None:
        frames.append(frame)
        times.append(clock.now_ns())
    assert [len(f) for f in frames] == [FRAME_SAMPLES] * 4
    assert times == [5_000 + k * FRAME_NS for k in range(4)]
    assert np.array_equal(np.concatenate(frames)[: len(tone(70))], tone(70))


async def test_a_wav_microphone_may_add_silence_after_the_file(tmp_path):
    path = tmp_path / "mic.wav"
    write_wav(path, [tone(40)])
    mic = WavMicrophone(path, VirtualClock(), tail_s=0.1)
    n = 0
    while await mic.read() is not None:
        n += 1
    assert n == 2 + 5


def test_stereo_and_other_rates_become_16k_mono(tmp_path):
    left = tone(200, amp=8000)
    path = tmp_path / "stereo48k.wav"
    write_wav(path, [resample(left, SAMPLE_RATE, 48_000)] * 2, rate=48_000)
    pcm = load_mono_16k(path)
    assert abs(len(pcm) - len(left)) <= 1
    assert np.max(np.abs(pcm.astype(int) - left[: len(pcm)].astype(int))) < 800


def test_a_missing_or_empty_wav_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no such WAV file"):
        load_mono_16k(tmp_path / "nope.wav")
    write_wav(tmp_path / "empty.wav", [np.zeros(0, np.int16)])
    with pytest.raises(ConfigError, match="holds no audio"):
        load_mono_16k(tmp_path / "empty.wav")


async def test_a_wav_speaker_writes_what_it_played_and_the_doubles_keep_it(tmp_path):
    speaker = WavSpeaker(tmp_path / "out.wav")
    await speaker.start()
    speaker.play(tone(20))
    speaker.play(tone(40))
    await speaker.stop()
    channels, rate = read_wav(tmp_path / "out.wav")
    assert rate == SAMPLE_RATE and np.array_equal(channels[0], np.concatenate([tone(20), tone(40)]))
    double = MemorySpeaker()
    double.play(tone(20))
    await double.stop()
    assert np.array_equal(double.played, tone(20)) and not (tmp_path / "unused.wav").exists()
    mic = MemoryMicrophone(tone(30))
    assert [len(f) for f in [await mic.read(), await mic.read()]] == [FRAME_SAMPLES] * 2
    assert await mic.read() is None
