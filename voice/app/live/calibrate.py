"""The sound devices' round trip (``callsim talk --calibrate``): how late the speaker plays and the
microphone delivers, which is latency that belongs to neither the person nor the assistant.

Clicks go out through the speaker while the microphone records (a loopback: a cable, a speaker next to the
microphone, or a virtual device whose monitor is its own sink).  A click queued when microphone frame
``k`` has just been read comes back ``round trip`` after the end of that frame: the output buffer's delay
plus the input buffer's, plus any distance in the air.

What it corrects: with the person as the **caller**, the assistant's latency measured at the line is its own,
and what the person experienced is that plus the round trip; with the person as the **assistant**, the
measured latency includes the round trip, and the person's own is the measured one minus it.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from voice.app.live.ports import Microphone, Speaker
from voice.core.audio import FRAME_SAMPLES, Pcm, ms_to_samples, samples_to_ms, silence
from voice.errors import EngineError
from voice.files import atomic_write_bytes

CLICK_MS = 4.0
SETTLE_MS = 600.0  # let the streams start before the first click
GAP_MS = 500.0  # between clicks: longer than any round trip worth measuring


@dataclass(frozen=True)
class Calibration:
    round_trip_ms: float  # the median over the clicks heard
    clicks_ms: tuple[float, ...]  # each click's round trip
    missed: int  # clicks never heard (no loopback, or too quiet)

    @classmethod
    def from_json(cls, obj: Any) -> Calibration | None:
        """A kept calibration as parsed from its file; None unless it has a round trip, the one figure used
        (its clicks and misses are only shown)."""
        trip = obj.get("round_trip_ms") if isinstance(obj, dict) else None
        if not isinstance(trip, int | float):
            return None
        clicks, missed = obj.get("clicks_ms"), obj.get("missed")
        return cls(
            trip,
            tuple(c for c in clicks if isinstance(c, int | float)) if isinstance(clicks, list) else (),
            missed if isinstance(missed, int) else 0,
        )


def click() -> Pcm:
    """A short full-scale burst of 2 kHz: sharp onset, easy to find."""
    n = ms_to_samples(CLICK_MS)
    return (np.cos(2 * np.pi * 2000 * np.arange(n) / 16000) * 20000).astype(np.int16)  # loud from sample 0


def _backlog(mic: Microphone) -> int:
    """Frames the microphone has captured but not yet handed out (0 for one that does not say)."""
    return int(getattr(mic, "backlog", 0))


async def calibrate(mic: Microphone, speaker: Speaker, *, clicks: int = 5) -> Calibration:
    """Play ``clicks`` clicks and find each in what the microphone hears; a loopback is required."""
    await mic.start()
    await speaker.start()
    recorded: list[Pcm] = []
    try:

        async def read() -> None:
            frame = await mic.read()
            if frame is None:
                raise EngineError("the microphone stopped during calibration")
            recorded.append(frame)

        for _ in range(int(SETTLE_MS // 20)):
            await read()
        while _backlog(mic):  # the last frame read is the newest captured: the anchor
            await read()
        anchor = len(recorded) * FRAME_SAMPLES
        gap = ms_to_samples(GAP_MS)
        speaker.play(np.concatenate([np.concatenate([click(), silence(gap)]) for _ in range(clicks)]))
        for _ in range(int((clicks + 1) * GAP_MS // 20) + 10):
            await read()
    finally:
        await speaker.stop()
        await mic.stop()
    heard = np.concatenate(recorded).astype(np.int32)
    return find_clicks(heard, anchor, clicks, ms_to_samples(CLICK_MS) + gap)


def find_clicks(heard: Pcm | np.ndarray, anchor: int, clicks: int, spacing: int) -> Calibration:
    """Each click's onset after where it was queued (``anchor + i * spacing``), as a round trip."""
    x = np.abs(np.asarray(heard, dtype=np.int32))
    noise = float(np.percentile(x[:anchor], 99)) if anchor else 0.0
    threshold = max(2000.0, 4 * noise)
    trips: list[float] = []
    missed = 0
    for i in range(clicks):
        start = anchor + i * spacing
        window = x[start : start + spacing]
        loud = np.flatnonzero(window > threshold)
        if len(loud):
            trips.append(samples_to_ms(int(loud[0])))
        else:
            missed += 1
    if not trips:
        raise EngineError(
            "no click came back: calibration needs a loopback (the speaker heard by the microphone: a cable,"
            " or PulseAudio's monitor of the sink as the microphone)"
        )
    return Calibration(round(statistics.median(trips), 1), tuple(round(t, 1) for t in trips), missed)


def calibration_file(root: Path) -> Path:
    return root / "talk-calibration.json"


def device_key(input_device: object, output_device: object) -> str:
    """Which devices a calibration belongs to (``default`` for the system's)."""
    return f"{input_device if input_device is not None else 'default'} -> " + (
        f"{output_device if output_device is not None else 'default'}"
    )


def save_calibration(root: Path, key: str, result: Calibration) -> None:
    """Keep ``result`` for these devices (atomically, beside the others)."""
    path = calibration_file(root)
    known = load_calibrations(root)
    known[key] = result
    text = json.dumps({k: asdict(c) for k, c in known.items()}, indent=1)
    atomic_write_bytes(path, (text + "\n").encode())


def load_calibrations(root: Path) -> dict[str, Calibration]:
    """Every calibration kept, by device key ({} when none, or the file is unreadable; an entry that is not
    a calibration is left out)."""
    try:
        data = json.loads(calibration_file(root).read_text())
    except (OSError, ValueError):
        return {}
    found = {k: Calibration.from_json(v) for k, v in data.items()} if isinstance(data, dict) else {}
    return {k: c for k, c in found.items() if c is not None}


def round_trip_for(root: Path, key: str) -> float | None:
    """The kept round trip of these devices, in ms, or None."""
    kept = load_calibrations(root).get(key)
    return float(kept.round_trip_ms) if kept is not None else None
