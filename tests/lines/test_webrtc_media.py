"""The WebRTC line's audio: the caller's track paced by whoever pushes, the bot's frames to 16 kHz PCM."""

from __future__ import annotations

import asyncio
import fractions

import numpy as np
import pytest
from aiortc.mediastreams import MediaStreamError
from av import AudioFrame

from voice.core.audio import FRAME_SAMPLES, SAMPLE_RATE
from voice.lines.webrtc_media import SILENT_PEAK, CallerTrack, HeardAudio


async def test_the_track_hands_out_each_pushed_frame_in_order_numbered_in_samples() -> None:
    track = CallerTrack()
    waiting = asyncio.create_task(track.recv())
    await asyncio.sleep(0.01)
    assert not waiting.done()  # no clock of its own: it waits for the driver's frame
    track.push(np.full(FRAME_SAMPLES, 7, np.int16))
    track.push(np.full(FRAME_SAMPLES, 8, np.int16))
    first, second = await waiting, await track.recv()
    assert (first.pts, second.pts) == (0, FRAME_SAMPLES)
    assert first.sample_rate == SAMPLE_RATE and first.layout.name == "mono" and first.format.name == "s16"
    assert (first.to_ndarray() == 7).all() and (second.to_ndarray() == 8).all()


async def test_a_sender_that_takes_nothing_keeps_a_bounded_queue_and_a_stopped_track_ends() -> None:
    track = CallerTrack(max_queued=3)
    for i in range(5):
        track.push(np.full(FRAME_SAMPLES, i, np.int16))
    assert track.dropped == 2
    assert (await track.recv()).to_ndarray()[0, 0] == 2  # the oldest went first
    waiting = asyncio.create_task(_drain(track))
    track.stop()
    with pytest.raises(MediaStreamError):
        await asyncio.wait_for(waiting, 1)


async def _drain(track: CallerTrack) -> None:
    while True:
        await track.recv()


def opus_like(samples: np.ndarray, pts: int) -> AudioFrame:
    """A frame as aiortc's Opus decoder gives it: 48 kHz, stereo, s16."""
    stereo = np.repeat(samples.astype(np.int16), 2).reshape(1, -1)
    frame = AudioFrame.from_ndarray(stereo, format="s16", layout="stereo")
    frame.sample_rate, frame.pts, frame.time_base = 48000, pts, fractions.Fraction(1, 48000)
    return frame


def test_the_bots_frames_become_16_khz_mono_and_silence_is_left_out() -> None:
    heard = HeardAudio()
    t = np.arange(960 * 5) / 48000
    tone = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    out = [heard.convert(opus_like(tone[i : i + 960], i)) for i in range(0, len(tone), 960)]
    got = np.concatenate([x for x in out if x is not None])
    assert abs(len(got) - len(tone) // 3) <= FRAME_SAMPLES  # 48 -> 16 kHz (the resampler holds a little back)
    assert 6000 < np.abs(got[FRAME_SAMPLES:]).max() < 9000
    quiet = [heard.convert(opus_like(np.full(960, SILENT_PEAK - 1), 4800 + 960 * i)) for i in range(3)]
    assert quiet[0] is not None  # the resampler's hold-back: the tone's last samples come out first
    assert quiet[1:] == [None, None]  # then Opus's near-zero between replies is left out
    assert (heard.frames, heard.silent) == (8, 2 + sum(x is None for x in out))
