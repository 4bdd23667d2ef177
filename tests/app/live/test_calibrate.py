"""The device round trip is found from clicks played through a loopback, to the sample."""

from __future__ import annotations

import numpy as np
import pytest

from voice.app.live.calibrate import calibrate, find_clicks
from voice.core.audio import FRAME_SAMPLES, Pcm, ms_to_samples
from voice.errors import EngineError


class Loopback:
    """A speaker heard by a microphone ``delay_ms`` after it is queued, with a little noise."""

    def __init__(self, delay_ms: float, *, connected: bool = True) -> None:
        self.delay, self.connected = ms_to_samples(delay_ms), connected
        self.buffer = np.random.default_rng(0).integers(-50, 50, 16000 * 20).astype(np.int16)
        self.read_frames = 0

    # the microphone
    async def start(self) -> None:
        return None

    async def read(self) -> Pcm | None:
        s = self.read_frames * FRAME_SAMPLES
        self.read_frames += 1
        return self.buffer[s : s + FRAME_SAMPLES]

    async def stop(self) -> None:
        return None

    # the speaker
    def play(self, pcm: Pcm) -> None:
        if self.connected:
            at = self.read_frames * FRAME_SAMPLES + self.delay
            self.buffer[at : at + len(pcm)] += pcm


@pytest.mark.parametrize("delay_ms", [0.0, 37.5, 180.0])
async def test_the_round_trip_of_a_loopback_is_measured_exactly(delay_ms):
    loop = Loopback(delay_ms)
    result = await calibrate(loop, loop)
    assert result.round_trip_ms == pytest.approx(delay_ms, abs=1 / 16)
    assert result.missed == 0 and len(result.clicks_ms) == 5


async def test_without_a_loopback_calibration_says_what_it_needs():
    loop = Loopback(50, connected=False)
    with pytest.raises(EngineError, match="needs a loopback"):
        await calibrate(loop, loop)


def test_a_click_lost_on_the_way_is_counted_as_missed():
    heard = np.zeros(10_000, np.int16)
    heard[1000 + 80] = 30000  # only the first of two clicks came back
    result = find_clicks(heard, 1000, 2, 4000)
    assert result.clicks_ms == (5.0,) and result.missed == 1


def test_a_kept_calibration_is_read_back_by_its_devices_and_a_damaged_entry_is_left_out(tmp_path):
    from voice.app.live.calibrate import (
        Calibration,
        calibration_file,
        load_calibrations,
        round_trip_for,
        save_calibration,
    )

    assert round_trip_for(tmp_path, "default -> default") is None  # no file yet
    calibration_file(tmp_path).write_text('{"usb -> usb": {"clicks_ms": [3.0]}, "hdmi -> hdmi": "x"}')
    save_calibration(tmp_path, "default -> default", Calibration(42.5, (42.0, 43.0), 1))
    assert load_calibrations(tmp_path) == {"default -> default": Calibration(42.5, (42.0, 43.0), 1)}
    assert round_trip_for(tmp_path, "default -> default") == 42.5
    assert round_trip_for(tmp_path, "usb -> usb") is None  # no round trip in it
    calibration_file(tmp_path).write_text("{not json")
    assert load_calibrations(tmp_path) == {}
